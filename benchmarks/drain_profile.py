"""Where the time goes in one claimq worker's drain on PostgreSQL, both sides of the wire.

    .venv/bin/python benchmarks/drain_profile.py --jobs 20000 --reps 3 --graphile --cprofile

A throwaway PostgreSQL cluster of its own (as benchmarks/compare/compare.py makes it: initdb
defaults, fsync on), started with `pg_stat_statements` preloaded: the cluster is this script's
alone, so its WAL position, transaction ids and statement statistics count this drain only
(the shared server on 5432 is not touched, and needs no restart). Each setting runs on a fresh
database, in rotating order: claimq's defaults; the defaults before issue 27 (`batch=20,
prefetch=20`); `batch=100, prefetch=480`; with --graphile, graphile-worker's high-throughput
mode (benchmarks/compare/graphile/peer.mjs measures the same window itself). For claimq:
bulk-enqueue N no-op jobs into a paused queue, ANALYZE, start ONE worker process at
concurrency 20 (benchmarks/bench.py's worker process; registry and /metrics off), snapshot,
open the queue, wait for the last completion, snapshot again. Between the snapshots:

- the worker process's CPU (utime + stime from /proc, the drain only) and the cluster's
  (the postmaster and every process it started: backends, WAL writer, checkpointer ...);
- write transactions (transaction ids handed out: pg_stat_database's commit counter lags by
  up to a second) and WAL bytes (pg_current_wal_lsn), per job and per second;
- each statement's calls, rows, server execution time and WAL (pg_stat_statements);
- with --cprofile, two more drains for each of the first two settings with the worker's
  event-loop thread under cProfile from its first handler call: on the wall clock (its time
  split into waiting in epoll, that is the loop idle, asyncio's machinery, claimq, psycopg and
  the rest), then on the thread's CPU clock (where its CPU goes). cProfile's overhead
  inflates the Python side; the split is what counts.

Prints a JSON report (--out writes it too).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "compare")]

import bench  # noqa: E402  (benchmarks/bench.py)
from compare import (  # noqa: E402  (benchmarks/compare/compare.py)
    GRAPHILE,
    GRAPHILE_NODE,
    Cluster,
    ensure_graphile,
    loadavg,
    run,
)

TICK = os.sysconf("SC_CLK_TCK")
SETTINGS = {
    "defaults": {},
    "batch=20, prefetch=20 (the defaults before issue 27)": {"batch": 20, "prefetch": 20},
    "batch=100, prefetch=480": {"batch": 100, "prefetch": 480},
}


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, in seconds (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def cluster_pids(cluster: Cluster) -> list[int]:
    """The postmaster and every process it started."""
    master = int((cluster.data / "postmaster.pid").read_text().split()[0])
    pids = [master]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == master:
                    pids.append(int(entry.name))
    return pids


def snapshot(cluster: Cluster, db: str, worker_pid: int) -> dict[str, Any]:
    # Write transactions = transaction ids handed out (the cluster is ours alone; this
    # snapshot's own reads take none). pg_stat_database's counters lag by up to a second.
    row = cluster.sql(
        "SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, "
        "pg_snapshot_xmax(pg_current_snapshot())::text::bigint", db)[0]
    return {"t": time.monotonic(), "wal": int(row[0]), "commits": int(row[1]),
            "worker_cpu": cpu_seconds(worker_pid),
            "server_cpu": sum(cpu_seconds(p) for p in cluster_pids(cluster))}


def _profiled_worker(url: str, options: dict[str, Any], slot: int, stats: Any, results: Any,
                     out: str, cpu: bool) -> None:
    """bench's worker process with its event loop's thread under cProfile from the first
    handler call (the no-op handler turns it on) to the worker's stop: start-up not counted.
    `cpu`: the thread's CPU clock (where its CPU goes; waits cost nothing) instead of the wall
    clock (where its time goes, waiting in epoll included; on a loaded machine a preempted
    function is charged the time it was off the CPU)."""
    prof = cProfile.Profile(time.thread_time) if cpu else cProfile.Profile()
    plain = bench.noop

    async def noop() -> None:
        if bench._first_call is None:
            prof.enable()
        await plain()

    noop.__module__, noop.__qualname__ = plain.__module__, plain.__qualname__
    bench.noop = noop  # make_app (in _worker_process) registers this one
    try:
        bench._worker_process(url, options, slot, stats, results)
    finally:
        prof.disable()
        prof.dump_stats(out)


def split_profile(path: str) -> dict[str, Any]:
    """cProfile's own time by where it was spent."""
    st = pstats.Stats(path)
    groups: dict[str, float] = {}
    top: list[tuple[float, str]] = []
    raw: dict[Any, Any] = st.stats  # type: ignore[attr-defined]
    for (file, line, name), (_cc, _nc, tottime, _ct, _callers) in raw.items():
        if "epoll" in name or name.endswith("'select' of 'select.epoll' objects>"):
            key = "waiting in epoll (event loop idle)"
        elif "/asyncio/" in file or "_asyncio" in name:
            key = "asyncio (loop, tasks, futures, events)"
        elif "/claimq/" in file:
            key = "claimq"
        elif "/psycopg" in file or "psycopg" in name:
            key = "psycopg (+ libpq calls)"
        elif file == "~":
            key = "builtins (C functions called from Python)"
        else:
            key = "other Python"
        groups[key] = groups.get(key, 0.0) + tottime
        top.append((tottime, f"{Path(file).name}:{line}({name})"))
    total = sum(groups.values())
    return {"total_s": total,
            "share": {k: round(v / total, 4) for k, v in sorted(groups.items(),
                                                                  key=lambda kv: -kv[1])},
            "top_tottime": [{"s": round(t, 4), "where": w} for t, w in sorted(top)[-25:][::-1]]}


