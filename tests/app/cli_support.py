"""The real `claimq` command, for app tests that check what it shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLAIMQ = str(Path(sys.executable).with_name("claimq"))


def claimq_cli(url: str, *args: str) -> str:
    env = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200"}
    done = subprocess.run([CLAIMQ, "--database", url, *args], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout
