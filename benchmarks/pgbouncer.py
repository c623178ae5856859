"""Drain through PgBouncer against direct, alternating, on one database: `bench.py --mode
burn` (bulk enqueue, then one worker process drains) direct to PostgreSQL and through a
PgBouncer of its own (Debian's, started here as tests/pgbouncer.py does) in transaction mode
(`pooler=transaction`) and session mode.

    .venv/bin/python benchmarks/pgbouncer.py \
        --database postgresql://postgres@127.0.0.1/claimq_bench --rounds 3 --jobs 20000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from pgbouncer import PgBouncer  # noqa: E402


def burn(url: str, jobs: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench.py"), "--database", url,
         "--mode", "burn", "--jobs", str(jobs), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True, help="a direct PostgreSQL URL")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    base, database = args.database.rsplit("/", 1)
    rows: dict[str, list[dict[str, float]]] = {"direct": [], "transaction": [], "session": []}
    with PgBouncer("transaction", pool_size=8) as tx, PgBouncer("session", pool_size=32) as se:
        urls = {"direct": args.database,
                "transaction": tx.url(database, "?pooler=transaction"),
                "session": se.url(database, "?pooler=session")}
        for r in range(args.rounds):
            for name, url in urls.items():
                result = burn(url, args.jobs)
                rows[name].append(result)
                drain = result["drain"]["jobs_per_s"]
                print(f"round {r + 1} {name}: drain {drain:,.0f} jobs/s", flush=True)
    summary = {}
    for name, results in rows.items():
        drain = [x["drain"]["jobs_per_s"] for x in results]
        enqueue = [x["enqueue"]["jobs_per_s"] for x in results]
        summary[name] = {"drain_jobs_per_s": statistics.median(drain),
                         "enqueue_jobs_per_s": statistics.median(enqueue)}
    for name in ("transaction", "session"):
        ratios = [a["drain"]["jobs_per_s"] / d["drain"]["jobs_per_s"]
                  for a, d in zip(rows[name], rows["direct"], strict=True)]
        summary[name]["drain_vs_direct_per_round"] = statistics.median(ratios)
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"command": " ".join(sys.argv), "summary": summary,
                                        "rounds": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
