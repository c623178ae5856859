"""Flow control's cost, in one run (issue 17's benchmark checks): the drain of a plain queue, of
the same jobs spread over 1,000 concurrency keys with at most one running per key, and of a
queue rate-limited to 1,000 jobs/s. Each is `bench.py --mode burn` (one worker process at
concurrency 20, a no-op async handler, a fresh schema/file, every run verified exactly once by
SQL); the repetitions alternate and rotate their order, so a busy moment of the machine does not
land on one variant only.

Figures: the keyed drain as a fraction of the plain drain (per repetition and of the medians;
the target is at least half), and the rate-limited queue's measured rate: the jobs after its
first burst (by default the limit's own, its count) over the time from the first handler call
to the last completion (the target is within 5 % of the limit).

    .venv/bin/python benchmarks/flow.py --reps 5 --out benchmarks/results/flow.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench.py"


def bench(url: str, jobs: int, extra: list[str]) -> dict[str, Any]:
    """One burn run: its JSON report (its exactly-once check must pass)."""
    cmd = [sys.executable, str(BENCH), "--database", url, "--mode", "burn",
           "--jobs", str(jobs), "--concurrency", "20", "--analyze", "--json", *extra]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    report: dict[str, Any] = json.loads(out.stdout)
    assert report["verify"]["ok"], report["verify"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="postgresql://postgres@127.0.0.1:5432/claimq_bench")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs of the drains")
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=1000, help="the rate limit, jobs/s")
    parser.add_argument("--rate-jobs", type=int, default=10_000,
                        help="jobs of the rate-limited run (it takes jobs / rate seconds)")
    parser.add_argument("--burst", type=int, default=None,
                        help="the rate limit's burst (default: its own default, the rate's "
                             "count: 1,000 for 1,000/s)")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    a = parser.parse_args()

    variants: dict[str, tuple[int, list[str]]] = {
        "plain": (a.jobs, []),
        f"{a.keys} keys, 1 each": (a.jobs, ["--keys", str(a.keys)]),
        f"rate {a.rate}/s": (a.rate_jobs, ["--queue-rate", f"{a.rate}/s",
                                           *(["--queue-burst", str(a.burst)] if a.burst else [])]),
    }
    burst = a.burst or a.rate
    names = list(variants)
    runs: dict[str, list[float]] = {name: [] for name in names}
    loads: list[float] = []
    for rep in range(a.reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            jobs, extra = variants[name]
            loads.append(os.getloadavg()[0])
            drain = bench(a.database, jobs, extra)["drain"]
            if name.startswith("rate"):  # the first burst is taken at once, the rest at the rate
                value = (jobs - burst) / drain["seconds"]
            else:
                value = drain["jobs_per_s"]
            runs[name].append(value)
            print(f"rep {rep + 1} {name}: {value:,.0f} jobs/s", file=sys.stderr, flush=True)
            time.sleep(1.0)

    plain, keyed, rated = (runs[n] for n in names)
    per_rep = [k / p for k, p in zip(keyed, plain, strict=True)]
    fraction = statistics.median(keyed) / statistics.median(plain)
    rate = statistics.median(rated)
    result = {
        "command": " ".join(["benchmarks/flow.py", *sys.argv[1:]]),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "database": a.database.split("://")[0], "jobs": a.jobs, "keys": a.keys,
        "rate_limit": a.rate, "rate_jobs": a.rate_jobs, "burst": burst, "reps": a.reps,
        "load_average_1m": {"min": min(loads), "max": max(loads)},
        "runs": runs, "medians": {n: statistics.median(v) for n, v in runs.items()},
        "keyed_fraction_of_plain": {"of_medians": fraction, "per_rep": per_rep},
        "rate_error": rate / a.rate - 1,
    }
    print(f"| queue | drain jobs/s (median of {a.reps}) |")
    print("|---|---:|")
    for name in names:
        print(f"| {name} | {statistics.median(runs[name]):,.0f} |")
    print(f"keyed drain = {fraction:.0%} of the plain drain (per rep: "
          f"{', '.join(f'{f:.0%}' for f in per_rep)}); rate-limited: {rate:,.1f} jobs/s "
          f"({rate / a.rate - 1:+.1%} of {a.rate}/s); load {min(loads):.1f}–{max(loads):.1f}")
    if a.out:
        a.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