def one_drain(cluster: Cluster, db: str, jobs: int, concurrency: int,
              options: dict[str, Any], profile_to: str | None,
              cpu: bool = False) -> dict[str, Any]:
    url = cluster.dsn(db)
    app = bench.make_app(url)
    try:
        app.migrate()
        app.configure_queue(bench.QUEUE, paused=True)
        spec = {"task": bench.NOOP, "queue": bench.QUEUE}
        for offset in range(0, jobs, 5000):
            app.enqueue_many([spec] * min(5000, jobs - offset))
        cluster.sql("ANALYZE", db)
        worker_options = {"concurrency": concurrency, "batch": None, "prefetch": None,
                          "poll_interval": 1.0, "grace": 10.0, **options}
        workers = bench.Workers(url, 1, worker_options)
        if profile_to is not None:
            workers.procs = [workers.ctx.Process(
                target=_profiled_worker,
                args=(url, worker_options, 0, workers.stats, workers.results, profile_to, cpu),
                name="claimq-bench-worker-0")]
        workers.start()
        try:
            pid = workers.procs[0].pid
            assert pid is not None
            cluster.sql("SELECT pg_stat_statements_reset()", db)
            before = snapshot(cluster, db, pid)
            app.resume(bench.QUEUE)
            app.backend.wake_workers([bench.QUEUE])
            deadline = time.monotonic() + 600
            while workers.completed < jobs:
                if time.monotonic() > deadline or not workers.alive():
                    raise RuntimeError(f"drain stopped at {workers.completed} of {jobs}")
                time.sleep(0.002)
            after = snapshot(cluster, db, pid)
            statements = cluster.sql(
                "SELECT calls, rows, total_exec_time, mean_exec_time, wal_bytes, wal_records, "
                "wal_fpi, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements "
                "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND toplevel ORDER BY total_exec_time DESC LIMIT 8", db)
        finally:
            counters = workers.stop()
    finally:
        app.close()
    first, last = workers.first_call, workers.last_done
    drain_s = (last - first) if first else after["t"] - before["t"]
    window = after["t"] - before["t"]  # the snapshot window (queue opened .. all done)
    settle = next((s for s in statements if "open_queues" in s[7]), None)
    out: dict[str, Any] = {
        "drain_jobs_per_s": jobs / drain_s,
        "drain_s": drain_s,
        "window_s": window,
        "worker_cpu_us_per_job": 1e6 * (after["worker_cpu"] - before["worker_cpu"]) / jobs,
        "worker_cpu_share_of_window": (after["worker_cpu"] - before["worker_cpu"]) / window,
        "server_cpu_us_per_job": 1e6 * (after["server_cpu"] - before["server_cpu"]) / jobs,
        "server_cpu_share_of_window": (after["server_cpu"] - before["server_cpu"]) / window,
        "commits": after["commits"] - before["commits"],
        "commits_per_s": (after["commits"] - before["commits"]) / window,
        "wal_bytes_per_job": (after["wal"] - before["wal"]) / jobs,
        "wal_records_per_job": sum(int(s[5]) for s in statements) / jobs,
        "full_page_images": sum(int(s[6]) for s in statements),
        "worker_counters": {k: counters.get(k) for k in ("claims", "completed", "cpu_ms")},
        "statements": [{"calls": c, "rows": r, "total_ms": round(t, 1),
                        "mean_ms": round(m, 3), "wal_bytes": int(w), "wal_records": int(wr),
                        "wal_fpi": int(fpi), "query": q[:100]}
                       for c, r, t, m, w, wr, fpi, q in statements],
    }
    if settle is not None:
        calls, rows, total_ms = settle[0], settle[1], settle[2]
        out["settle"] = {"calls": calls, "rows_per_call": rows / calls if calls else None,
                         "server_ms_per_call": total_ms / calls if calls else None,
                         "wal_bytes_per_row": int(settle[4]) / rows if rows else None,
                         "server_ms_share_of_window": total_ms / 1000 / window,
                         "wall_ms_per_call": 1000 * window / calls if calls else None}
    return out


GRAPHILE_SETTING = "graphile-worker, high-throughput mode"


