"""Worker memory against jobs processed (issue 5): resident memory of one worker process after
10,000 jobs and after 1,000,000 jobs.

    .venv/bin/python benchmarks/memory.py --database postgresql://postgres@127.0.0.1/test

The jobs are enqueued by a separate process (so enqueue buffers do not count), then this process
runs one Worker (concurrency 20) over them and samples its own VmRSS from /proc as the completed
counter passes each mark. Writes benchmarks/results/memory.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from claimq import App
from claimq.worker import Worker

ENQUEUE = """
import sys
from claimq import App
app = App(sys.argv[1]); app.migrate()
n = int(sys.argv[2])
for i in range(0, n, 10_000):
    app.enqueue_many([{"task": "bench.noop"}] * min(10_000, n - i))
"""


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--first-mark", type=int, default=10_000)
    args = parser.parse_args()
    url = args.database
    schema = None
    if url.startswith("postgres"):
        schema = f"mem_{uuid.uuid4().hex[:8]}"
        url = f"{url}?schema={schema}"
    elif url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", ENQUEUE, url, str(args.jobs)], check=True)
    print(f"enqueued {args.jobs:,} in {time.perf_counter() - t0:.0f}s")

    app = App(url)

    @app.task(name="bench.noop")
    async def noop() -> None:
        return None

    worker = Worker(app, concurrency=20, poll_interval=0.2)
    marks: dict[int, int] = {}

    def watch() -> None:
        while True:
            time.sleep(0.05)
            done = worker.counters.get("completed")
            for mark in (args.first_mark, args.jobs):
                if done >= mark and mark not in marks:
                    marks[mark] = rss_kib()
                    print(f"after {done:,} jobs: RSS {marks[mark] / 1024:.1f} MiB", flush=True)
            if done >= args.jobs:
                worker.stop()
                return

    threading.Thread(target=watch, daemon=True).start()
    t1 = time.perf_counter()
    worker.run(install_signals=False)
    elapsed = time.perf_counter() - t1
    growth = (marks[args.jobs] - marks[args.first_mark]) / 1024
    print(f"growth {growth:+.1f} MiB over {args.jobs - args.first_mark:,} jobs "
          f"({args.jobs / elapsed:,.0f} jobs/s)")
    app.close()
    if schema:
        import psycopg

        with psycopg.connect(args.database, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    out = {
        "date": datetime.now(UTC).isoformat(),
        "command": f"python benchmarks/memory.py --database {args.database} --jobs {args.jobs}",
        "machine": platform.platform(),
        "rss_kib": {str(k): v for k, v in marks.items()},
        "growth_mib": growth,
        "target": "growth <= 10 MiB",
    }
    path = Path(__file__).parent / "results" / f"memory-{app.backend.kind}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
