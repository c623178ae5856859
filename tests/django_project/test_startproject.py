"""Issue 29's last check: a fresh `django-admin startproject` with claimq's Tasks backend, set up
only as docs/frameworks.md says (Django 5.2 + the django-tasks backport): `manage.py test` of an
app that enqueues and reads the result back passes, and leaves no test database behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.timeout(120)
BIN = Path(sys.executable).parent

SETTINGS = """
INSTALLED_APPS += ["django_tasks", "claimq.contrib.django", "orders"]
TASKS = {"default": {
    "BACKEND": "claimq.contrib.django.tasks.ClaimqBackend",
    "QUEUES": ["default", "mail"],
    "OPTIONS": {"MAX_ATTEMPTS": 3},
}}
"""

TASKS = """
from django_tasks import TaskContext, task


@task(priority=5, queue_name="mail", takes_context=True)
def send_receipt(context: TaskContext, order_id: int) -> str:
    return f"receipt {order_id}, attempt {context.attempt}"
"""

TESTS = """
from django.db import transaction
from django.test import TestCase

from orders.tasks import send_receipt


class EnqueueTest(TestCase):
    def test_enqueue_and_read_back(self):
        with transaction.atomic():
            result = send_receipt.enqueue(7)
        again = send_receipt.get_result(result.id)
        self.assertEqual(again.id, result.id)
        self.assertEqual(str(again.status), "READY")
        self.assertEqual(again.args, [7])
        self.assertEqual(again.task.queue_name, "mail")
"""


def run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, env=env, timeout=60, capture_output=True,
                          text=True)


@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_fresh_startproject_manage_py_test(db: str, tmp_path: Path,
                                           request: pytest.FixtureRequest) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEST_", "CLAIMQ_", "DJANGO_"))}
    env.pop("PYTHONPATH", None)
    made = run(tmp_path, env, str(BIN / "django-admin"), "startproject", "mysite", ".")
    assert made.returncode == 0, made.stderr
    made = run(tmp_path, env, sys.executable, "manage.py", "startapp", "orders")
    assert made.returncode == 0, made.stderr
    settings = tmp_path / "mysite" / "settings.py"
    extra = SETTINGS
    test_name = f"test_cq_start_{uuid.uuid4().hex[:10]}"
    base = ""
    if db == "postgresql":
        base = request.getfixturevalue("pg_base_url")
        url = urlparse(base)
        extra += textwrap.dedent(f"""
            DATABASES = {{"default": {{
                "ENGINE": "django.db.backends.postgresql",
                "NAME": {url.path.lstrip("/")!r}, "USER": {url.username or "postgres"!r},
                "HOST": {url.hostname or "127.0.0.1"!r}, "PORT": {url.port or 5432!r},
                "TEST": {{"NAME": {test_name!r}}},
            }}}}
            """)
    settings.write_text(settings.read_text() + extra)
    (tmp_path / "orders" / "tasks.py").write_text(TASKS.lstrip())
    (tmp_path / "orders" / "tests.py").write_text(TESTS.lstrip())
    try:
        done = run(tmp_path, env, sys.executable, "manage.py", "test", "orders", "--noinput")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Ran 1 test" in done.stderr and "\nOK" in done.stderr, done.stderr
        if db == "postgresql":
            import psycopg

            with psycopg.connect(base, autocommit=True) as conn:
                left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                    (test_name,)).fetchone()
            assert left is None, f"test database {test_name} left behind"
        else:
            assert not list(tmp_path.glob("test_*")), "a test database file left behind"
    finally:
        if db == "postgresql":
            import psycopg

            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{test_name}" WITH (FORCE)')
