"""Fixtures of the CLI tests (helpers live in cli_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import Cli


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Cli:
    """`claimq --database <fresh database of each backend>`; not migrated (use `app` for that)."""
    work = tmp_path / "cwd"
    work.mkdir()
    return Cli(db_url, work)
