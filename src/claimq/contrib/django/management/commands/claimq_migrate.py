"""`manage.py claimq_migrate [APP]`: create or update claimq's tables."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from claimq.contrib.django import app_from_settings


class Command(BaseCommand):
    help = "Apply claimq's schema migrations to the database of settings.CLAIMQ_APP."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("app", nargs="?", help="module:attribute (default: CLAIMQ_APP)")

    def handle(self, *args: Any, **options: Any) -> None:
        applied = app_from_settings(options["app"]).migrate()
        self.stdout.write(f"claimq migrations applied: {applied or 'none (up to date)'}")
