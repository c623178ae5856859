"""Fixtures of the worker tests: `spawn_worker` starts real worker processes on the test's
database and kills whatever is left of them when the test ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from worker_harness import WorkerProcess


@pytest.fixture
def spawn_worker(tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def spawn(url: str, **options: Any) -> WorkerProcess:
        proc = WorkerProcess(url, tmp_path / f"worker-{len(started)}.log", **options)
        started.append(proc)
        return proc

    yield spawn
    for proc in started:
        proc.kill()
        # Shown only when the test failed (pytest captures teardown output).
        print(f"--- {proc.log_path.name} (pid {proc.pid}) ---\n{proc.log()[-6000:]}")
