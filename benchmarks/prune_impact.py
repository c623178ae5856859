"""Retention against claims (issue 15): the claim's latency with a small and a large archive,
and while the pruner deletes the large one, on the same PostgreSQL database.

    .venv/bin/python benchmarks/prune_impact.py --database postgresql://postgres@127.0.0.1/test

Archived rows are made with generate_series (`--archived`, default 1,000,000). A claimer claims
one job and completes it, again and again (`backend.claim(..., start=True)` then `complete`,
what a worker's settle does), timing each claim: first with 10,000 archived rows, then with the
large archive, then while `app.prune()` (archive_age=0) deletes it in its batches in another
thread. Prints p50/p99 of each phase and writes benchmarks/results/prune_impact.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from claimq import App
from claimq.backends.base import Completion

ARCHIVE = """
INSERT INTO {s}.archive (id, queue, task, payload, tags, priority, attempts, max_attempts,
                         run_at, created_at, started_at, finished_at, duration, errors)
SELECT nextval('{s}.job_ids'), 'default', 'bench.noop', '{{}}'::jsonb, '{{}}', 0, 1, 20,
       now() - interval '1 day', now() - interval '1 day', now() - interval '1 day',
       now() - interval '1 day', 0.001, '[]'::jsonb
FROM generate_series(1, %s)
"""


def claims(app: App, seconds: float, stop: threading.Event | None = None) -> list[float]:
    """Claim-and-complete one job at a time for `seconds` (or until `stop`); claim latencies
    in ms."""
    out: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (stop is not None and stop.is_set()):
        app.enqueue("bench.noop", queue="hot")
        start = time.perf_counter()
        jobs = app.backend.claim("bench", ["hot"], 1, 30.0, True)
        out.append((time.perf_counter() - start) * 1000)
        app.backend.complete([Completion(j.id, j.claim_token or "") for j in jobs])
    return out


def figures(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {"p50_ms": round(statistics.median(samples), 3),
            "p99_ms": round(samples[int(len(samples) * 0.99)], 3), "claims": len(samples)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", required=True)
    parser.add_argument("--archived", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "prune_impact.json")
    args = parser.parse_args()
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    app = App(args.database + ("&" if "?" in args.database else "?") + f"schema={schema}")
    app.migrate()
    app.set_retention(archive_age=3600)
    run = app.backend.run_sql
    try:
        run(ARCHIVE.format(s=schema), [10_000])
        run(f"ANALYZE {schema}.archive")
        small = figures(claims(app, args.seconds))
        run(ARCHIVE.format(s=schema), [args.archived - 10_000])
        run(f"ANALYZE {schema}.archive")
        large = figures(claims(app, args.seconds))
        done = threading.Event()
        pruned: dict[str, object] = {}

        def prune() -> None:
            start = time.perf_counter()
            pruned["counts"] = app.prune()
            pruned["seconds"] = round(time.perf_counter() - start, 1)
            done.set()

        thread = threading.Thread(target=prune)
        thread.start()
        during = figures(claims(app, 3600, stop=done))
        thread.join()
    finally:
        run(f"DROP SCHEMA {schema} CASCADE")
        app.close()
    result = {"archived_small": 10_000, "archived_large": args.archived,
              "claim_small_archive": small, "claim_large_archive": large,
              "claim_while_pruning": during, "prune": pruned,
              "large_over_small_p50": round(large["p50_ms"] / small["p50_ms"], 2),
              "pruning_over_large_p50": round(during["p50_ms"] / large["p50_ms"], 2)}
    print(json.dumps(result, indent=2, default=str))
    out = args.out
    out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": f"benchmarks/prune_impact.py --database {args.database} "
                   f"--archived {args.archived} --seconds {args.seconds}",
        "machine": platform.platform(), **result}, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
