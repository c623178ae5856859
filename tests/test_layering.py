"""The layers: nothing above claimq.backends imports a database driver or probes a backend with
getattr (or hasattr). Everything above speaks the Backend Protocol: its methods and its
capability flags. And the modules import each other in one direction: no import circle, not
even one held apart by where an import line sits (inside a function, at the bottom of a file);
the public App does not import the worker's private package, and neither that package nor the
CLI reaches into an App's private attributes."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import claimq

SRC = Path(claimq.__file__).parent
DRIVERS = {"sqlite3", "psycopg", "psycopg_pool", "psycopg2", "pymysql", "mariadb", "MySQLdb"}


# Imports under `if TYPE_CHECKING:` (annotations only, never run) that still close a circle: each
# goes when its annotation names a Protocol or a lower module instead. The list can only shrink:
# an entry that no longer closes a circle fails the test.
TYPE_ONLY_TIES: set[tuple[str, str]] = {
    ("claimq._results", "claimq.app"),
    ("claimq.hooks", "claimq.worker"),
    ("claimq.schedules", "claimq.app"),
    ("claimq.task", "claimq.app"),
}


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


# -- imports in one direction ------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def _claimq_imports(tree: ast.AST, module: str, package: bool,
                    known: set[str]) -> list[tuple[int, str, bool]]:
    """Every import of a claimq module in `tree`, wherever it sits (top, function, class, try):
    (line, the module imported, whether it is under `if TYPE_CHECKING:`). `from a import b`
    names the submodule a.b where there is one, else a."""
    type_only = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if package else module.split(".")[:-1]
                here = here[: len(here) - node.level + 1]
                base = ".".join(here + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target and target != module:
                found.append((node.lineno, target, id(node) in type_only))
    return found


def _import_graph(*, type_only: bool) -> dict[str, dict[str, int]]:
    """module -> {module it imports: line}; imports under TYPE_CHECKING only with type_only."""
    return {name: dict(edges) for name, edges in _read_imports(type_only).items()}


@functools.cache
def _read_imports(type_only: bool) -> dict[str, dict[str, int]]:
    paths = {_module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(), str(path))
        edges = graph.setdefault(name, {})
        for line, target, typing_only in _claimq_imports(
                tree, name, path.name == "__init__.py", set(paths)):
            if type_only or not typing_only:
                edges.setdefault(target, line)
    return graph


def _circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle (a path that comes back to its start) per group of modules tied by one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while (w := stack.pop()) != v:
                group.add(w)
            if group:
                groups.append(group | {v})

    for v in sorted(graph):
        if v not in index:
            visit(v)
    circles = []
    for group in groups:
        start = min(group)
        path, seen = [start], {start}
        while True:  # walk inside the group until a module comes back
            nxt = min(w for w in graph[path[-1]] if w in group)
            if nxt in seen:
                circles.append(path[path.index(nxt):] + [nxt])
                break
            path.append(nxt)
            seen.add(nxt)
    return circles


def _say(graph: dict[str, dict[str, int]], circle: list[str]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(circle, circle[1:], strict=False)
                       ) + f" -> {circle[-1]}"


def test_no_import_circle_not_even_inside_functions() -> None:
    graph = _import_graph(type_only=False)
    assert [_say(graph, c) for c in _circles(graph)] == []


def test_no_import_circle_counting_type_only_imports_beyond_the_known_ones() -> None:
    graph = _import_graph(type_only=True)
    for a, b in TYPE_ONLY_TIES:
        assert b in graph[a], f"{a} no longer imports {b}: remove it from TYPE_ONLY_TIES"
        del graph[a][b]
    assert [_say(graph, c) for c in _circles(graph)] == []
    for a, b in TYPE_ONLY_TIES:
        graph[a][b] = 0
        assert _circles(graph), f"{a} -> {b} closes no circle: remove it from TYPE_ONLY_TIES"
        del graph[a][b]


def test_the_app_does_not_import_the_workers_private_package() -> None:
    graph = _import_graph(type_only=True)
    assert [m for m in graph["claimq.app"] if m.startswith("claimq._worker")] == []


def _private_app_attributes(tree: ast.AST) -> list[tuple[int, str]]:
    """`app._x`, `self.app._x`, `App._x`: a private attribute of an App (line, source)."""
    return [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and ast.unparse(node.value).rpartition(".")[2].lower() in ("app", "_app")
    ]


def test_the_worker_package_and_the_cli_use_no_private_attribute_of_an_app() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line} {source}"
        for folder in ("_worker", "cli")
        for path in sorted((SRC / folder).rglob("*.py"))
        for line, source in _private_app_attributes(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == [], "use App's public methods, or a private module both depend on"


def test_the_import_checks_catch_what_they_look_for() -> None:
    known = {"claimq", "claimq.a", "claimq.b", "claimq.pkg", "claimq.pkg.c"}
    sample = ast.parse(
        "from typing import TYPE_CHECKING\nfrom claimq.a import thing\nimport claimq.pkg.c\n"
        "if TYPE_CHECKING:\n    from claimq.b import B\n"
        "def f():\n    from claimq.pkg import c\n    from .. import a\n"
    )
    assert _claimq_imports(sample, "claimq.pkg.c", False, known) == [
        (2, "claimq.a", False), (5, "claimq.b", True), (8, "claimq.a", False)]
    assert _circles({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}}) == [
        ["a", "b", "c", "a"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []
    sample = ast.parse("app._hooks\nself.app._pruner_id\nApp._spec(x)\napp.tasks\n"
                       "self._app\nflight._x\napp.__class__\n")
    assert _private_app_attributes(sample) == [
        (1, "app._hooks"), (2, "self.app._pruner_id"), (3, "App._spec")]


# -- tools stay outside the library ------------------------------------------------------------

BENCHMARK = {"bench", "benchmarks", "claimq.bench"}


def _benchmark_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """Imports of the benchmark (benchmarks/bench.py, importable as `bench`; or the package
    module it once was), and module names handed to importlib or __import__ as strings."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] if node.level == 0 else []
            if node.module == "claimq" and node.level == 0:
                names += [f"claimq.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Call) and node.args
              and ast.unparse(node.func) in ("importlib.import_module", "import_module",
                                             "__import__")
              and isinstance(node.args[0], ast.Constant)):
            names = [str(node.args[0].value)]
        else:
            continue
        found += [(node.lineno, n) for n in names
                  if n in BENCHMARK or n.split(".")[0] in ("bench", "benchmarks")
                  or n.startswith("claimq.bench.")]
    return found


def test_the_runtime_package_does_not_import_the_benchmark() -> None:
    """The benchmark is a tool beside the library (benchmarks/bench.py), outside its import path:
    no module of the package (backends included) imports it, no `claimq.bench` exists, and the
    CLI does not load it as a command."""
    from claimq.cli import OPTIONAL_COMMANDS

    offenders = [
        f"{path.relative_to(SRC).as_posix()}:{line} imports {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _benchmark_imports(ast.parse(path.read_text(), str(path)))
    ]
    assert offenders == []
    assert not (SRC / "bench.py").exists() and not (SRC / "bench").exists()
    assert "bench" not in OPTIONAL_COMMANDS  # the CLI imports claimq.<name> for each of these
    assert (SRC.parents[1] / "benchmarks" / "bench.py").exists(), "where the benchmark lives"
    sample = ast.parse("import bench\nfrom bench import NOOP\nfrom claimq import bench\n"
                       "importlib.import_module('claimq.bench')\nimport benchmarks.bench\n"
                       "import claimq.benchmarks_doc\nfrom claimq import app\nimport benchy\n")
    assert sorted(line for line, _ in _benchmark_imports(sample)) == [1, 2, 3, 4, 5]
