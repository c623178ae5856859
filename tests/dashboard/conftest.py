"""The dashboard's tests run on MariaDB too: this widens the `db_url` fixture (the root
conftest's covers SQLite and PostgreSQL)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from dbs import fresh_db_url


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """A fresh, empty database on each backend, MariaDB too."""
    yield from fresh_db_url(request, request.param, tmp_path)
