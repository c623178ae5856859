"""The Django test project (tests/django_project) on SQLite and PostgreSQL, in real processes:
`manage.py migrate` and `claimq_migrate`, a view that enqueues inside `transaction.atomic()`
(committed, and rolled back: that job never exists), a `manage.py claimq_worker` process that
runs the task through the ORM, and the result read back through the project's views."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from polling import archived, dead, live, wait_until, worker_process

from claimq import App

PROJECT = Path(__file__).resolve().parent
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[dict[str, str],
                                                                            str]]:
    """The environment the project's processes run in, and the claimq URL of its database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEST_", "CLAIMQ_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONUNBUFFERED": "1",
                "TEST_DJANGO_DB": request.param})
    env.pop("PYTHONPATH", None)
    if request.param == "sqlite":
        path = tmp_path / "django.db"
        env["TEST_DJANGO_SQLITE"] = str(path)
        yield env, f"sqlite:///{path}"
        return
    import psycopg

    base = request.getfixturevalue("pg_base_url")
    parsed = urlparse(base)
    suffix = uuid.uuid4().hex[:10]
    django_schema, claimq_schema = f"dj_{suffix}", f"cq_{suffix}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {django_schema}")
    env.update({"TEST_DJANGO_PG_NAME": parsed.path.lstrip("/"),
                "TEST_DJANGO_PG_HOST": parsed.hostname or "127.0.0.1",
                "TEST_DJANGO_PG_PORT": str(parsed.port or 5432),
                "TEST_DJANGO_PG_USER": parsed.username or "postgres",
                "TEST_DJANGO_PG_SCHEMA": django_schema, "TEST_CLAIMQ_SCHEMA": claimq_schema})
    try:
        yield env, f"{base}?schema={claimq_schema}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            for schema in (django_schema, claimq_schema):
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=PROJECT, env=env, timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def request(env: dict[str, str], method: str, path: str, **fields: str) -> Any:
    out = run(env, "drive.py", method, path, *(f"{k}={v}" for k, v in fields.items()))
    return json.loads(out.strip().splitlines()[-1])


