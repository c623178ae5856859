"""Paired A/B of claimq (drain and bulk enqueue): a git ref against the working tree, alternating.

This machine's speed drifts by up to 2x over minutes, so two runs far apart say little; runs
taken back to back, A then B, and compared pairwise do. Each round runs the benchmark
(`bench.py --mode burn`) once with the ref's sources (a temporary git worktree: its src/ on
PYTHONPATH and its own benchmarks/bench.py, or `-m claimq.bench` for a ref from before the
benchmark left the package) and once with the working tree's, and the report gives the medians
and the median of the per-round ratios B/A for drain jobs/s, the worker's CPU per job and bulk
enqueue jobs/s.

    .venv/bin/python benchmarks/ab.py --ref HEAD~1 --database postgresql://…/db --rounds 8
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench(src: Path, database: str, jobs: int, extra: list[str]) -> tuple[float, float, float]:
    """(drain jobs/s, worker CPU µs per job, enqueue jobs/s) of one burn run with claimq from
    `src` and the benchmark of the same tree."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    tool = src.parent / "benchmarks" / "bench.py"
    run = [str(tool)] if tool.exists() else ["-m", "claimq.bench"]  # older refs: in the package
    cmd = [sys.executable, *run, "--mode", "burn", "--analyze", "--json",
           "--database", database, "--jobs", str(jobs), *extra]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=env,
                                    cwd=tempfile.gettempdir()).stdout)
    cpu_ms = out["counters"].get("cpu_ms")  # older refs do not report it
    return (out["drain"]["jobs_per_s"], (1000 * cpu_ms / jobs if cpu_ms else float("nan")),
            out["enqueue"]["jobs_per_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", required=True, help="git ref for A (B is the working tree)")
    p.add_argument("--database", required=True, help="a PostgreSQL URL or sqlite:///file")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--jobs", type=int, default=30_000)
    a, extra = p.parse_known_args()
    with tempfile.TemporaryDirectory(prefix="claimq-ab-") as tmp:
        tree = Path(tmp) / "a"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), a.ref],
                       check=True, capture_output=True)
        try:
            rows = []
            for i in range(1, a.rounds + 1):
                ra = bench(tree / "src", a.database, a.jobs, extra)
                rb = bench(ROOT / "src", a.database, a.jobs, extra)
                rows.append((ra, rb))
                print(f"round {i}: A {ra[0]:,.0f} jobs/s {ra[1]:.1f} µs/job enqueue {ra[2]:,.0f}"
                      f"   B {rb[0]:,.0f} jobs/s {rb[1]:.1f} µs/job enqueue {rb[2]:,.0f}",
                      flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False, capture_output=True)
    for k, what in ((0, "drain jobs/s"), (1, "worker CPU µs/job"), (2, "enqueue jobs/s")):
        a_vals, b_vals = [r[0][k] for r in rows], [r[1][k] for r in rows]
        ratios = [b / x for x, b in zip(a_vals, b_vals, strict=True)]
        print(f"{what}: median A {statistics.median(a_vals):,.1f}  B "
              f"{statistics.median(b_vals):,.1f}  median of B/A per round "
              f"{statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
