from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ClaimqConfig(AppConfig):
    name = "claimq.contrib.django"
    label = "claimq"
    verbose_name = "claimq"

    def ready(self) -> None:
        # sent for apps with a models module (models.py is empty for this)
        post_migrate.connect(_migrate_test_database, sender=self,
                             dispatch_uid="claimq.contrib.django.migrate_test_database")


def _migrate_test_database(using: str, **kwargs: Any) -> None:
    """The test runner (or pytest-django) migrated a fresh test database: claimq's tables go
    into it too, for each claimq Tasks backend on it (`manage.py claimq_migrate` makes them in
    the real database; a `migrate` there leaves them alone)."""
    from django.db import connections

    from claimq.contrib.django import _task_backends, _test_database

    connection = connections[using]
    for backend in _task_backends():
        if backend.using == using and _test_database(connection, ""):
            backend.migrate_test_database()
