"""Flow control under a backlog (issue 27, item 3): one claim's time with N pending jobs in one
queue, for a plain claim and three flow-controlled ones, on each backend:

- `plain`: no flow control (settle.sql / the plain claim);
- `hot key`: every job has concurrency key "hot" (limit 1) and one of them is in flight, so every
  claim finds nothing;
- `8 sequences`: the jobs spread over 8 sequence keys (each claim takes the 8 heads);
- `aging 10 levels`: priority aging on the queue, the jobs spread over priorities 0..9.

The backlog is made with SQL (one template job enqueued through the App, then copied N-1 times
by an INSERT … SELECT over a row series), each case in a fresh schema/file/database. Each claim
(`backend.claim`, a batch of --limit) is timed end to end against the local server; jobs it
takes are completed before the next, so the backlog stays N. Figures are medians of --claims
claims after --warmup, in milliseconds, and each case's median as a multiple of the plain
claim's at the same size and backend (the target: at most 2).

    .venv/bin/python benchmarks/flow_backlog.py --sizes 1000 100000 \
        --out benchmarks/results/flow.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from claimq import App
from claimq.backends import fresh_url
from claimq.backends.base import Completion

ROOT = Path(__file__).resolve().parent.parent
CASES = ("plain", "hot key", "8 sequences", "aging 10 levels")
QUEUE = "backlog"


def series(kind: str, n: int) -> tuple[str, str]:
    """(FROM clause of a row series 1..n with column i, a string concatenation template)."""
    if kind == "postgresql":
        return f"generate_series(1, {n}) AS s(i)", "({a} || {b})"
    if kind == "sqlite":
        return (f"(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
                f"WHERE i < {n}) SELECT i FROM s) AS s"), "({a} || {b})"
    return f"(SELECT seq AS i FROM seq_1_to_{n}) AS s", "CONCAT({a}, {b})"


def fill(app: App, case: str, n: int) -> None:
    """The case's queue with n pending jobs (one template enqueued, n - 1 copies by SQL)."""
    backend = app.backend
    kind = backend.kind
    past = datetime.now(UTC) - timedelta(minutes=1)
    extra: dict[str, Any] = {}
    if case == "hot key":
        extra = {"concurrency_key": "hot", "concurrency_limit": 1}
    elif case == "8 sequences":
        extra = {"sequence_key": "seq0"}
    elif case == "aging 10 levels":
        app.configure_queue(QUEUE, aging=3600)
    template = app.enqueue("bench.noop", queue=QUEUE, run_at=past, **extra)
    if n <= 1:
        return
    rows, concat = series(kind, n - 1)
    jobs = backend.table("jobs")
    ph = backend.placeholder
    mod = "%%" if ph == "%s" else "%"  # the driver's escape for a literal %
    seq = "t.sequence_key"
    if case == "8 sequences":
        seq = concat.format(a="'seq'", b=f"(s.i {mod} 8)")
    priority = f"(s.i {mod} 10)" if case == "aging 10 levels" else "t.priority"
    backend.run_sql(
        f"INSERT INTO {jobs} (queue, task, payload, priority, run_at, created_at, updated_at, "
        f"concurrency_key, concurrency_limit, sequence_key, sequence_wait) "
        f"SELECT t.queue, t.task, t.payload, {priority}, t.run_at, t.created_at, t.updated_at, "
        f"t.concurrency_key, t.concurrency_limit, {seq}, t.sequence_wait "
        f"FROM {jobs} t CROSS JOIN {rows} WHERE t.id = {ph}", (template,))
    backend.analyze()


def measure(app: App, case: str, claims: int, warmup: int, limit: int) -> list[float]:
    """Milliseconds of each of `claims` claims (after `warmup`), completing what they take."""
    backend = app.backend
    if case == "hot key":  # the key's one slot taken: every claim after finds nothing
        held = backend.claim("holder", [QUEUE], 1, 3600)
        assert len(held) == 1, held
    times = []
    for i in range(warmup + claims):
        t0 = time.perf_counter()
        jobs = backend.claim("bench", [QUEUE], limit, 3600, True)
        took = time.perf_counter() - t0
        if case == "hot key":
            assert not jobs, jobs
        else:
            assert jobs, f"{case}: a claim found nothing"
        if i >= warmup:
            times.append(took * 1000)
        if jobs:
            backend.complete([Completion(j.id, j.claim_token or "") for j in jobs])
    return times


def run_case(url: str, case: str, n: int, a: argparse.Namespace) -> dict[str, Any]:
    place = fresh_url(url, "flowlog")
    app = App(place)
    try:
        app.migrate()
        t0 = time.perf_counter()
        fill(app, case, n)
        built = time.perf_counter() - t0
        times = measure(app, case, a.claims, a.warmup, a.limit)
        return {"median_ms": round(statistics.median(times), 3),
                "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
                "fill_s": round(built, 1)}
    finally:
        app.backend.drop_all()
        app.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    p.add_argument("--pg-sizes", type=int, nargs="*", default=None,
                   help="sizes on PostgreSQL (default: --sizes), e.g. 1000 100000 1000000")
    p.add_argument("--backends", nargs="+", default=["postgresql", "sqlite", "mariadb"])
    p.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/claimq_bench")
    p.add_argument("--mariadb", default="mysql://root@127.0.0.1:3306/test")
    p.add_argument("--claims", type=int, default=15)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--limit", type=int, default=10, help="each claim's batch")
    p.add_argument("--cases", nargs="+", default=list(CASES))
    p.add_argument("--out", type=Path, default=None,
                   help="merge the results into this JSON file under the key 'flow_backlog'")
    p.add_argument("--label", default="", help="a name for this run (e.g. baseline)")
    a = p.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="claimq-flowlog-") as tmp:
        urls: dict[str, str] = {"postgresql": a.postgres, "sqlite": f"sqlite:///{tmp}/flow.db",
                                "mariadb": a.mariadb}
        for kind in a.backends:
            sizes = a.pg_sizes if kind == "postgresql" and a.pg_sizes else a.sizes
            per_size: dict[str, Any] = {}
            for n in sizes:
                cases: dict[str, Any] = {}
                for case in a.cases:
                    cases[case] = run_case(urls[kind], case, n, a)
                    print(f"{kind:10} {n:>9,} {case:16} median {cases[case]['median_ms']:8.2f} ms"
                          f"  (min {cases[case]['min_ms']:.2f}, max {cases[case]['max_ms']:.2f};"
                          f" fill {cases[case]['fill_s']} s)", flush=True)
                plain = cases.get("plain", {}).get("median_ms")
                if plain:
                    for c in cases.values():
                        c["times_plain"] = round(c["median_ms"] / plain, 2)
                per_size[str(n)] = cases
            results[kind] = per_size
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    report = {
        "command": "python benchmarks/flow_backlog.py " + " ".join(
            f"--{k.replace('_', '-')} "
            + (" ".join(shlex.quote(str(x)) for x in v) if isinstance(v, list) else str(v))
            for k, v in vars(a).items() if v not in (None, "") and k != "out"),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit,
        "label": a.label,
        "machine": platform.platform(),
        "load_average_1m": os.getloadavg()[0],
        "limit": a.limit,
        "target": "each case's median within 2x of the plain claim's at every size",
        "results": results,
    }
    if a.out is not None:
        data: dict[str, Any] = json.loads(a.out.read_text()) if a.out.exists() else {}
        runs: dict[str, Any] = data.setdefault("flow_backlog", {})
        runs[a.label or report["when"]] = report
        a.out.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {a.out} (flow_backlog.{a.label or report['when']})")


if __name__ == "__main__":
    main()