def graphile_drain(cluster: Cluster, db: str, jobs: int, concurrency: int) -> dict[str, Any]:
    """graphile-worker's high-throughput mode through compare's driver, which measures the same
    window itself: its Node process's CPU, the cluster's CPU, write transactions, WAL."""
    master = (cluster.data / "postmaster.pid").read_text().split()[0]
    out = json.loads(run([str(GRAPHILE_NODE), str(GRAPHILE / "peer.mjs"), "--mode",
                          "throughput", "--dsn", cluster.dsn(db), "--jobs", str(jobs),
                          "--concurrency", str(concurrency), "--analyze",
                          "--postmaster-pid", master], timeout=660).stdout)
    costs = out["drain_costs"]
    window = costs["window_s"]
    return {
        "drain_jobs_per_s": out["drain"]["jobs_per_s"], "drain_s": out["drain"]["seconds"],
        "window_s": window,
        "worker_cpu_us_per_job": costs["worker_cpu_us_per_job"],
        "worker_cpu_share_of_window": costs["worker_cpu_us_per_job"] * jobs / 1e6 / window,
        "server_cpu_us_per_job": costs["server_cpu_us_per_job"],
        "server_cpu_share_of_window": costs["server_cpu_us_per_job"] * jobs / 1e6 / window,
        "commits": costs["write_transactions"],
        "commits_per_s": costs["write_transactions"] / window,
        "wal_bytes_per_job": costs["wal_bytes_per_job"],
        "wal_records_per_job": float("nan"),
        "versions": {"graphile-worker": out["version"], "node": out["settings"]["node"]},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--concurrency", type=int, default=20)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--cprofile", action="store_true")
    p.add_argument("--graphile", action="store_true",
                   help="also graphile-worker's high-throughput mode (npm ci as compare.py)")
    p.add_argument("--pg-bin", default="/usr/lib/postgresql/15/bin")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    load_before = loadavg()
    cluster = Cluster(Path(a.pg_bin), None,
                      options="-c shared_preload_libraries=pg_stat_statements "
                              "-c pg_stat_statements.track=all")
    runs: list[dict[str, Any]] = []
    profiles: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="claimq-profile-"))
    settings = list(SETTINGS) + ([GRAPHILE_SETTING] if a.graphile else [])
    if a.graphile:
        ensure_graphile()
    try:
        cluster.start()
        for rep in range(1, a.reps + 1):
            names = settings[rep - 1:] + settings[:rep - 1]  # rotate
            for name in names:
                with cluster.database(f"p{rep}") as _dsn:
                    cluster.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", f"p{rep}")
                    res = (graphile_drain(cluster, f"p{rep}", a.jobs, a.concurrency)
                           if name == GRAPHILE_SETTING else
                           one_drain(cluster, f"p{rep}", a.jobs, a.concurrency,
                                     SETTINGS[name], None))
                runs.append({"rep": rep, "setting": name, "loadavg": loadavg(), **res})
                print(f"rep {rep} {name}: {res['drain_jobs_per_s']:,.0f} jobs/s, worker "
                      f"{res['worker_cpu_us_per_job']:.1f} µs/job, server "
                      f"{res['server_cpu_us_per_job']:.1f} µs/job, "
                      f"{res['commits_per_s']:,.0f} commits/s, "
                      f"{res['wal_bytes_per_job']:.0f} WAL B/job", file=sys.stderr, flush=True)
        if a.cprofile:
            for name in list(SETTINGS)[:2]:
                for clock in ("wall", "cpu"):
                    path = str(tmp / f"{len(profiles)}.prof")
                    with cluster.database("prof") as _dsn:
                        cluster.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "prof")
                        res = one_drain(cluster, "prof", a.jobs, a.concurrency, SETTINGS[name],
                                        path, cpu=clock == "cpu")
                    profiles[f"{name}, {clock} clock"] = {
                        "drain_jobs_per_s_under_cprofile": res["drain_jobs_per_s"],
                        **split_profile(path)}
    finally:
        cluster.stop()

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs if r["setting"] == name)

    keys = ["drain_jobs_per_s", "worker_cpu_us_per_job", "worker_cpu_share_of_window",
            "server_cpu_us_per_job", "server_cpu_share_of_window", "commits_per_s",
            "wal_bytes_per_job", "wal_records_per_job"]
    summary = {name: {k: med(name, k) for k in keys} for name in settings}
    for name in SETTINGS:
        settles = [r["settle"] for r in runs if r["setting"] == name and "settle" in r]
        if settles:
            summary[name]["settle"] = {k: statistics.median(s[k] for s in settles)
                                       for k in settles[0] if settles[0][k] is not None}
    report = {
        "command": " ".join([os.path.relpath(sys.executable, HERE.parent),
                             os.path.relpath(__file__, HERE.parent), *sys.argv[1:]]),
        "jobs": a.jobs, "concurrency": a.concurrency, "worker_processes": 1,
        "loadavg_before": load_before, "loadavg_after": loadavg(),
        "postgres": "throwaway cluster: initdb defaults, fsync on, pg_stat_statements",
        "summary": summary, "profiles": profiles, "runs": runs,
    }
    text = json.dumps(report, indent=2, default=float)  # numeric columns come as Decimal
    if a.out:
        Path(a.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