def test_enqueue_in_djangos_transaction_and_a_claimq_worker(
    project: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, url = project
    run(env, "manage.py", "migrate", "--verbosity", "0")
    assert "claimq migrations applied: [1," in run(env, "manage.py", "claimq_migrate")

    with App(url) as app:
        rolled_back = request(env, "POST", "/orders/", item="tea", fail="1")
        assert rolled_back["status"] == 409 and rolled_back["body"]["rolled_back_job"] > 0
        assert (live(app), archived(app), dead(app)) == ([], [], []), \
            "the job enqueued in the rolled-back atomic() block never existed"

        placed = request(env, "POST", "/orders/", item="cake")
        assert placed["status"] == 200
        order, job_id = placed["body"]["order"], placed["body"]["job"]
        assert request(env, "GET", f"/orders/{order}/")["body"]["status"] == "placed"
        [job] = live(app)
        assert (job.id, job.task, job.payload, job.idempotency_key) == (
            job_id, "shop.jobs.fulfil", {"order_id": order}, f"order-{order}")

        log_path = tmp_path / "worker.log"
        with worker_process([sys.executable, "manage.py", "claimq_worker", "--concurrency",
                             "2", "--poll-interval", "0.05", "--grace", "5"], PROJECT, env,
                            log_path) as worker:
            wait_until(lambda: archived(app) or worker.poll() is not None, 60,
                       "the job to be archived")
        log = log_path.read_text()
        assert re.search(r"worker \S+ stopped: \{", log) and "claimq worker stopped (exit 0)" \
            in log, log

    shown = request(env, "GET", f"/jobs/{job_id}/")
    assert shown == {"status": 200, "body": {
        "status": "succeeded", "result": {"order": order, "item": "cake", "attempt": 1}}}
    assert request(env, "GET", f"/orders/{order}/")["body"]["status"] == "fulfilled"


def test_outside_atomic_and_an_app_on_another_database(project: tuple[dict[str, str], str],
                                                       tmp_path: Path) -> None:
    env, url = project
    run(env, "manage.py", "claimq_migrate")
    code = (
        "import django, sys; django.setup()\n"
        "from claimq import App\n"
        "from claimq.contrib.django import enqueue\n"
        "from claimq.errors import InvalidInput\n"
        "from shop.jobs import fulfil\n"
        "print('enqueued:', enqueue(fulfil, order_id=5))\n"  # autocommit: its own transaction
        f"other = App('sqlite:///{tmp_path}/other.db')\n"
        "task = other.task(name='t')(lambda: None)\n"
        "try:\n"
        "    enqueue(task)\n"
        "except InvalidInput as exc:\n"
        "    print('refused:', exc)\n"
    )
    out = run(env, "-c", code)
    assert "refused: the task's App (sqlite:" in out and "does not use Django's 'default'" in out
    job_id = int(out.split("enqueued: ", 1)[1].split()[0])
    with App(url) as app:
        assert [(j.id, j.payload) for j in live(app)] == [(job_id, {"order_id": 5})]


def test_django_tasks_backend(project: tuple[dict[str, str], str], tmp_path: Path) -> None:
    """Django's Tasks API (the django-tasks backport on Django 5.2) on ClaimqBackend: enqueue
    inside atomic() (rolled back: no job), priorities, queues, run_after and takes_context
    mapped, a claimq_worker process runs the tasks, results read back through Django's API."""
    env, url = project
    run(env, "manage.py", "migrate", "--verbosity", "0")
    run(env, "manage.py", "claimq_migrate")
    with App(url) as app:
        rolled_back = request(env, "POST", "/tasks/orders/", item="tea", fail="1")
        assert rolled_back["status"] == 409
        assert (live(app), archived(app), dead(app)) == ([], [], [])

        placed = request(env, "POST", "/tasks/orders/", item="cake")["body"]
        order, result_id, notify_id = placed["order"], placed["result"], placed["notify"]
        assert placed["status"] == "READY"
        failing = request(env, "POST", "/tasks/explode/")["body"]["result"]
        later = request(env, "POST", "/tasks/later/")["body"]
        jobs = {str(j.id): j for j in live(app)}
        assert set(jobs) == {result_id, notify_id, failing, later["result"]}
        assert (jobs[result_id].queue, jobs[result_id].priority, jobs[result_id].tags) == (
            "default", 0, ("shop.tasks.fulfil_later",))
        assert (jobs[notify_id].queue, jobs[notify_id].priority) == ("mail", 7)
        assert jobs[later["result"]].priority == -3
        assert jobs[later["result"]].run_at.isoformat() == later["run_after"]  # type: ignore[union-attr]
        shown = request(env, "GET", f"/tasks/results/{result_id}/")["body"]
        assert (shown["status"], shown["args"], shown["attempts"]) == ("READY", [order], 0)

        log_path = tmp_path / "worker.log"
        with worker_process([sys.executable, "manage.py", "claimq_worker", "--poll-interval",
                             "0.05", "--grace", "5"], PROJECT, env, log_path) as worker:
            wait_until(lambda: len(archived(app)) + len(dead(app)) == 3
                       or worker.poll() is not None, 60, "the three due tasks to finish")

    done = request(env, "GET", f"/tasks/results/{result_id}/")["body"]
    assert (done["status"], done["return_value"], done["attempts"]) == (
        "SUCCESSFUL", {"order": order, "item": "cake"}, 1)
    noted = request(env, "GET", f"/tasks/results/{notify_id}/")["body"]
    assert noted["return_value"] == {"order": order, "attempt": 1, "id": notify_id}
    failed = request(env, "GET", f"/tasks/results/{failing}/")["body"]
    assert (failed["status"], failed["errors"], failed["attempts"]) == (
        "FAILED", ["builtins.ValueError"], 1)
    assert request(env, "GET", f"/tasks/results/{later['result']}/")["body"]["status"] == "READY"
    assert request(env, "GET", "/tasks/results/999999/")["status"] == 404
    status = request(env, "GET", f"/orders/{order}/")["body"]["status"]
    assert status == "done by task"



@pytest.mark.parametrize("app", ["named", "own"])
@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_manage_py_test(request: pytest.FixtureRequest, tmp_path: Path, db: str,
                        app: str) -> None:
    """Issue 29: `manage.py test` of an app that enqueues and reads results (shop/tests.py),
    with the project's App (CLAIMQ_APP) or the backend's own, on SQLite (Django's in-memory
    test database) and PostgreSQL (a test database Django makes, then drops: nothing of
    claimq's may still hold it). Passes, and leaves no test database behind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEST_", "CLAIMQ_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONUNBUFFERED": "1",
                "TEST_DJANGO_DB": db})
    env.pop("PYTHONPATH", None)
    if app == "own":
        env["TEST_DJANGO_OWN_APP"] = "1"
    command = [sys.executable, "manage.py", "test", "shop", "--noinput"]
    if db == "sqlite":
        env["TEST_DJANGO_SQLITE"] = str(tmp_path / "django.db")
        done = subprocess.run(command, cwd=PROJECT, env=env, timeout=90, capture_output=True,
                              text=True)
        assert done.returncode == 0 and "\nOK" in done.stderr, done.stderr
        assert not (tmp_path / "django.db").exists(), "the real database was never touched"
        return
    import psycopg

    base = request.getfixturevalue("pg_base_url")
    parsed = urlparse(base)
    test_name = f"test_claimq_{uuid.uuid4().hex[:10]}"
    env.update({"TEST_DJANGO_PG_NAME": parsed.path.lstrip("/"),
                "TEST_DJANGO_PG_HOST": parsed.hostname or "127.0.0.1",
                "TEST_DJANGO_PG_PORT": str(parsed.port or 5432),
                "TEST_DJANGO_PG_USER": parsed.username or "postgres",
                "TEST_DJANGO_PG_TEST_NAME": test_name,
                "TEST_CLAIMQ_SCHEMA": f"cq_{uuid.uuid4().hex[:10]}"})
    try:
        done = subprocess.run(command, cwd=PROJECT, env=env, timeout=90, capture_output=True,
                              text=True)
        assert done.returncode == 0 and "\nOK" in done.stderr, done.stderr
        with psycopg.connect(base, autocommit=True) as conn:
            left = conn.execute("SELECT datname FROM pg_database WHERE datname = %s",
                                (test_name,)).fetchall()
        assert left == [], "Django could not drop its test database"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{test_name}" WITH (FORCE)')


def test_claimq_worker_takes_claimq_workers_options(project: tuple[dict[str, str], str],
                                                   tmp_path: Path) -> None:
    """Issue 29: `manage.py claimq_worker` takes `claimq worker`'s options: two worker
    processes (each sets Django up) with JSON log lines run a Django task through the ORM."""
    env, url = project
    run(env, "manage.py", "migrate", "--verbosity", "0")
    run(env, "manage.py", "claimq_migrate")
    placed = request(env, "POST", "/tasks/orders/", item="cake")["body"]
    with App(url) as app:
        log_path = tmp_path / "worker.log"
        with worker_process([sys.executable, "manage.py", "claimq_worker", "--processes", "2",
                             "--log-format", "json", "--log-level", "INFO", "--prefetch", "0",
                             "--poll-interval", "0.05", "--grace", "5s", "--lease", "1m"],
                            PROJECT, env,
                            log_path) as worker:
            def started() -> int:
                return log_path.read_text().count('"event": "worker.started"')

            wait_until(lambda: (len(archived(app)) == 2 and started() == 2)
                       or worker.poll() is not None, 60,
                       "two worker processes, and the order's two tasks done")
    text = log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert len({line["worker_id"] for line in lines if line.get("event") == "worker.started"}
               ) == 2, text
    # Django's own log line, from the task_finished signal sent in the worker
    assert any(line["logger"] == "django_tasks" and line["message"] ==
               f"Task id={placed['result']} path=shop.tasks.fulfil_later state=SUCCESSFUL"
               for line in lines), text
    assert "claimq worker stopped (exit 0)" in log_path.read_text()
    done = request(env, "GET", f"/tasks/results/{placed['result']}/")["body"]
    assert (done["status"], done["return_value"]) == (
        "SUCCESSFUL", {"order": placed["order"], "item": "cake"})


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", help_text))


def test_claimq_worker_has_exactly_claimq_workers_options(tmp_path: Path) -> None:
    """Issue 28: `manage.py claimq_worker` has every option of `claimq worker` (but --database:
    Django's settings give it), built from the one definition, so they take the same values
    (durations such as 30s) and refuse bad ones with the same messages and exit code."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEST_", "CLAIMQ_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "project.settings", "TEST_DJANGO_DB": "sqlite",
                "TEST_DJANGO_SQLITE": str(tmp_path / "django.db"), "COLUMNS": "200"})
    env.pop("PYTHONPATH", None)
    claimq = [str(Path(sys.executable).with_name("claimq"))]
    cli_help = subprocess.run([*claimq, "worker", "--help"], env=env, capture_output=True,
                              text=True, timeout=60, check=True).stdout
    django_help = run(env, "manage.py", "claimq_worker", "--help")
    django_own = _options(run(env, "manage.py", "help", "migrate"))  # Django's common options
    expected = _options(cli_help) - {"--database", "--help"}
    assert expected >= {"--concurrency", "--lease", "--metrics-token", "--log-level"}
    assert _options(django_help) - django_own - {"--help"} == expected, django_help
    for bad, message in ((["--concurrency", "abc"], "must be a whole number of at least 1"),
                         (["--lease", "-3"], "must be > 0, got -3"),
                         (["--grace", "soon"], "must be a duration such as 30s"),
                         (["--log-level", "loud"], "loud")):
        django = subprocess.run([sys.executable, "manage.py", "claimq_worker", *bad],
                                cwd=PROJECT, env=env, capture_output=True, text=True,
                                timeout=60)
        cli = subprocess.run([*claimq, "worker", "x:app", *bad], env=env, capture_output=True,
                             text=True, timeout=60)
        assert (django.returncode, cli.returncode) == (2, 2), (django, cli)
        assert message in django.stderr and message in cli.stderr, (django.stderr, cli.stderr)
