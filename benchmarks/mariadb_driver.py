"""The MariaDB backend's drain with each driver it supports, through the backend itself: one
process enqueues N jobs in one call (multi-row INSERTs), then settles in a loop (complete the
last batch, claim and start the next, one transaction per batch) until the queue is empty.
Beside each, the raw-SQL limit: the same statements in a loop without claimq's Python. Wall
time and this process's CPU time per job; the database runs on the same machine.

    .venv/bin/python benchmarks/mariadb_driver.py --url mysql://root@127.0.0.1:3306/test \
        --jobs 20000 --batch 50 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from claimq._validate import new_job
from claimq.backends import open_backend
from claimq.backends.base import ClaimRequest, Completion
from claimq.backends.mysql import fresh_database


def run(url: str, driver: str, jobs: int, batch: int) -> dict[str, float]:
    sep = "&" if "?" in url else "?"
    fresh = fresh_database(url, "drv")
    backend = open_backend(f"{fresh}{sep}driver={driver}")
    try:
        backend.migrate()
        specs = [new_job(task="t", payload={"n": n}) for n in range(jobs)]
        t0 = time.perf_counter()
        backend.enqueue(specs, 3600.0)
        enqueue = time.perf_counter() - t0
        done: list[Completion] = []
        completed = 0
        cpu0, t0 = time.process_time(), time.perf_counter()
        while True:
            settled = backend.settle(done, [], ClaimRequest("w", None, batch, 30.0, True))
            completed += len(settled.completed)
            if not settled.claimed:
                break
            done = [Completion(j.id, j.claim_token or "") for j in settled.claimed]
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert completed == jobs, (completed, jobs)
        return {"enqueue_jobs_s": jobs / enqueue, "drain_jobs_s": jobs / wall,
                "client_cpu_us_per_job": cpu / jobs * 1e6}
    finally:
        backend.run_sql(f"DROP DATABASE {fresh.rsplit('/', 1)[1].split('?')[0]}")
        backend.close()


def raw(url: str, driver: str, jobs: int, batch: int) -> dict[str, float]:
    """The limit for the same statements: the backend's own SQL files, sent in the same order
    per batch (lock the owned rows, archive, delete, open queues, candidates, take them,
    commit) by a loop with none of claimq's Python (no Job, no JSON decoding)."""
    from claimq.backends.mysql.backend import _Q

    sep = "&" if "?" in url else "?"
    fresh = fresh_database(url, "raw")
    backend: Any = open_backend(f"{fresh}{sep}driver={driver}")
    try:
        backend.migrate()
        backend.enqueue([new_job(task="t", payload={"n": n}) for n in range(jobs)], 3600.0)
        conn = backend.connect()
        cur = conn.cursor()
        ids: tuple[int, ...] = ()
        completed = 0
        cpu0, t0 = time.process_time(), time.perf_counter()
        while True:
            cur.execute("START TRANSACTION")
            if ids:
                cur.execute(_Q.lock_owned, {"ids": ids})
                cur.fetchall()
                items = "[" + ",".join(f"[{i},null]" for i in ids) + "]"
                cur.execute(_Q.complete_archive, {"items": items, "ids": ids, "now": None})
                cur.execute(_Q.delete_ids, {"ids": ids})
                completed += len(ids)
            cur.execute(_Q.open_queues, {"queues": '["default"]', "limited": "[]",
                                         "limit": batch, "now": None})
            cur.fetchall()
            cur.execute(_Q.claim_candidates, {"queue": "default", "now": None, "limit": batch})
            rows = cur.fetchall()
            ids = tuple(r[0] for r in rows)
            if ids:
                cur.execute(_Q.claim_update, {"start": True, "now": rows[0][-1], "worker_id": "w",
                                              "batch": "raw", "lease": 30.0, "ids": ids})
            conn.commit()
            if not ids:
                break
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        assert completed == jobs, (completed, jobs)
        conn.close()
        return {"enqueue_jobs_s": float("nan"), "drain_jobs_s": jobs / wall,
                "client_cpu_us_per_job": cpu / jobs * 1e6}
    finally:
        backend.run_sql(f"DROP DATABASE {fresh.rsplit('/', 1)[1].split('?')[0]}")
        backend.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="mysql://root@127.0.0.1:3306/test")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--drivers", default="pymysql,mysqlclient")
    args = parser.parse_args()
    drivers = args.drivers.split(",")
    results: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.rounds):  # interleaved, so a busy moment hits every row alike
        for driver in drivers:
            results.setdefault(driver, []).append(run(args.url, driver, args.jobs, args.batch))
            results.setdefault(f"raw SQL, {driver}", []).append(
                raw(args.url, driver, args.jobs, args.batch))
    print(f"| driver | enqueue jobs/s | drain jobs/s | client CPU µs/job |  ({args.jobs} jobs, "
          f"batch {args.batch}, median of {args.rounds})")
    print("|---|---|---|---|")
    for driver, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"| {driver} | {med['enqueue_jobs_s']:,.0f} | {med['drain_jobs_s']:,.0f} | "
              f"{med['client_cpu_us_per_job']:.0f} |")


if __name__ == "__main__":
    main()
