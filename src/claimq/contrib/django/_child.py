"""What each worker process of `manage.py claimq_worker --processes N` imports: Django set up
(DJANGO_SETTINGS_MODULE, inherited) and `app`, the App the command ran with."""

import os

import django

django.setup()

from claimq.contrib.django import app_from_settings  # noqa: E402 - after django.setup()

app = app_from_settings(os.environ.get("CLAIMQ_DJANGO_WORKER_APP") or None)
