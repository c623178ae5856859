"""claimq in a Django project. `claimq.contrib.django.tasks.ClaimqBackend` is a backend for
Django's Tasks framework (Django 6, or the django-tasks backport); this module is the way in
without it.

Add `"claimq.contrib.django"` to INSTALLED_APPS and name your App in settings::

    # settings.py
    CLAIMQ_APP = "shop.jobs:app"

    # shop/jobs.py
    from claimq import App
    from claimq.contrib.django import database_url
    app = App(database_url())  # claimq's tables in Django's own database

- `enqueue(task, **kwargs)` queues a job inside Django's transaction on that database (inside
  `transaction.atomic()`, the job exists if and only if the block commits; outside, in one of
  its own), on SQLite, PostgreSQL and MariaDB.
- `manage.py claimq_migrate` creates claimq's tables; `manage.py claimq_worker` runs a worker.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, unquote, urlparse

from claimq.errors import InvalidInput
from claimq.task import Task

DEFAULT_DB_ALIAS = "default"


def database_url(using: str = DEFAULT_DB_ALIAS, *, schema: str | None = None) -> str:
    """A claimq URL for Django's database `using` (SQLite: its file; PostgreSQL: the same
    database, claimq's tables in `schema`, default "claimq"; MariaDB: the same database,
    claimq's tables named claimq_*)."""
    from django.db import connections

    connection = connections[using]
    conf = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(conf["NAME"])
        if name == ":memory:" or name.startswith("file:"):
            raise InvalidInput("claimq needs Django's SQLite database to be a file")
        return f"sqlite:///{os.path.abspath(name)}"
    if connection.vendor == "postgresql":
        user = quote(str(conf.get("USER") or ""), safe="")
        password = conf.get("PASSWORD")
        auth = f"{user}:{quote(str(password), safe='')}@" if password else (
            f"{user}@" if user else "")
        host = str(conf.get("HOST") or "")
        port = f":{conf['PORT']}" if conf.get("PORT") else ""
        url = f"postgresql://{auth}{host}{port}/{quote(str(conf['NAME']), safe='')}"
        return url + (f"?schema={schema}" if schema else "")
    if connection.vendor == "mysql":  # MariaDB: claimq's tables (claimq_*) in the same database
        if schema:
            raise InvalidInput("a schema is PostgreSQL's: on MariaDB claimq's tables are "
                               "claimq_* in Django's database")
        return _mysql_url(conf)
    raise InvalidInput("claimq runs on Django's SQLite, PostgreSQL or MariaDB, not "
                       f"{connection.vendor}")


def _mysql_url(conf: dict[str, Any]) -> str:
    """claimq's `mysql://` URL for Django's MySQL/MariaDB settings, with the driver Django's
    connection uses (mysqlclient, or PyMySQL installed as MySQLdb), so that enqueue(conn=...)
    gets a connection of the backend's own driver."""
    from claimq.backends.mysql._url import mysqldb_driver

    host = str(conf.get("HOST") or "127.0.0.1")
    if host.startswith("/"):
        raise InvalidInput("claimq connects to MariaDB over TCP: set Django's HOST and PORT, "
                           f"not a socket ({host})")
    user = quote(str(conf.get("USER") or ""), safe="")
    password = conf.get("PASSWORD")
    auth = f"{user}:{quote(str(password), safe='')}@" if password else (
        f"{user}@" if user else "")
    port = f":{conf['PORT']}" if conf.get("PORT") else ""
    driver = mysqldb_driver()
    return f"mysql://{auth}{host}{port}/{quote(str(conf['NAME']), safe='')}?driver={driver}"


def enqueue(task: Task[Any, Any], /, *, using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> int:
    """`task.enqueue(**kwargs)` written through Django's connection `using`, inside its current
    transaction: in a `transaction.atomic()` block that rolls back, the job never exists.
    `task.with_options(...)` sets job options. The task's App must use that same database."""
    from django.db import connections, transaction

    if not isinstance(task, Task):
        raise InvalidInput(f"enqueue() takes a claimq Task, got {task!r}")
    with transaction.atomic(using=using):
        connection = connections[using]
        connection.ensure_connection()
        _check_same_database(task.app.url, connection)
        return task.enqueue(conn=connection.connection, **kwargs)


def _same_database(url: str, connection: Any) -> bool:
    """Whether the App at `url` uses Django's `connection` as its settings are now, or the
    test database Django's test runner (or pytest-django) made from it since."""
    parsed = urlparse(url)
    name = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite" and parsed.scheme == "sqlite":
        path = unquote(parsed.path[1:])
        return (os.path.realpath(path) == os.path.realpath(name)
                or _test_database(connection, os.path.basename(path)))
    if connection.vendor == "postgresql" and parsed.scheme in ("postgresql", "postgres"):
        db = unquote(parsed.path.lstrip("/"))
        return db == name or _test_database(connection, db)
    if connection.vendor == "mysql" and parsed.scheme in ("mysql", "mariadb"):
        db = unquote(parsed.path.lstrip("/"))
        return db == name or _test_database(connection, db)
    return False


def _test_database(connection: Any, original: str) -> bool:
    """Whether Django's `connection` is now on the test database made from `original`."""
    name = str(connection.settings_dict["NAME"])
    test_name = (connection.settings_dict.get("TEST") or {}).get("NAME")
    if test_name and name == str(test_name):
        return True
    if connection.vendor == "sqlite":
        return name.startswith("file:memorydb_")  # Django's in-memory test database
    return name.startswith(f"test_{original}")  # pytest-django's xdist adds a suffix


def _check_same_database(url: str, connection: Any) -> None:
    """A job written into a database the App's workers do not read would never run."""
    if _same_database(url, connection):
        return
    raise InvalidInput(f"the task's App ({url.split('@')[-1]}) does not use Django's "
                       f"{connection.alias!r} database: build it with "
                       "App(claimq.contrib.django.database_url())")


def app_from_settings(path: str | None = None) -> Any:
    """The App named by `path` or settings.CLAIMQ_APP (`module:attribute`), else that of the
    project's claimq Django Tasks backend. Every such backend is set up first, so that the App
    knows the task that runs Django's tasks."""
    from django.conf import settings

    from claimq._processes import import_app

    path = path or getattr(settings, "CLAIMQ_APP", None)
    backends = _task_backends()
    if path:
        return import_app(path)
    if backends:
        return backends[0].app
    raise InvalidInput("name the claimq App: settings.CLAIMQ_APP = 'module:attribute', pass it "
                       "to the command, or configure claimq.contrib.django.tasks.ClaimqBackend "
                       "in settings.TASKS")


def _task_backends() -> list[Any]:
    """The project's claimq Django Tasks backends (none without a Tasks framework)."""
    from django.conf import settings

    configured = getattr(settings, "TASKS", None) or {}
    ours = [alias for alias, conf in configured.items()
            if conf.get("BACKEND") == "claimq.contrib.django.tasks.ClaimqBackend"]
    if not ours:
        return []
    try:
        from django.tasks import task_backends
    except ImportError:
        from django_tasks import task_backends
    return [task_backends[alias] for alias in ours]


__all__ = ["app_from_settings", "database_url", "enqueue"]
