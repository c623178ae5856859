"""django-tasks-db's own test suite (its sdist's tests/tests.py) against claimq's Django Tasks
backend (issue 29): the part that tests a database backend's behaviour.

Run by `make test-tasks-db-upstream` with the interpreter of .venv-django6 (Django 6.0, which
django-tasks-db 0.13 supports); tests/django_project/test_django_upstream.py runs it under
`make test`.

1. django-tasks-db's sdist (DJANGO_TASKS_DB, pinned: the adaptations below must match its text)
   is downloaded once (`pip download`, from the configured index, under run.py's file lock)
   into .django-upstream/ and extracted afresh for each run. It ships tests/tests.py but not
   the `tests.tasks` module nor settings that it imports: tasks_db_tasks.py (the tasks its
   assertions describe) and tasks_db_settings.py stand in for them.
2. The adaptations below, each with its reason, are applied to tests/tests.py (each must match
   exactly, so many times).
3. Every test of tests/tests.py runs through `django-admin test` except those named in
   excluded_tasks_db.txt: [not-applicable] ones (django-tasks-db's ORM model, its admin, its
   commands' options and processes) are left out; [difference] ones run in a second pass and
   must each fail (where claimq's backend differs as Django's Tasks API allows; one that
   passes is a stale entry and fails the run). On SQLite (a file: the worker uses claimq's
   own connections), PostgreSQL and MariaDB.
4. The last line printed is a JSON summary; the exit status is 0 only if every run was as
   described.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
import tarfile
from pathlib import Path

from run import CACHE, HERE, adapt, excluded, run, sdist

DJANGO_TASKS_DB = "0.13.0"
EXCLUDED_TASKS_DB = HERE / "excluded_tasks_db.txt"
BACKEND = "claimq_upstream.ClaimqTestBackend"

AS_BACKEND = ("DatabaseBackend names the backend under test (isinstance, signal senders): "
              "claimq's")
AS_RESULTS = ("the tests count and list results through django-tasks-db's ORM model "
              "(DBTaskResult.objects.ready()/successful()/failed()/count()); claimq_upstream's "
              "stand-in answers the same from claimq's jobs, through Django's connection")
AS_WORKER = ("`db_worker --batch` (call_command) is django-tasks-db's worker; claimq's "
             "equivalent runs every due job of the queues with a real claimq Worker in the "
             "process and returns (claimq.testing.drain, claimq_upstream.db_worker)")
NUM_QUERIES = ("assertNumQueries counts the queries of django-tasks-db's implementation; "
               "claimq's backend runs its statements on the DB-API connection under Django's "
               "(inside its transaction), which Django's query log does not count")
ID_FORMAT = ("TaskResult.id is the backend's own string (Django: a unique identifier); "
             "claimq's is the job's id, digits, not a UUID4")
# (function or None for the whole file, old text, new text, how many times, why)
ADAPTATIONS: list[tuple[str | None, str, str, int, str]] = [
    (None, "from django_tasks_db import DatabaseBackend, compat\n",
     "from django_tasks_db import compat\n"
     "from claimq_upstream import ClaimqTestBackend as DatabaseBackend\n"
     "from claimq_upstream import db_worker as claimq_db_worker\n", 1, AS_BACKEND),
    (None, "from django_tasks_db.models import DBTaskResult, get_date_max\n",
     "from django_tasks_db.models import get_date_max\n"
     "from claimq_upstream import ClaimqResults as DBTaskResult\n", 1, AS_RESULTS),
    (None, '"django_tasks_db.DatabaseBackend"', f'"{BACKEND}"', 11,
     "the backend under test in place of django-tasks-db's in the settings tests override"),
    (None, 'call_command,\n            "db_worker",', "claimq_db_worker,", 1, AS_WORKER),
    (None, "self.assertEqual(uuid.UUID(result.id).version, 4)",
     "self.assertEqual(str(int(result.id)), result.id)", 3, ID_FORMAT),
    ("test_run_after_priority",
     "self.assertEqual(\n            [dbt.task_result for dbt in DBTaskResult.objects.all()],",
     "self.assertCountEqual(\n            [dbt.task_result for dbt in DBTaskResult.objects.all()],",
     1, "the order of all results, not-yet-due ones too, is DBTaskResult's Meta.ordering "
     "(no run_after sorts last); the Tasks API lists no results. The same results are "
     "asserted, in any order; the due ones' order, the backend's claim order, as is"),
]
# re.sub adaptations: (pattern, replacement, how many times, why)
PATTERNS: list[tuple[str, str, int, str]] = [
    (r"self\.assertNumQueries\([^()]*\)( as c)?", "contextlib.nullcontext()", 32, NUM_QUERIES),
]


def extract(archive: Path, into: Path) -> Path:
    """The sdist afresh, tests.tasks and the adaptations added; returns the project root."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    [root] = into.iterdir()
    tests = root / "tests"
    (tests / "__init__.py").write_text("")
    shutil.copyfile(HERE / "tasks_db_tasks.py", tests / "tasks.py")
    for function, old, new, count, _why in ADAPTATIONS:
        adapt(tests / "tests.py", function, old, new, count)
    text = (tests / "tests.py").read_text()
    for pattern, replacement, count, _why in PATTERNS:
        text, made = re.subn(pattern, replacement, text)
        if made != count:
            raise SystemExit(f"adaptation no longer applies to tests/tests.py: {pattern!r} "
                             f"matched {made} times, expected {count}")
    (tests / "tests.py").write_text(text)
    return root


