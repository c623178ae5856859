"""Settings for Django's runtests.py with claimq's Tasks backend (run.py sets the database)."""

import os

_DB = os.environ.get("CLAIMQ_UPSTREAM_DB", "sqlite")
if _DB == "sqlite":
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}
elif _DB == "mariadb":
    # Django's MySQL backend (mysqlclient); runtests.py makes (and drops) test_<NAME>
    DATABASES = {"default": {
        "ENGINE": "django.db.backends.mysql",
        "NAME": os.environ.get("CLAIMQ_UPSTREAM_MARIADB_NAME", "claimq_upstream"),
        "HOST": os.environ.get("CLAIMQ_UPSTREAM_MARIADB_HOST", "127.0.0.1"),
        "PORT": os.environ.get("CLAIMQ_UPSTREAM_MARIADB_PORT", "3306"),
        "USER": os.environ.get("CLAIMQ_UPSTREAM_MARIADB_USER", "root"),
        "PASSWORD": os.environ.get("CLAIMQ_UPSTREAM_MARIADB_PASSWORD", ""),
        "OPTIONS": {"charset": "utf8mb4"}}}
else:
    # runtests.py makes (and drops) test_<NAME>; NAME itself need not exist
    DATABASES = {"default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("CLAIMQ_UPSTREAM_PG_NAME", "claimq_upstream"),
        "HOST": os.environ.get("CLAIMQ_UPSTREAM_PG_HOST", "127.0.0.1"),
        "PORT": os.environ.get("CLAIMQ_UPSTREAM_PG_PORT", "5432"),
        "USER": os.environ.get("CLAIMQ_UPSTREAM_PG_USER", "postgres")}}

SECRET_KEY = "django_tests_secret_key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = False
TASKS = {"default": {"BACKEND": "claimq_upstream.ClaimqTestBackend"}}
TEST_RUNNER = "claimq_upstream.Runner"
