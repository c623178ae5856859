"""Requests to the test project through Django's test client, in a process of their own:
`python drive.py METHOD PATH [key=value ...]` prints {"status": code, "body": json}."""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
django.setup()

from django.test import Client  # noqa: E402

method, path, *fields = sys.argv[1:]
client = Client()
data = dict(f.split("=", 1) for f in fields)
response = client.post(path, data) if method == "POST" else client.get(path)
print(json.dumps({"status": response.status_code, "body": response.json()}))
