"""The docs' examples run on every backend they claim: SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from dbs import fresh_db_url
from docs_runner import BACKENDS


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh, empty database on each backend the docs claim, MariaDB too."""
    yield from fresh_db_url(request, request.param, tmp_path)
