"""The matrix's databases: a fresh one of each backend per interleaving (a SQLite file, a
PostgreSQL schema, a MariaDB database), opened as a World (interleave.py)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from dbs import fresh_db_url
from interleave import World

BACKENDS = ("sqlite", "postgresql", "mariadb")


def world_url(kind: str, url: str) -> str:
    """The URL the world's Apps use: on PostgreSQL an application_name of its own (the driver
    finds B's lock waits by it); on MariaDB lock waits longer than any interleaving holds."""
    sep = "&" if "?" in url else "?"
    if kind == "postgresql":
        return f"{url}{sep}application_name=cqi_{uuid.uuid4().hex[:12]}"
    if kind == "mariadb":
        return f"{url}{sep}lock_wait_timeout=60&read_timeout=120"
    return url


@pytest.fixture
def open_world(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]
               ) -> Iterator[object]:
    """open_world(kind) -> a World on a fresh database of that backend; closed after."""
    opened: list[tuple[World, Iterator[str]]] = []

    def make(kind: str) -> World:
        urls = fresh_db_url(request, kind, tmp_path)
        world = World.open(kind, world_url(kind, next(urls)))
        opened.append((world, urls))
        return world

    yield make
    for world, urls in opened:
        world.close()
        for _ in urls:  # runs the generator's cleanup (drops the schema or database)
            pass
