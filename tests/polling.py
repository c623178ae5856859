"""Waiting on the database in tests: poll with a deadline, and read the three job tables."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from claimq import App, Job

ALL = 100_000
T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.05
) -> T:
    """Poll until `predicate()` is truthy; return its value, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """`call()` in a daemon thread, started: its return value lands in out["result"], what it
    raised in out["error"] (join the thread first)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def live(app: App) -> list[Job]:
    return app.list_jobs("live", limit=ALL)


def archived(app: App) -> list[Job]:
    return app.list_jobs("archive", limit=ALL)


def dead(app: App) -> list[Job]:
    return app.list_jobs("dead", limit=ALL)


def finished_ids(app: App) -> set[int]:
    return {j.id for j in archived(app)} | {j.id for j in dead(app)}
