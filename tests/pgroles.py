"""Least-privilege PostgreSQL roles for tests: a fresh schema migrated by its owner, and one
new login role per kind (`App.grant`, what `claimq grant ROLE --as KIND` runs; a role given
several kinds has the grants of each), dropped with the schema afterwards."""

from __future__ import annotations

import contextlib
import shutil
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

_NEXT_TO_PYTHON = Path(sys.executable).with_name("claimq")
CLAIMQ = str(_NEXT_TO_PYTHON) if _NEXT_TO_PYTHON.exists() else shutil.which("claimq") or "claimq"


class Roles:
    """`url(name)`: the schema as the role `name` (see least_privilege); `owner_url`: as its
    owner, who migrated it."""

    def __init__(self, base: str, schema: str, roles: Mapping[str, str]) -> None:
        self.base = base
        self.schema = schema
        self.roles = dict(roles)
        self.owner_url = f"{base}?schema={schema}"

    def url(self, name: str) -> str:
        rest = self.base.split("://", 1)[1].split("@", 1)[1]
        return f"postgresql://{self.roles[name]}@{rest}?schema={self.schema}"


@contextlib.contextmanager
def least_privilege(base: str, kinds: Mapping[str, Sequence[str]]) -> Iterator[Roles]:
    """A migrated schema and, per entry of `kinds` (name -> the grant kinds it gets), a role."""
    import psycopg

    from claimq import App

    schema = f"t_{uuid.uuid4().hex[:12]}"
    names = {name: f"cq_{name}_{uuid.uuid4().hex[:8]}" for name in kinds}
    with psycopg.connect(base, autocommit=True) as conn:
        for role in names.values():
            conn.execute(f'CREATE ROLE "{role}" LOGIN')
    roles = Roles(base, schema, names)
    try:
        # App.grant, what `claimq grant` runs (tests/cli covers the command), in this process:
        # a `claimq` process per grant cost seconds per test.
        owner = App(roles.owner_url)
        try:
            owner.migrate()
            for name, grants in kinds.items():
                for kind in grants:
                    owner.grant(names[name], kind)  # type: ignore[arg-type]
        finally:
            owner.close()
        yield roles
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            for role in names.values():
                conn.execute(f'DROP OWNED BY "{role}"')
                conn.execute(f'DROP ROLE "{role}"')
