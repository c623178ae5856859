"""The App the browser tests' `claimq worker` processes run (its database: the environment's
CLAIMQ_DATABASE_URL)."""

from __future__ import annotations

import os
import time

from claimq import App, Permanent

app = App()


@app.task(name="step", queue="drain")
def step(n: int = 0) -> int:
    time.sleep(0.01)  # long enough for the page to see the depth fall, not rise to zero at once
    return n


@app.task(name="echo", queue="pz")
def echo(**payload: object) -> dict[str, object]:
    return payload


@app.task(name="gate", queue="wf")
def gate(path: str) -> str:
    """Fails for good until the file `path` exists (the workflow test opens it, then retries)."""
    if not os.path.exists(path):
        raise Permanent(f"the gate {path} is closed")
    return "open"


@app.task(name="hold", queue="hold")
def hold(path: str) -> str:
    """Runs until the file `path` exists (the workers test watches it run, then opens it)."""
    while not os.path.exists(path):
        time.sleep(0.05)
    return "released"
