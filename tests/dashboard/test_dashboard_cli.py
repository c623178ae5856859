"""`claimq dashboard` refuses to start unsafely (the browser tests run it for real)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claimq import App

_NEXT_TO_PYTHON = Path(sys.executable).with_name("claimq")
CLAIMQ = str(_NEXT_TO_PYTHON) if _NEXT_TO_PYTHON.exists() else shutil.which("claimq") or "claimq"


def run(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAIMQ_")}
    return subprocess.run([CLAIMQ, "--database", url, "dashboard", *args], env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/claimq.db"
    with App(url) as app:
        app.migrate()
    return url


@pytest.mark.parametrize(("args", "message"), [
    ((), "needs a read or admin token"),
    (("--allow-anonymous", "--host", "0.0.0.0"), "needs a loopback --host"),
    (("--admin-token", "short"), "at least 16 characters"),
    (("--admin-token", "x" * 20, "--read-token", "x" * 20), "must differ"),
])
def test_unsafe_or_bad_settings_are_refused(url: str, args: tuple[str, ...],
                                            message: str) -> None:
    result = run(url, "--port", "0", *args)
    assert result.returncode == 2, result
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
    assert result.stdout == ""
