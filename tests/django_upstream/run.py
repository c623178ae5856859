"""Django's own `tests/tasks/` against claimq's Django Tasks backend (issue 29).

Run by `make test-django-upstream` with the interpreter of .venv-django6 (Django 6.0, Python
3.12); tests/django_project/test_django_upstream.py runs that target under `make test`.

1. Django's sdist of the installed version is downloaded once (`pip download`, from the
   configured index) into .django-upstream/ and its tests/ extracted afresh for each run.
2. The adaptations below, each with its reason, are applied to tests/tasks/ (each must match
   exactly: a new Django release that changes the text fails here instead of testing less).
3. Every test of tests/tasks/ runs through Django's tests/runtests.py, except those named in
   excluded.txt, each with its reason; on SQLite (in-memory, Django's default for its tests),
   on PostgreSQL and on MariaDB (Django's MySQL backend, through mysqlclient).
4. The last line printed is a JSON summary; the exit status is 0 only if every run was OK and
   ran exactly the tests it was given.
"""

from __future__ import annotations

import argparse
import ast
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / ".django-upstream"
EXCLUDED = HERE / "excluded.txt"

BACKEND = "claimq_upstream.ClaimqTestBackend"
TO_DATABASE = ("a database backend reads and writes the test database: SimpleTestCase forbids "
               "queries, TestCase gives each test its own rolled-back transaction")
AS_BACKEND = ("assertIsInstance(task_backends['default'], DummyBackend) checks the backend "
              "under test")
FROM_ASYNC = ("a synchronous call that reads the database, made from an async test, runs "
              "through sync_to_async as Django requires (else SynchronousOnlyOperation, as "
              "for the ORM; the test's async half checks aget_result()/arefresh() as is)")
SYNC_TO_ASYNC = "from asgiref.sync import sync_to_async\n"
# (file, test function or None for the whole file, old text, new text, how many times it
# occurs there, why)
ADAPTATIONS: list[tuple[str, str | None, str, str, int, str]] = [
    ("test_tasks.py", None, '"django.tasks.backends.dummy.DummyBackend"', f'"{BACKEND}"', 1,
     "the backend under test in place of the DummyBackend (the 'default' alias)"),
    ("test_tasks.py", None, "from django.tasks.backends.dummy import DummyBackend\n",
     "from claimq_upstream import ClaimqTestBackend as DummyBackend\n" + SYNC_TO_ASYNC, 1,
     AS_BACKEND),
    ("test_tasks.py", None, "from django.test import SimpleTestCase, override_settings",
     "from django.test import TestCase, override_settings", 1, TO_DATABASE),
    ("test_tasks.py", None, "class TaskTestCase(SimpleTestCase):",
     "class TaskTestCase(TestCase):", 1, TO_DATABASE),
    ("test_tasks.py", "test_enqueue_task_async", "default_task_backend.results",
     "await sync_to_async(lambda: default_task_backend.results)()", 1, FROM_ASYNC),
    ("test_tasks.py", "test_refresh_result", "result.refresh()",
     "await sync_to_async(result.refresh)()", 1, FROM_ASYNC),
    ("test_tasks.py", "test_get_missing_result", "test_tasks.noop_task.get_result(",
     "await sync_to_async(test_tasks.noop_task.get_result)(", 1, FROM_ASYNC),
    ("test_dummy_backend.py", None, '"django.tasks.backends.dummy.DummyBackend"',
     f'"{BACKEND}"', 4, "the backend under test in place of the DummyBackend"),
    ("test_dummy_backend.py", None, "from django.tasks.backends.dummy import DummyBackend\n",
     "from claimq_upstream import ClaimqTestBackend as DummyBackend\n" + SYNC_TO_ASYNC, 1,
     AS_BACKEND),
    ("test_dummy_backend.py", None,
     "from django.test import SimpleTestCase, TransactionTestCase, override_settings",
     "from django.test import TestCase, TransactionTestCase, override_settings", 1,
     TO_DATABASE),
    ("test_dummy_backend.py", None, "class DummyBackendTestCase(SimpleTestCase):",
     "class DummyBackendTestCase(TestCase):", 1, TO_DATABASE),
    ("test_dummy_backend.py", "test_enqueue_task_async", "default_task_backend.results",
     "await sync_to_async(lambda: default_task_backend.results)()", 1, FROM_ASYNC),
    ("test_dummy_backend.py", "test_get_missing_result", "default_task_backend.get_result(",
     "await sync_to_async(default_task_backend.get_result)(", 1, FROM_ASYNC),
]


def adapt(path: Path, function: str | None, old: str, new: str, count: int) -> None:
    text = path.read_text()
    start, end = 0, len(text)
    if function:
        lines = text.splitlines(keepends=True)
        found = [n for n in ast.walk(ast.parse(text))
                 if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == function]
        if len(found) != 1:
            raise SystemExit(f"adaptation: tasks/{path.name} has {len(found)} {function}()")
        start = sum(map(len, lines[:found[0].lineno - 1]))
        end = sum(map(len, lines[:found[0].end_lineno]))
    part = text[start:end]
    if part.count(old) != count:
        raise SystemExit(f"adaptation no longer applies to tasks/{path.name} "
                         f"{function or ''}: {old!r} occurs {part.count(old)} times, "
                         f"expected {count}")
    path.write_text(text[:start] + part.replace(old, new) + text[end:])


