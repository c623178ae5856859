"""`manage.py claimq_worker [APP]`: a claimq worker with Django set up (the handlers may use
the ORM), with `claimq worker`'s options: the same ones, built from its definition
(claimq.cli.worker.WORKER_OPTIONS: names, defaults, help, and the same checks and messages),
run by the same code (claimq.cli.worker.start_worker). SIGTERM/SIGINT stop it gracefully; with
`--processes N` a supervisor runs N worker processes, each of which sets Django up."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

import click
import click.core
from django.core.management.base import BaseCommand, CommandError, CommandParser

from claimq.contrib.django import app_from_settings
from claimq.errors import ClaimqError

# each spawned process of --processes N imports this: it sets Django up and finds the App the
# way this command did (CLAIMQ_DJANGO_WORKER_APP)
CHILD_APP_PATH = "claimq.contrib.django._child:app"
_UNSET: object = getattr(click.core, "UNSET", object())  # click 8.2+


def _converter(option: click.Option) -> Callable[[str], Any]:
    """argparse's `type` for `option`: click's own conversion and message."""

    def convert(text: str) -> Any:
        try:
            return option.type.convert(text, option, None)
        except click.BadParameter as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    return convert


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """`claimq worker`'s options (every one but --database: Django's settings give it)."""
    from claimq.cli.worker import WORKER_OPTIONS

    context = click.Context(click.Command("worker"))
    for option in WORKER_OPTIONS:
        default = option.get_default(context)
        if default is _UNSET:  # click's marker for an option without a default
            default = None
        help_text = option.help or ""
        if option.show_default and default is not None and not option.is_flag:
            help_text += f" [default: {default}]"
        if option.is_flag:
            parser.add_argument(*option.opts, dest=option.name, action="store_true",
                                help=help_text)
            continue
        choices = getattr(option.type, "choices", None)
        parser.add_argument(
            *option.opts, dest=option.name, type=_converter(option), default=default,
            metavar=option.metavar or (None if choices else option.type.name.upper()),
            help=help_text + (f" ({', '.join(choices)})" if choices else ""),
        )


class Command(BaseCommand):
    help = "Run a claimq worker for settings.CLAIMQ_APP (or APP), with claimq worker's options."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app", nargs="?", help="module:attribute (default: CLAIMQ_APP, "
                            "else the App of the project's claimq Tasks backend)")
        add_worker_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        from claimq.cli._common import CliError, _classify
        from claimq.cli.worker import WORKER_OPTIONS, start_worker

        worker_options = {o.name: options[o.name] for o in WORKER_OPTIONS if o.name}
        # spawned processes (--processes N) set Django up and find the App as this one did
        os.environ["CLAIMQ_DJANGO_WORKER_APP"] = options["app"] or ""
        try:
            app = app_from_settings(options["app"])
            code = start_worker(app, CHILD_APP_PATH, **worker_options)
        except (ClaimqError, CliError) as exc:  # the message and exit code of `claimq worker`
            message, code = _classify(exc) or (str(exc), 1)
            raise CommandError(message, returncode=code) from exc
        self.stdout.write(f"claimq worker stopped (exit {code})")
        if code:
            raise SystemExit(code)
