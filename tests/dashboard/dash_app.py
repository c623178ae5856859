"""The App the browser tests' `claimq worker` processes run (its database: the environment's
CLAIMQ_DATABASE_URL)."""

from __future__ import annotations

import time

from claimq import App

app = App()


@app.task(name="step", queue="drain")
def step(n: int = 0) -> int:
    time.sleep(0.01)  # long enough for the page to see the depth fall, not rise to zero at once
    return n


@app.task(name="echo", queue="pz")
def echo(**payload: object) -> dict[str, object]:
    return payload
