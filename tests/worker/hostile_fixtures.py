"""Fixtures of the hostile-handler suite and the runtime regressions, loaded by the test
modules through `pytest_plugins = ["hostile_fixtures"]`: migrated Apps with the hostile tasks
(hostile_harness.prepare) on each backend, and real hostile_app worker processes that are killed
(whole process group) when the test ends, whatever happened."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hostile_harness import HostileWorker, drop_schema, prepare

from claimq import App


@pytest.fixture
def happ(db_url: str) -> Iterator[App]:
    """prepare() on each backend (a fresh SQLite file, a fresh PostgreSQL schema)."""
    instance = prepare(db_url)
    yield instance
    instance.close()


@pytest.fixture
def sqlite_happ(tmp_path: Path) -> Iterator[App]:
    instance = prepare(f"sqlite:///{tmp_path}/hostile.db")
    yield instance
    instance.close()


@pytest.fixture
def pg_happ(pg_base_url: str) -> Iterator[App]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    instance = prepare(f"{pg_base_url}?schema={schema}")
    yield instance
    instance.close()
    drop_schema(pg_base_url, schema)


@pytest.fixture
def spawn_hostile(tmp_path: Path) -> Iterator[Callable[..., HostileWorker]]:
    started: list[HostileWorker] = []

    def spawn(url: str, env: dict[str, str] | None = None, prefix: Sequence[str] = (),
              **options: Any) -> HostileWorker:
        proc = HostileWorker(url, tmp_path / f"hostile-{len(started)}.log", env, prefix,
                             **options)
        started.append(proc)
        return proc

    yield spawn
    for proc in started:
        proc.kill()
        print(f"--- {proc.log_path.name} (pid {proc.pid}) ---\n{proc.log()[-6000:]}")


