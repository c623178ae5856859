"""The three backends in one run: bulk enqueue and drain of `bench.py --mode burn` (one
worker process, a no-op async handler, every run verified exactly once by SQL) on SQLite,
PostgreSQL and MariaDB, repetitions alternating (each repetition rotates the order, so a busy
moment of the machine does not land on one backend only), and beside them the raw-SQL limit on
MariaDB: the backend's own claim and complete statements (its sql/*.sql files, one transaction
per batch, the same batch size as the worker's claims) sent by a plain PyMySQL loop with none of
claimq's Python in it (benchmarks/mariadb_driver.py `raw`). The figure that counts: claimq's
MariaDB drain as a fraction of that limit (issue 18's target: at least 50 %).

    .venv/bin/python benchmarks/backends.py --reps 3 --out benchmarks/results/backends.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mariadb_driver import raw

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench.py"


def bench(url: str, jobs: int, concurrency: int) -> dict[str, Any]:
    """One `bench.py --mode burn` run in a fresh schema/database/file: its JSON report."""
    cmd = [sys.executable, str(BENCH), "--database", url, "--mode", "burn",
           "--jobs", str(jobs), "--concurrency", str(concurrency), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    report: dict[str, Any] = json.loads(out.stdout)
    assert report["verify"]["ok"], report["verify"]
    return report


def load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=20,
                        help="worker slots, so also the claim batch (and the raw loop's batch)")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/claimq_bench")
    parser.add_argument("--mariadb", default="mysql://root@127.0.0.1:3306/test")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    a = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="claimq-backends-") as tmp:
        targets = {
            "sqlite": f"sqlite:///{tmp}/bench.db",
            "postgresql": a.postgres,
            "mariadb": a.mariadb,
            "mariadb raw SQL": a.mariadb,
        }
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
        loads: list[float] = []
        names = list(targets)
        for rep in range(a.reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                loads.append(load())
                if name == "mariadb raw SQL":
                    r = raw(a.mariadb, "pymysql", a.jobs, a.concurrency)
                    runs[name].append({"drain_jobs_s": r["drain_jobs_s"],
                                       "client_cpu_us_per_job": r["client_cpu_us_per_job"]})
                else:
                    report = bench(targets[name], a.jobs, a.concurrency)
                    runs[name].append({
                        "enqueue_jobs_s": report["enqueue"]["jobs_per_s"],
                        "drain_jobs_s": report["drain"]["jobs_per_s"],
                        "worker_cpu_ms": report["counters"]["cpu_ms"],
                    })
                print(f"rep {rep + 1} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
                time.sleep(1.0)  # let the server's background flushing settle between runs

    medians = {name: {k: statistics.median(r[k] for r in rows) for k in rows[0]}
               for name, rows in runs.items()}
    per_rep = [c["drain_jobs_s"] / r["drain_jobs_s"]
               for c, r in zip(runs["mariadb"], runs["mariadb raw SQL"], strict=True)]
    fraction = medians["mariadb"]["drain_jobs_s"] / medians["mariadb raw SQL"]["drain_jobs_s"]
    result = {
        "command": " ".join(["benchmarks/backends.py", *sys.argv[1:]]),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "jobs": a.jobs, "concurrency": a.concurrency, "batch": a.concurrency, "reps": a.reps,
        "load_average_1m": {"min": min(loads), "max": max(loads)},
        "runs": runs, "medians": medians,
        "mariadb_drain_fraction_of_raw": {"of_medians": fraction, "per_rep": per_rep},
    }
    print(f"| backend | bulk enqueue jobs/s | drain jobs/s |  ({a.jobs} jobs, batch "
          f"{a.concurrency}, median of {a.reps}; load {min(loads):.1f}–{max(loads):.1f})")
    print("|---|---:|---:|")
    for name, med in medians.items():
        enqueue = f"{med['enqueue_jobs_s']:,.0f}" if "enqueue_jobs_s" in med else ""
        print(f"| {name} | {enqueue} | {med['drain_jobs_s']:,.0f} |")
    print(f"claimq's MariaDB drain = {fraction:.0%} of the raw-SQL limit "
          f"(per rep: {', '.join(f'{f:.0%}' for f in per_rep)})")
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
