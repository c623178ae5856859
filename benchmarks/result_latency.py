"""Enqueue -> result latency for a no-op job (issue 15): a worker runs in this process's
thread on an idle database; each round enqueues one job and waits for its result through
`handle.result()` (on PostgreSQL woken by NOTIFY, on SQLite by polling).

    .venv/bin/python benchmarks/result_latency.py --database postgresql://postgres@127.0.0.1/test
    .venv/bin/python benchmarks/result_latency.py --database sqlite:////tmp/latency.db

Prints p50/p90/p99 in milliseconds and writes benchmarks/results/result-latency-<kind>.json.
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

from claimq import App, Worker


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", required=True)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    url = args.database
    schema = None
    if url.startswith("postgres"):
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        url += ("&" if "?" in url else "?") + f"schema={schema}"
    app = App(url)
    app.migrate()

    @app.task(name="bench.noop")
    def noop() -> int:
        return 1

    worker = Worker(app, concurrency=4, poll_interval=1.0)
    thread = threading.Thread(target=worker.run, kwargs={"install_signals": False}, daemon=True)
    thread.start()
    samples: list[float] = []
    try:
        for n in range(args.warmup + args.rounds):
            start = time.perf_counter()
            assert noop.enqueue().result(timeout=30) == 1
            if n >= args.warmup:
                samples.append((time.perf_counter() - start) * 1000)
    finally:
        worker.stop()
        thread.join(30)
        if schema is not None:
            app.backend.run_sql(f"DROP SCHEMA {schema} CASCADE")
        app.close()
    samples.sort()
    figures = {
        "p50_ms": round(statistics.median(samples), 2),
        "p90_ms": round(samples[int(len(samples) * 0.9)], 2),
        "p99_ms": round(samples[int(len(samples) * 0.99)], 2),
        "rounds": len(samples),
    }
    kind = app.backend.kind
    print(f"{kind}: enqueue -> result of a no-op job: {figures}")
    out = Path(__file__).parent / "results" / f"result-latency-{kind}.json"
    out.write_text(json.dumps({
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": f"benchmarks/result_latency.py --database {args.database} "
                   f"--rounds {args.rounds}",
        "machine": platform.platform(), "backend": kind, **figures,
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
