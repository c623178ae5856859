"""Claim cost against table size (issue 5): a claim of one batch with 10,000 pending jobs, and
with 1,000,000 pending plus 1,000,000 archived jobs, on the same PostgreSQL database.

    .venv/bin/python benchmarks/claim_scaling.py --database postgresql://postgres@127.0.0.1/test

Rows are made with generate_series (the enqueue path is measured elsewhere); each claim is
timed end to end through the backend (`backend.claim(..., start=True)`, what a worker runs),
then completed, so the claimable index sees the same churn as in production. Prints a table,
the EXPLAIN of the claim at the large size, and writes benchmarks/results/claim_scaling.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from claimq import App
from claimq.backends.base import Completion

FILL = """
INSERT INTO {s}.jobs (queue, task, payload, run_at)
SELECT 'default', 'bench.noop', '{{}}'::jsonb, now() - interval '1 minute'
FROM generate_series(1, %(n)s)
"""
ARCHIVE = """
INSERT INTO {s}.archive (id, queue, task, payload, tags, priority, attempts, max_attempts,
                         run_at, created_at, started_at, finished_at, duration, errors)
SELECT nextval('{s}.job_ids'), 'default', 'bench.noop', '{{}}'::jsonb, '{{}}', 0, 1, 20,
       now(), now(), now(), now(), 0.001, '[]'::jsonb
FROM generate_series(1, %(n)s)
"""


def measure(app: App, batch: int, rounds: int) -> list[float]:
    backend = app.backend
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        jobs = backend.claim("bench", None, batch, None, True)
        times.append(time.perf_counter() - t0)
        backend.complete([Completion(j.id, j.claim_token or "") for j in jobs])
    return times


def run(base: str, pending: int, archived: int, batch: int, rounds: int) -> dict[str, object]:
    schema = f"scale_{uuid.uuid4().hex[:8]}"
    app = App(f"{base}?schema={schema}")
    app.migrate()
    app.configure_queue("default")
    try:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(FILL.format(s=schema), {"n": pending})
            if archived:
                conn.execute(ARCHIVE.format(s=schema), {"n": archived})
            conn.execute(f"VACUUM ANALYZE {schema}.jobs")
            conn.execute(f"VACUUM ANALYZE {schema}.archive")
        measure(app, batch, 20)  # warm up: prepared statements, caches
        times = measure(app, batch, rounds)
        with psycopg.connect(base, autocommit=True) as conn:
            plan = conn.execute(
                "EXPLAIN (ANALYZE, COSTS OFF) "  # the statement the worker runs, limit written in
                + app.backend._settle_sql(batch),  # type: ignore[attr-defined]
                {"worker_id": "explain", "queues": None, "lease": None,
                 "start": True, "limited": [], "ids": "{}", "tokens": "{}", "results": "{}"},
            ).fetchall()
        return {
            "pending": pending,
            "archived": archived,
            "median_ms": statistics.median(times) * 1000,
            "p95_ms": sorted(times)[int(len(times) * 0.95)] * 1000,
            "plan": [r[0] for r in plan],
        }
    finally:
        app.close()
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--large", type=int, default=1_000_000)
    args = parser.parse_args()
    small = run(args.database, 10_000, 0, args.batch, args.rounds)
    large = run(args.database, args.large, args.large, args.batch, args.rounds)
    ratio = large["median_ms"] / small["median_ms"]  # type: ignore[operator]
    print(f"claim of {args.batch}: 10k pending {small['median_ms']:.2f} ms median "
          f"(p95 {small['p95_ms']:.2f}); {args.large:,} pending + {args.large:,} archived "
          f"{large['median_ms']:.2f} ms median (p95 {large['p95_ms']:.2f}); ratio {ratio:.2f}")
    print("\n".join(large["plan"]))  # type: ignore[arg-type]
    out = {
        "date": datetime.now(UTC).isoformat(),
        "command": "python benchmarks/claim_scaling.py " + " ".join(
            f"--{k} {v}" for k, v in vars(args).items()),
        "machine": platform.platform(),
        "small": small,
        "large": large,
        "ratio_large_to_small": ratio,
        "target": "ratio <= 1.5",
    }
    path = Path(__file__).parent / "results" / "claim_scaling.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
