"""The layers: nothing above claimq.backends imports a database driver or probes a backend with
getattr (or hasattr). Everything above speaks the Backend Protocol: its methods and its
capability flags."""

from __future__ import annotations

import ast
from pathlib import Path

import claimq

SRC = Path(claimq.__file__).parent
DRIVERS = {"sqlite3", "psycopg", "psycopg_pool", "psycopg2", "pymysql", "mariadb", "MySQLdb"}


def _modules() -> list[Path]:
    backends = SRC / "backends"
    return sorted(p for p in SRC.rglob("*.py") if backends not in p.parents)


def _driver_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.split(".")[0] in DRIVERS]
    return found


def _backend_probes(tree: ast.AST) -> list[tuple[int, str]]:
    """getattr/hasattr(<anything naming a backend>, "name", ...) calls: (line, probed name)."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr") and node.args
                and "backend" in ast.unparse(node.args[0]).lower()):
            name = node.args[1] if len(node.args) > 1 else None
            probed = name.value if isinstance(name, ast.Constant) else ast.unparse(name or node)
            found.append((node.lineno, str(probed)))
    return found


def test_the_walk_finds_the_upper_layers() -> None:
    names = {p.relative_to(SRC).as_posix() for p in _modules()}
    assert {"app.py", "cli/__init__.py", "worker.py", "_worker/dbcall.py"} <= names
    assert not any(n.startswith("backends/") for n in names)


def test_no_driver_import_above_the_backends() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for path in _modules()
        for line, name in _driver_imports(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == []


def test_no_getattr_probe_of_a_backend_above_the_backends() -> None:
    offenders = sorted(
        f"{path.relative_to(SRC).as_posix()}:{line} getattr(…, {name!r})"
        for path in _modules()
        for line, name in _backend_probes(ast.parse(path.read_text(), str(path)))
    )
    assert offenders == [], "use the Backend Protocol (methods, capabilities) instead"


DIALECTS = {"sqlite", "postgresql", "postgres", "mysql", "mariadb"}


def _dialect_branches(tree: ast.AST) -> list[tuple[int, str]]:
    """Comparisons of a backend's `kind` with a dialect's name: (line, the comparison)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = {c.value for side in sides for c in ast.walk(side)
                 if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        kinds = any(isinstance(n, ast.Attribute) and n.attr == "kind"
                    for side in sides for n in ast.walk(side))
        if kinds and names & DIALECTS:
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_dialect_branch_above_the_backends() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line} {text}"
        for path in _modules()
        for line, text in _dialect_branches(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == [], "ask the backend (a method or a capability), not its kind"


def test_the_checks_catch_what_they_look_for() -> None:
    sample = ast.parse(
        "import sqlite3\nfrom psycopg import errors\nimport claimq.backends\n"
        "x = getattr(app.backend, 'open_async', None)\ny = getattr(obj, 'name')\n"
        "z = hasattr(rt.backend, 'listen_connection')\n"
    )
    assert _driver_imports(sample) == [(1, "sqlite3"), (2, "psycopg")]
    assert _backend_probes(sample) == [(4, "open_async"), (6, "listen_connection")]
    branches = ast.parse(
        "if app.backend.kind == 'sqlite': pass\n"
        "if self.kind in ('sqlite', 'mysql'): pass\n"
        "if r.kind == 'queue': pass\n"
    )
    assert [line for line, _ in _dialect_branches(branches)] == [1, 2]
