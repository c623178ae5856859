"""Loads a backend's SQL: one file per query, named after the operation."""

from __future__ import annotations

import re
from importlib import resources
from types import SimpleNamespace

# A quoted literal (kept as is) or a `--` comment (dropped). The SQL files hold no dollar quotes.
_COMMENT = re.compile(r"('(?:[^']|'')*')|--[^\n]*")


def strip_comments(sql: str) -> str:
    """The statement without its `--` comments and blank lines: the comments are for readers,
    and a shorter text stays under psycopg's 4,096-character cache of converted queries (a
    longer one is parsed again on every execute)."""
    text = _COMMENT.sub(lambda m: m.group(1) or "", sql)
    return "\n".join(ln.rstrip() for ln in text.splitlines() if ln.strip())


def load_queries(package: str, schema: str | None = None) -> SimpleNamespace:
    """Every sql/NAME.sql of `package`, as attribute NAME, without comments. `{schema}` becomes
    the schema name. A file named `_PART.sql` is not a query but a fragment that several share:
    `{PART}` in a query (or in another fragment) becomes its text."""
    queries: dict[str, str] = {}
    fragments: dict[str, str] = {}
    for entry in resources.files(package).joinpath("sql").iterdir():
        if entry.name.endswith(".sql"):
            text = strip_comments(entry.read_text())
            if schema is not None:
                text = text.replace("{schema}", schema)
            if entry.name.startswith("_"):
                fragments["{" + entry.name[1:-4] + "}"] = text
            else:
                queries[entry.name[:-4]] = text
    def expand(text: str) -> str:
        # fragments may use fragments: replaced until none is left (a cycle is an error)
        for _ in range(len(fragments) + 1):
            expanded = text
            for placeholder, fragment in fragments.items():
                expanded = expanded.replace(placeholder, fragment)
            if expanded == text:
                return text
            text = expanded
        raise ValueError(f"SQL fragments of {package} use each other in a cycle")

    return SimpleNamespace(**{name: expand(text) for name, text in queries.items()})


def load_migrations(package: str, schema: str | None = None) -> list[tuple[int, str, str]]:
    """(version, name, text) for every migrations/NNN_name.sql, in version order."""
    found = []
    for entry in resources.files(package).joinpath("migrations").iterdir():
        match = re.match(r"^(\d+)_(\w+)\.sql$", entry.name)
        if match:
            text = entry.read_text()
            if schema is not None:
                text = text.replace("{schema}", schema)
            found.append((int(match.group(1)), match.group(2), text))
    return sorted(found)
