"""The multi-process proofs run on MariaDB too: `db_url` widened to the third backend."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from dbs import fresh_db_url


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    yield from fresh_db_url(request, request.param, tmp_path)
