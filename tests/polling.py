"""Waiting on the database in tests: poll with a deadline, and read the three job tables."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
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


@contextlib.contextmanager
def worker_process(argv: Sequence[str], cwd: Path, env: dict[str, str], log_path: Path
                   ) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process in a session of its own, its output in `log_path`. When the block ends
    it must still be running; it is stopped with SIGTERM and must exit 0. Its process group
    is killed whatever happens."""
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield worker
            assert worker.poll() is None, log_path.read_text()
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(30) == 0, log_path.read_text()
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
