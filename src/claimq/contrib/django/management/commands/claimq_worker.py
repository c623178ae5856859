"""`manage.py claimq_worker [APP]`: a claimq worker in this process, with Django set up (the
handlers may use the ORM). SIGTERM/SIGINT stop it gracefully; run several for more processes."""

from __future__ import annotations

import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from claimq.contrib.django import app_from_settings
from claimq.errors import ClaimqError


class Command(BaseCommand):
    help = "Run a claimq worker for settings.CLAIMQ_APP (or APP)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app", nargs="?", help="module:attribute (default: CLAIMQ_APP)")
        parser.add_argument("--queues", help="comma-separated queue names (default: all)")
        parser.add_argument("--concurrency", type=int, default=10)
        parser.add_argument("--lease", type=float)
        parser.add_argument("--poll-interval", type=float, default=1.0)
        parser.add_argument("--grace", type=float, default=30.0)
        parser.add_argument("--log-level", default="info")

    def handle(self, *args: Any, **options: Any) -> None:
        from claimq.worker import Worker

        logging.basicConfig(level=options["log_level"].upper(),
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        queues = options["queues"].split(",") if options["queues"] else None
        try:
            worker = Worker(app_from_settings(options["app"]), queues=queues,
                            concurrency=options["concurrency"], lease=options["lease"],
                            poll_interval=options["poll_interval"], grace=options["grace"])
            counters = worker.run()
        except ClaimqError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"claimq worker stopped: {counters}")
