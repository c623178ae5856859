"""A minimal Django project using claimq, on SQLite or PostgreSQL as the environment says:
TEST_DJANGO_DB=sqlite (TEST_DJANGO_SQLITE: the file) or postgresql (TEST_DJANGO_PG_NAME,
_HOST, _PORT, _USER and TEST_DJANGO_PG_SCHEMA for Django's own tables)."""

import os

SECRET_KEY = "claimq-test-only"
DEBUG = False
ALLOWED_HOSTS = ["*"]
USE_TZ = True
ROOT_URLCONF = "project.urls"
INSTALLED_APPS = ["django_tasks", "claimq.contrib.django", "shop"]
MIDDLEWARE: list[str] = []
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
CLAIMQ_APP = "shop.jobs:app"
TASKS = {"default": {"BACKEND": "claimq.contrib.django.tasks.ClaimqBackend",
                     "QUEUES": ["default", "mail"]}}

if os.environ["TEST_DJANGO_DB"] == "sqlite":
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3",
                             "NAME": os.environ["TEST_DJANGO_SQLITE"]}}
else:
    DATABASES = {"default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ["TEST_DJANGO_PG_NAME"],
        "HOST": os.environ["TEST_DJANGO_PG_HOST"],
        "PORT": os.environ["TEST_DJANGO_PG_PORT"],
        "USER": os.environ["TEST_DJANGO_PG_USER"],
        # `manage.py test` (TEST_DJANGO_PG_SCHEMA empty): Django's tables in the test
        # database's public schema, the test database named by TEST_DJANGO_PG_TEST_NAME
        "OPTIONS": ({"options": f"-c search_path={os.environ['TEST_DJANGO_PG_SCHEMA']}"}
                    if os.environ.get("TEST_DJANGO_PG_SCHEMA") else {}),
        "TEST": {"NAME": os.environ.get("TEST_DJANGO_PG_TEST_NAME")},
    }}

if os.environ.get("TEST_DJANGO_OWN_APP"):  # a fresh project's way: no App of its own to name
    del CLAIMQ_APP
    TASKS["default"]["OPTIONS"] = {"SCHEMA": os.environ.get("TEST_CLAIMQ_SCHEMA")}
