"""What Django's own `tests/tasks/` need to run against claimq's backend (see run.py):

- `ClaimqTestBackend`: `ClaimqBackend` with the two helpers Django's DummyBackend tests read,
  `results` (every task result the backend holds, oldest first) and `clear()`. Both go through
  Django's connection, so they see the jobs of the test's own transaction.
- `Runner`: Django's DiscoverRunner that puts claimq's tables into the test database it made
  (runtests.py replaces INSTALLED_APPS, so claimq's app and its post_migrate hook are absent).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

from django.db import connections
from django.test.runner import DiscoverRunner

from claimq.contrib.django.tasks import RUNNER, ClaimqBackend


class ClaimqTestBackend(ClaimqBackend):
    def _tables(self) -> tuple[Any, list[str]]:
        connection = connections[self.using]
        if connection.vendor in ("sqlite", "mysql"):  # tables named claimq_*
            return connection, ["claimq_jobs", "claimq_archive", "claimq_dead"]
        schema = parse_qs(urlparse(self.app.url).query).get("schema", ["claimq"])[0]
        return connection, [f"{schema}.jobs", f"{schema}.archive", f"{schema}.dead"]

    @property
    def results(self) -> list[Any]:
        connection, tables = self._tables()
        with connection.cursor() as cursor:
            ids: list[int] = []
            for table in tables:
                cursor.execute(f"SELECT id FROM {table} WHERE task = %s", [RUNNER])
                ids += [row[0] for row in cursor.fetchall()]
        ids.sort()
        return [self.get_result(str(job_id)) for job_id in ids]

    def clear(self) -> None:
        connection, tables = self._tables()
        with connection.cursor() as cursor:
            for table in tables:
                cursor.execute(f"DELETE FROM {table} WHERE task = %s", [RUNNER])


class Runner(DiscoverRunner):
    def setup_databases(self, **kwargs: Any) -> Any:
        config = super().setup_databases(**kwargs)
        backend = ClaimqBackend("migrate", {"BACKEND": "", "QUEUES": [], "OPTIONS": {}})
        backend.migrate_test_database()  # on "default", the only database tasks' tests use
        backend.close()
        return config