def excluded(path: Path = EXCLUDED) -> dict[str, tuple[str, str]]:
    """excluded.txt: `[section]` lines, then `label: reason` lines (# comments)."""
    out: dict[str, tuple[str, str]] = {}
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        label, _, reason = line.partition(":")
        if not reason.strip() or not section:
            raise SystemExit(f"{path.name}: {raw!r} needs a section and a reason")
        out[label.strip()] = (section, reason.strip())
    return out


def sdist(version: str, project: str = "django") -> Path:
    """The sdist, downloaded by one run at a time (make test runs the databases side by side)."""
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _sdist(project, version)


def _sdist(project: str, version: str, again: bool = True) -> Path:
    for stem in {project, project.capitalize(), project.replace("-", "_")}:
        if (CACHE / f"{stem}-{version}.tar.gz").exists():
            return CACHE / f"{stem}-{version}.tar.gz"
    if not again:
        raise SystemExit(f"pip download left no sdist of {project} {version} in {CACHE}")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", ":all:", "-d", str(CACHE), f"{project}=={version}"],
                   check=True, timeout=600)
    return _sdist(project, version, again=False)


def read(archive: Path, version: str) -> dict[str, bytes]:
    """What runtests.py needs of Django's tests/ for tasks/ (the rest is 20 MB)."""
    prefix = f"{archive.name.split('-')[0]}-{version}/tests/"
    needed = tuple(prefix + name for name in ("runtests.py", "urls.py", "tasks/"))
    with tarfile.open(archive) as tar:
        return {m.name[len(prefix):]: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar if m.isfile() and m.name.startswith(needed)}


def extract(files: dict[str, bytes], into: Path) -> Path:
    """Those files afresh, with the adaptations applied."""
    shutil.rmtree(into, ignore_errors=True)
    tests = into / "tests"
    for name, data in files.items():
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        (tests / name).write_bytes(data)
    for file, function, old, new, count, _why in ADAPTATIONS:
        adapt(tests / "tasks" / file, function, old, new, count)
    return tests


def labels(tests: Path) -> list[str]:
    """Every test method of tests/tasks/test_*.py, as a runtests.py label."""
    out = []
    for path in sorted((tests / "tasks").glob("test_*.py")):
        module = f"tasks.{path.stem}"
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                out += [f"{module}.{node.name}.{item.name}" for item in node.body
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                        and item.name.startswith("test")]
    return out


RUNTESTS = ["runtests.py", "--settings=claimq_upstream_settings", "--parallel=1"]


def run(db: str, tests: Path, chosen: list[str], command: list[str] = RUNTESTS,
        env_extra: dict[str, str] | None = None, show: bool = True) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update({"PYTHONPATH": str(HERE), "CLAIMQ_UPSTREAM_DB": db, "PYTHONUNBUFFERED": "1",
                "CLAIMQ_UPSTREAM_PG_NAME": f"cq_upstream_{os.getpid()}",
                "CLAIMQ_UPSTREAM_MARIADB_NAME": f"cq_upstream_{os.getpid()}",
                **(env_extra or {})})
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *command, "--noinput", "-v", "2", *chosen],
        cwd=tests, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    ran = re.search(r"^Ran (\d+) tests?", output, re.M)
    bad = sorted(set(re.findall(r"^(?:FAIL|ERROR): \w+ \(([\w.]+)\)", output, re.M)))
    counts = {k: int(v) for k, v in re.findall(r"(failures|errors|skipped|expected failures|"
                                               r"unexpected successes)=(\d+)", output)}
    result: dict[str, object] = {
        "ran": int(ran.group(1)) if ran else 0, "returncode": done.returncode,
        "failed": bad, "counts": counts,
        "seconds": round(time.monotonic() - started, 1)}
    ok = (done.returncode == 0 and result["ran"] == len(chosen) and not bad and not counts)
    result["ok"] = ok
    if show and not ok:
        print(output[-20000:], file=sys.stderr)
    result["output"] = output
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", action="append", choices=["sqlite", "postgresql", "mariadb"])
    args = parser.parse_args()
    import django

    version = django.__version__
    files = read(sdist(version), version)
    skip = excluded()
    summary: dict[str, object] = {"django": version, "runs": {}}
    for db in args.db or ["sqlite", "postgresql", "mariadb"]:
        tests = extract(files, CACHE / f"run-{db}")
        every = labels(tests)
        stale = sorted(set(skip) - set(every))
        if stale:
            raise SystemExit(f"excluded.txt names tests Django {version} does not have: {stale}")
        chosen = [label for label in every if label not in skip]
        summary["total"], summary["chosen"] = len(every), len(chosen)
        summary["excluded"] = {section: sum(1 for s, _ in skip.values() if s == section)
                               for section in sorted({s for s, _ in skip.values()})}
        summary["runs"][db] = run(db, tests, chosen)  # type: ignore[index]
        del summary["runs"][db]["output"]  # type: ignore[index]
        print(f"{db}: {summary['runs'][db]}", flush=True)  # type: ignore[index]
    print(json.dumps(summary))
    return 0 if all(r["ok"] for r in summary["runs"].values()) else 1  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
