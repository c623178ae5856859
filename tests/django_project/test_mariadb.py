"""claimq.contrib.django on MariaDB through Django's MySQL backend with PyMySQL installed as
MySQLdb (the main venv: Django 5.2, no mysqlclient; Django 6.0 with mysqlclient is what
tests/django_upstream runs): database_url() names PyMySQL as the driver, so enqueue() and the
Tasks backend write through Django's own connection, inside its transaction. In a process of
its own: Django's settings are global."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

HERE = Path(__file__).resolve().parent

SCRIPT = r'''
import sys

import pymysql

pymysql.version_info = (2, 2, 1, "final", 0)  # Django's check asks for mysqlclient >= 2.2.1
pymysql.install_as_MySQLdb()

import django
from django.conf import settings

host, port, name = sys.argv[1], sys.argv[2], sys.argv[3]
mysql = {"ENGINE": "django.db.backends.mysql", "HOST": host, "PORT": port, "USER": "root",
         "PASSWORD": "", "NAME": name}
settings.configure(
    DATABASES={"default": mysql,
               "secret": {**mysql, "USER": "ad min", "PASSWORD": "p@ss/word"},
               "socket": {**mysql, "HOST": "/run/mysqld/mysqld.sock"}},
    INSTALLED_APPS=["django_tasks"], USE_TZ=True,
    TASKS={"default": {"BACKEND": "claimq.contrib.django.tasks.ClaimqBackend"}})
django.setup()

from django.db import connection, transaction
from django_tasks import task

from claimq import App
from claimq.contrib.django import database_url, enqueue
from claimq.errors import InvalidInput

url = database_url()
assert url == f"mysql://root@{host}:{port}/{name}?driver=pymysql", url
assert database_url("secret") == (
    f"mysql://ad%20min:p%40ss%2Fword@{host}:{port}/{name}?driver=pymysql"), database_url("secret")
for call in (lambda: database_url("socket"), lambda: database_url(schema="claimq")):
    try:
        call()
    except InvalidInput:
        pass
    else:
        raise AssertionError("accepted")

app = App(url)
app.migrate()


@app.task
def ship(n: int) -> None: ...


class Rollback(Exception):
    pass


try:
    with transaction.atomic():
        gone = enqueue(ship, n=1)
        assert app.get_job(gone, conn=connection.connection).payload == {"n": 1}
        raise Rollback
except Rollback:
    pass
kept = enqueue(ship, n=2)
assert [j.id for j in app.list_jobs("live")] == [kept], app.list_jobs("live")


@task()
def noop() -> None: ...


with transaction.atomic():  # Django's Tasks API: get_result() inside the enqueuing atomic()
    result = noop.enqueue()
    assert noop.get_result(result.id) == result
app.close()
print("ok")
'''


@pytest.mark.mariadb
def test_django_on_mariadb_through_pymysql(mariadb_server: str) -> None:
    from dbs import mariadb_database

    with mariadb_database(mariadb_server) as url:
        parsed = urlparse(url)
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, parsed.hostname or "127.0.0.1",
             str(parsed.port or 3306), parsed.path.lstrip("/")],
            cwd=HERE, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
