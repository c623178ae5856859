"""The root `main` group of the `claimq` command line: one-line `error: …` messages, the exit
codes of the epilog, and the commands of other modules loaded lazily (OPTIONAL_COMMANDS).
Each noun module of this package adds its commands to `main`; `claimq.cli` imports them all."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import click
from click.core import ParameterSource

from claimq import __version__
from claimq.app import DEFAULT_URL
from claimq.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _classify,
    _say_error,
    _State,
)

EPILOG = """\b
Exit codes:
  0  success (a worker: stopped by SIGTERM/SIGINT after its grace period)
  1  failure: job or queue not found or not in the needed state, nothing to
     change, database unreachable or not migrated (run `claimq migrate`),
     declined prompt, a port already in use (dashboard --port, worker
     --metrics-port), a worker stopped by an error restarting cannot cure
  2  bad input: unknown command or option, invalid value, bad JSON, an APP
     that does not load (also in a worker process); nothing was written
130  interrupted: Ctrl-C, or a worker's second SIGTERM/SIGINT (it stopped
     at once and left its running jobs to their leases)
\b
The database comes from --database (before or after the command), else
$CLAIMQ_DATABASE_URL, else sqlite:///claimq.db. Durations take 30s, 5m, 2h,
1d, 1h30m or plain seconds.
Every listing takes --json (datetimes as ISO 8601 strings)."""


OPTIONAL_COMMANDS = ("demo",)
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_Never", (click.UsageError,), {})
)


def _usage_message(exc: click.UsageError) -> str:
    """`--count must be a whole number from 1 to 10000000, got 'abc'` rather than click's
    `Invalid value for '--count': …`; other usage errors as click words them."""
    if type(exc) is click.BadParameter and exc.param is not None:
        param = exc.param
        if isinstance(param, click.Option):
            name = max(param.opts, key=len)
        else:
            name = (param.metavar or param.human_readable_name).upper()
        return f"{name} {exc.message}"
    return exc.format_message()


DATABASE_HELP = ("sqlite:///path.db, postgresql://user@host/db?schema=claimq or "
                 "mysql://user@host/db (env: CLAIMQ_DATABASE_URL).")


def _set_database(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """--database given after a command (`claimq stats --database URL`): as if given before."""
    if value is None:
        return
    state = ctx.find_object(_State)
    if state is None:  # pragma: no cover - the root group's callback made it
        ctx.ensure_object(_State).url = value
        return
    state.url, state.explicit = value, True


def _database_option() -> click.Option:
    return click.Option(
        ["--database"], metavar="URL", expose_value=False, callback=_set_database,
        help="The database, as before the command: " + DATABASE_HELP,
    )


def with_database_option(command: click.Command) -> click.Command:
    """Adds --database to `command` and, for a group, to every command under it (once; not to
    a command that has a --database of its own, such as `claimq demo`)."""
    if not any("--database" in getattr(p, "opts", ()) for p in command.params):
        command.params.append(_database_option())
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            with_database_option(sub)
    return command


class _Main(click.Group):
    """The root group: one-line `error: …` messages and the exit codes of the epilog.

    Commands that live in other modules (`claimq demo`) are loaded lazily, so that no other
    command pays for their imports: the first time a command name is not found, or the
    commands are listed (--help, completion), each module `claimq.<name>` of OPTIONAL_COMMANDS
    is imported; one that exposes a click command as `command` is added under `<name>`, and
    one may instead decorate its function with `@main.command()`. A module that fails to
    import (ImportError) is skipped silently. The benchmark is no command: it is a tool beside
    the library (benchmarks/bench.py).
    """

    _optional_loaded = False

    def _load_optional_commands(self) -> None:
        if self._optional_loaded:
            return
        self._optional_loaded = True
        for name in OPTIONAL_COMMANDS:
            try:
                module = importlib.import_module(f"claimq.{name}")
            except ImportError:
                continue
            command = getattr(module, "command", None)
            if isinstance(command, click.Command) and name not in self.commands:
                self.add_command(command, name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and not self._optional_loaded:
            self._load_optional_commands()
            command = super().get_command(ctx, cmd_name)
        # --database is taken after the command too: `claimq stats --database URL`.
        return None if command is None else with_database_option(command)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_optional_commands()
        return super().list_commands(ctx)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # `claimq` or `claimq jobs` alone: the help text
            exc.show()
            sys.exit(EXIT_USAGE)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see `{exc.ctx.command_path} --help`)"
            _say_error(_usage_message(exc) + hint)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            _say_error(exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            interrupted = isinstance(exc.__context__, KeyboardInterrupt)
            _say_error("interrupted" if interrupted else "aborted")
            sys.exit(130 if interrupted else EXIT_FAILED)
        except Exception as exc:
            verdict = _classify(exc)
            if verdict is None:
                raise
            _say_error(verdict[0])
            sys.exit(verdict[1])
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


@click.group(
    cls=_Main,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--database",
    "database",
    metavar="URL",
    envvar="CLAIMQ_DATABASE_URL",
    default=DEFAULT_URL,
    show_default=True,
    help=DATABASE_HELP + " Also accepted after the command.",
)
@click.version_option(__version__, "--version", prog_name="claimq")
@click.pass_context
def main(ctx: click.Context, database: str) -> None:
    """claimq: a job queue whose coordination boundary is a SQL database."""
    source = ctx.get_parameter_source("database")
    ctx.obj = _State(url=database, explicit=source == ParameterSource.COMMANDLINE)