def labels(root: Path) -> list[str]:
    out = []
    for node in ast.parse((root / "tests" / "tests.py").read_text()).body:
        if isinstance(node, ast.ClassDef):
            out += [f"tests.tests.{node.name}.{item.name}" for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                    and item.name.startswith("test")]
    return out


COMMAND = ["-m", "django", "test", "--settings=tasks_db_settings", "--parallel=1"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", action="append", choices=["sqlite", "postgresql", "mariadb"])
    args = parser.parse_args()
    import django

    archive = sdist(DJANGO_TASKS_DB, "django-tasks-db")
    skip = excluded(EXCLUDED_TASKS_DB)
    summary: dict[str, object] = {"django": django.__version__,
                                  "django_tasks_db": DJANGO_TASKS_DB, "runs": {}}
    runs: dict[str, dict[str, object]] = {}
    for db in args.db or ["sqlite", "postgresql", "mariadb"]:
        root = extract(archive, CACHE / f"tasks-db-run-{db}")
        every = labels(root)
        stale = sorted(set(skip) - set(every))
        if stale:
            raise SystemExit(f"excluded_tasks_db.txt names tests django-tasks-db "
                             f"{DJANGO_TASKS_DB} does not have: {stale}")
        differences = [label for label in every if skip.get(label, ("",))[0] == "difference"]
        chosen = [label for label in every if label not in skip]
        summary["total"], summary["chosen"] = len(every), len(chosen)
        summary["excluded"] = {section: sum(1 for s, _ in skip.values() if s == section)
                               for section in sorted({s for s, _ in skip.values()})}
        env = {"PYTHONPATH": f"{HERE}:{root}",
               "CLAIMQ_UPSTREAM_SQLITE_FILE": str(root / "tasks_db.sqlite3")}
        result = run(db, root, chosen, COMMAND, env, show=False)
        output = str(result.pop("output"))
        skipped = int(result["counts"].get("skipped", 0))  # type: ignore[attr-defined]
        result["ok"] = (result["ran"] == len(chosen) and not result["failed"]
                        and set(result["counts"]) <= {"skipped"})  # type: ignore[arg-type]
        result["passed"] = int(result["ran"]) - len(result["failed"]) - skipped  # type: ignore
        if not result["ok"]:
            print(output[-20000:], file=sys.stderr)
        if differences:
            known = run(db, root, differences, COMMAND, env, show=False)
            known_output = str(known.pop("output"))
            passing = sorted(set(differences) - set(known["failed"]))  # type: ignore[arg-type]
            result["differences"] = {"ran": known["ran"], "failed": len(known["failed"]),
                                     "passing": passing}  # type: ignore[arg-type]
            if passing or known["ran"] != len(differences):
                result["ok"] = False
                print(known_output[-20000:], file=sys.stderr)
        runs[db] = result
        print(f"{db}: {result}", flush=True)
    summary["runs"] = runs
    print(json.dumps(summary))
    return 0 if all(r["ok"] for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
