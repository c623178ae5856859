"""Drain throughput against the number of worker processes, across worker hosts, on one
PostgreSQL: each host a network namespace with its own address (tests/chaos/chaos_netns.py),
each running `claimq worker bench:bench_app --processes K` (benchmarks/bench.py), against a
throwaway cluster (tests/pgcluster.py) listening on the host end of every link.

For each point: the jobs are bulk-enqueued into a paused queue, every worker process starts,
the queue is resumed, and the drain lasts until the last job's finished_at. Recorded alongside:
the server's CPU seconds over the drain (every postgres process's utime + stime), and
pg_stat_activity sampled every 20 ms for backends waiting on a lock (wait_event_type 'Lock';
the claim statement skips locked rows, so this should stay near zero).

Needs root (network namespaces). Run:

    .venv/bin/python benchmarks/scaling.py --jobs 20000 --out benchmarks/results/scaling.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "chaos")]
from bench import NOOP, QUEUE  # noqa: E402 (benchmarks/bench.py, beside this file)
from chaos_netns import NetNs  # noqa: E402
from pgcluster import PgCluster  # noqa: E402

from claimq import App  # noqa: E402

# (hosts, processes per host) for each total
LAYOUT = {1: (1, 1), 2: (2, 1), 4: (2, 2), 8: (4, 2)}
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu(cluster: PgCluster) -> float:
    """CPU seconds used so far by every process of the cluster (postmaster and backends)."""
    pid = int((cluster.data / "postmaster.pid").read_text().split()[0])
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True, check=False).stdout.split()
    total = 0.0
    for p in [pid, *map(int, out)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS
    return total


class LockSampler(threading.Thread):
    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.stop = threading.Event()
        self.samples = 0
        self.waiting = 0  # backend-samples waiting on a lock
        self.peak = 0

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(0.02):
                row = conn.execute("SELECT count(*) FROM pg_stat_activity"
                                   " WHERE wait_event_type = 'Lock'").fetchone()
                n = int(row[0]) if row else 0
                self.samples += 1
                self.waiting += n
                self.peak = max(self.peak, n)


def point(cluster: PgCluster, nets: list[NetNs], total: int, jobs: int,
          schema: str | None = None) -> dict[str, object]:
    hosts, per_host = LAYOUT[total]
    schema = schema or f"scale_{total}"
    url = cluster.url(f"?schema={schema}")
    app = App(url)
    app.migrate()
    app.configure_queue(QUEUE, paused=True)
    for start in range(0, jobs, 5000):
        app.enqueue_many([{"task": NOOP, "queue": QUEUE} for _ in range(min(5000, jobs - start))])
    procs = []
    logs = []
    for net in nets[:hosts]:
        log = open(cluster.base / f"{schema}-{net.name}.log", "w+b")  # noqa: SIM115
        logs.append(log)
        env = {**os.environ, "CLAIMQ_DATABASE_URL": url.replace("127.0.0.1", net.host_ip),
               "PYTHONPATH": str(ROOT / "benchmarks")}  # for bench:bench_app
        procs.append(subprocess.Popen(
            [*net.prefix, str(ROOT / ".venv/bin/claimq"), "worker", "bench:bench_app",
             "--queues", QUEUE, "--processes", str(per_host), "--concurrency", "20"],
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
    deadline = time.monotonic() + 60
    while sum(Path(f.name).read_text(errors="replace").count(" started:") for f in logs) < total:
        assert time.monotonic() < deadline, "workers did not start"
        time.sleep(0.1)
    locks = LockSampler(cluster.url())
    locks.start()
    cpu0 = server_cpu(cluster)
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        resumed = conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
        app.configure_queue(QUEUE, paused=False)
        while True:
            row = conn.execute(f"SELECT count(*), max(finished_at) FROM {schema}.archive"
                               ).fetchone()
            assert row is not None
            if row[0] >= jobs:
                break
            time.sleep(0.05)
        cpu = server_cpu(cluster) - cpu0
    locks.stop.set()
    locks.join(5)
    seconds = (row[1] - resumed).total_seconds()
    for p in procs:
        os.killpg(p.pid, 15)
    for p in procs:
        p.wait(30)
    app.close()
    return {"processes": total, "hosts": hosts, "processes_per_host": per_host, "jobs": jobs,
            "drain_seconds": round(seconds, 3), "jobs_per_s": round(jobs / seconds, 1),
            "server_cpu_s": round(cpu, 2),
            "server_cpu_ms_per_1000_jobs": round(cpu / jobs * 1e6, 1),
            "lock_wait_samples": locks.waiting, "lock_wait_peak": locks.peak,
            "samples": locks.samples}


def start_cluster(nets: list[NetNs]) -> PgCluster:
    """A throwaway cluster (fsync on) listening on loopback and the host end of every link,
    open to each namespace's address."""
    addresses = ",".join(["127.0.0.1", *(n.host_ip for n in nets)])
    cluster = PgCluster(settings={"listen_addresses": addresses, "max_connections": "300",
                                  "fsync": "on"})
    cluster.initdb()
    with open(cluster.data / "pg_hba.conf", "a") as hba:
        for net in nets:
            hba.write(f"host all all {net.ns_ip}/32 trust\n")
    cluster.start()
    return cluster


def shards(first: PgCluster, nets: list[NetNs], jobs: int) -> dict[str, object]:
    """Two clusters (shards), half the jobs each, each drained by 2 processes on 2 hosts, both
    at once: the aggregate rate against one cluster's 4-process point."""
    second = start_cluster(nets)
    try:
        out: list[dict[str, object]] = []
        threads = [threading.Thread(target=lambda c=c, n=n, i=i: out.append(
                       point(c, n, 2, jobs // 2, schema=f"shard_{i}")))
                   for i, (c, n) in enumerate([(first, nets[:2]), (second, nets[2:4])])]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        second.destroy()
    slowest = max(float(r["drain_seconds"]) for r in out)  # type: ignore[arg-type]
    return {"shards": 2, "processes": 4, "jobs": jobs, "drain_seconds": slowest,
            "jobs_per_s": round(jobs / slowest, 1), "per_shard": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--points", default="1,2,4,8")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--shards", action="store_true",
                        help="also: two clusters as two shards, each drained by 2 processes on"
                             " 2 hosts of its own at once (the same 4 processes as one point)")
    args = parser.parse_args()
    points = [int(p) for p in args.points.split(",")]
    hosts = max(LAYOUT[p][0] for p in points)
    nets = [NetNs() for _ in range(max(hosts, 4) if args.shards else hosts)]  # shards: 2 x 2
    results = []
    try:
        for net in nets:
            net.__enter__()
        cluster = start_cluster(nets)
        try:
            for total in points:
                result = point(cluster, nets, total, args.jobs)
                results.append(result)
                print(json.dumps(result), flush=True)
            if args.shards:
                results.append(shards(cluster, nets, args.jobs))
                print(json.dumps(results[-1]), flush=True)
        finally:
            cluster.destroy()
    finally:
        for net in nets:
            net.close()
    if args.out:
        args.out.write_text(json.dumps({"command": " ".join(sys.argv), "cores": os.cpu_count(),
                                        "points": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
