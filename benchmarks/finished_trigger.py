"""What the results trigger (migration 005: archive/dead inserts notify watched jobs) costs the
settle path on PostgreSQL, paired: rounds alternate the trigger disabled and enabled on the same
schema (which goes first alternating), each round completing `--batch` jobs per settle,
`--settles` times, with no waiter registered (the case of every worker whose jobs nobody waits
for).

    .venv/bin/python benchmarks/finished_trigger.py --database postgresql://postgres@127.0.0.1/test

Prints the median settle time with and without the trigger and the median of the per-round
ratios; writes benchmarks/results/finished_trigger.json.
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

from claimq import App
from claimq.backends.base import ClaimRequest, Completion


def round_ms(app: App, batch: int, settles: int) -> float:
    """Median ms of a settle that completes `batch` jobs (and claims none)."""
    backend = app.backend
    times = []
    for _ in range(settles):
        app.enqueue_many([{"task": "bench.noop", "queue": "trig"} for _ in range(batch)])
        jobs = backend.settle((), (), ClaimRequest("bench", ["trig"], batch, 30.0, True)).claimed
        done = [Completion(j.id, j.claim_token or "", None) for j in jobs]
        start = time.perf_counter()
        settled = backend.settle(done, ())
        times.append((time.perf_counter() - start) * 1000)
        assert len(settled.completed) == batch
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--settles", type=int, default=100)
    args = parser.parse_args()
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    app = App(args.database + ("&" if "?" in args.database else "?") + f"schema={schema}")
    app.migrate()
    run = app.backend.run_sql
    off, on = [], []
    try:
        round_ms(app, args.batch, 20)  # warm-up
        for n in range(args.rounds):
            # which goes first alternates, so that neither gains from running second
            for enabled in ((False, True) if n % 2 == 0 else (True, False)):
                verb = "ENABLE" if enabled else "DISABLE"
                run(f"ALTER TABLE {schema}.archive {verb} TRIGGER archive_notify_finished")
                (on if enabled else off).append(round_ms(app, args.batch, args.settles))
    finally:
        run(f"DROP SCHEMA {schema} CASCADE")
        app.close()
    ratios = [b / a for a, b in zip(off, on, strict=True)]
    result = {"batch": args.batch, "settles_per_round": args.settles, "rounds": args.rounds,
              "settle_ms_without_trigger": round(statistics.median(off), 3),
              "settle_ms_with_trigger": round(statistics.median(on), 3),
              "median_ratio_with_over_without": round(statistics.median(ratios), 3)}
    print(json.dumps(result, indent=2))
    out = Path(__file__).parent / "results" / "finished_trigger.json"
    out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": f"benchmarks/finished_trigger.py --database {args.database} --rounds "
                   f"{args.rounds} --batch {args.batch} --settles {args.settles}",
        "machine": platform.platform(), **result}, indent=2) + "\n")


if __name__ == "__main__":
    main()
