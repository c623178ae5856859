"""`manage.py claimq_worker [APP]`: a claimq worker with Django set up (the handlers may use
the ORM), with `claimq worker`'s options. SIGTERM/SIGINT stop it gracefully; with
`--processes N` a supervisor runs N worker processes, each of which sets Django up."""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from claimq.contrib.django import app_from_settings
from claimq.errors import ClaimqError

LOG_LEVELS = ("debug", "info", "warning", "error")


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = "Run a claimq worker for settings.CLAIMQ_APP (or APP), with claimq worker's options."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app", nargs="?", help="module:attribute (default: CLAIMQ_APP, "
                            "else the App of the project's claimq Tasks backend)")
        parser.add_argument("--queues", help="comma-separated queue names (default: all)")
        parser.add_argument("--concurrency", type=int, default=10,
                            help="jobs run at once per process")
        parser.add_argument("--prefetch", type=int, default=None,
                            help="jobs claimed ahead of free slots, at most")
        parser.add_argument("--processes", type=int, default=1, help="worker processes")
        parser.add_argument("--lease", type=_positive, help="lease length in seconds")
        parser.add_argument("--poll-interval", type=_positive, default=1.0)
        parser.add_argument("--grace", type=_non_negative, default=30.0)
        parser.add_argument("--log-level", choices=LOG_LEVELS, type=str.lower, default="info")
        parser.add_argument("--log-format", choices=("text", "json"), default="text")
        parser.add_argument("--metrics-port", type=int, default=None,
                            help="serve Prometheus /metrics on PORT (process i on PORT+i)")
        parser.add_argument("--metrics-host", default="127.0.0.1")
        parser.add_argument("--metrics-no-token", action="store_true",
                            help="serve /metrics without a token (else CLAIMQ_METRICS_TOKEN)")

    def handle(self, *args: Any, **options: Any) -> None:
        from claimq._processes import setup_logging
        from claimq.worker import Worker, run_worker

        if options["concurrency"] < 1 or options["processes"] < 1:
            raise CommandError("--concurrency and --processes take 1 or more")
        setup_logging(options["log_level"].upper(), options["log_format"])
        queues = ([q.strip() for q in options["queues"].split(",")] if options["queues"]
                  else None)
        worker_options = {
            "queues": queues, "concurrency": options["concurrency"],
            "prefetch": options["prefetch"], "lease": options["lease"],
            "poll_interval": options["poll_interval"], "grace": options["grace"],
            "metrics_port": options["metrics_port"], "metrics_host": options["metrics_host"],
            "metrics_no_token": options["metrics_no_token"]}
        try:
            app = app_from_settings(options["app"])
            if options["processes"] == 1:
                counters = Worker(app, **worker_options).run()
                self.stdout.write(f"claimq worker stopped: {counters}")
                return
            # each spawned process imports claimq.contrib.django._child, which sets Django up
            # and finds the App the way this command did
            os.environ["CLAIMQ_DJANGO_WORKER_APP"] = options["app"] or ""
            code = run_worker(app, processes=options["processes"],
                              app_path="claimq.contrib.django._child:app",
                              log_format=options["log_format"], **worker_options)
        except ClaimqError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"claimq workers stopped (exit {code})")
        if code:
            raise SystemExit(code)
