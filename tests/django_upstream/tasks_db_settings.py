"""Settings for django-tasks-db's tests/tests.py against claimq's Tasks backend (tasks_db.py
sets the database). Its sdist ships no settings: these are what its tests import and need
(its models and admin are imported by tests.py, so django_tasks_db and the admin, with what
the admin needs, are installed; `tests` holds tasks.py), with claimq's backend as TASKS'
'default'."""

import os

from claimq_upstream_settings import DATABASES as _DATABASES

_DB = os.environ.get("CLAIMQ_UPSTREAM_DB", "sqlite")
DATABASES = {"default": dict(_DATABASES["default"])}
if _DB == "sqlite":
    # A file, not Django's in-memory test database: the suite's worker (claimq.testing.drain)
    # runs the jobs on claimq's own connections, which an in-memory database does not reach.
    DATABASES["default"]["NAME"] = os.environ["CLAIMQ_UPSTREAM_SQLITE_FILE"]
    DATABASES["default"]["TEST"] = {"NAME": os.environ["CLAIMQ_UPSTREAM_SQLITE_FILE"] + ".test"}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django_tasks_db",
    "tests",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages"]},
}]
SECRET_KEY = "django_tests_secret_key"
USE_TZ = True
TASKS = {"default": {"BACKEND": "claimq_upstream.ClaimqTestBackend"}}
TEST_RUNNER = "claimq_upstream.TasksDbRunner"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
