"""claimq against its peers, in one run, on one throwaway PostgreSQL 15 cluster.

    .venv/bin/python benchmarks/compare/compare.py            # 3 repetitions, ~10-15 minutes

What it does (see README.md beside this file):

1. Installs the peers' current PyPI releases (pgqueuer, procrastinate, chancy, huey, with
   asyncpg and psycopg) into benchmarks/compare/.peers-venv (`pip install --upgrade`).
2. Creates a PostgreSQL cluster of its own: initdb in a temporary directory, its own port,
   default settings (fsync on), run as the postgres OS user when started as root.
3. Repeats, interleaved (the order rotates each repetition), on a fresh database per run:
   claimq (`benchmarks/bench.py --mode burn`), pgqueuer, procrastinate, chancy (benchmarks/compare/
   peers.py), and the raw-SQL limit: pgbench running claimq's own claim, start and complete
   statements at claimq's batch size (4 clients), plus a claim + token-guarded delete variant.
   Then huey (SqliteHuey) against claimq on SQLite with 1, 2 and 3 worker processes.
4. Writes benchmarks/results/<date>-<HHMM>-compare.json (every run, medians, min-max, versions,
   settings, machine, the command) and puts the table into README.md (its Latest results).

Every system gets the same workload: bulk-enqueue N no-op jobs (timed), then drain them with
one worker process at concurrency C, timed from the first handler call to the last job
recorded as done. ANALYZE runs after the enqueue (not timed) for every system alike.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BENCH = ROOT / "benchmarks" / "bench.py"
RESULTS = ROOT / "benchmarks" / "results"
PEERS_VENV = HERE / ".peers-venv"
PEERS_PY = PEERS_VENV / "bin" / "python"
GRAPHILE = HERE / "graphile"  # package.json + package-lock.json; node_modules by `npm ci`
GRAPHILE_NODE = GRAPHILE / "node_modules" / ".bin" / "node"  # Node 22 from the npm registry
PEER_PACKAGES = ["pgqueuer", "procrastinate", "chancy", "huey", "asyncpg", "psycopg[binary]",
                 "psycopg-pool"]
VERSIONED = ["pgqueuer", "procrastinate", "chancy", "huey", "asyncpg", "psycopg",
             "psycopg-pool"]
PG_SYSTEMS = ["claimq", "claimq_tuned", "graphile_throughput", "graphile_default", "pgqueuer",
              "procrastinate", "chancy", "raw_sql", "raw_sql_serial", "raw_sql_delete"]
# claimq's best documented setting for a deep backlog of fast jobs (docs/workers.md)
CLAIMQ_TUNED = ["--batch", "100", "--prefetch", "480"]
PG_SETTINGS = ["server_version", "fsync", "synchronous_commit", "full_page_writes", "wal_level",
               "shared_buffers", "max_connections", "max_wal_size", "checkpoint_timeout",
               "work_mem", "autovacuum", "jit", "wal_sync_method"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], *, timeout: float = 900, check: bool = True,
        env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(cmd)} exited {proc.returncode}\n{proc.stdout[-2000:]}\n"
            f"{proc.stderr[-4000:]}"
        )
    return proc


# -- the peers' virtual environment -------------------------------------------------------------


def ensure_peers(upgrade: bool) -> dict[str, str]:
    if not PEERS_PY.exists():
        log(f"creating {PEERS_VENV}")
        run([sys.executable, "-m", "venv", str(PEERS_VENV)])
        upgrade = True
    if upgrade:
        log("installing the peers' current releases from PyPI: " + " ".join(PEER_PACKAGES))
        run([str(PEERS_PY), "-m", "pip", "install", "--quiet", "--upgrade", *PEER_PACKAGES],
            timeout=900)
    out = run([str(PEERS_PY), "-c",
               "import json, importlib.metadata as m; "
               f"print(json.dumps({{p: m.version(p) for p in {VERSIONED!r}}}))"])
    return dict(json.loads(out.stdout))


def ensure_graphile() -> dict[str, str]:
    """graphile-worker and Node >= 22 (the `node` package) from the npm registry, at the versions
    pinned by graphile/package-lock.json: `npm ci` whenever node_modules is missing or older
    than the lock file."""
    lock = GRAPHILE / "package-lock.json"
    installed = GRAPHILE / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        log(f"npm ci in {GRAPHILE}")
        run(["npm", "ci", "--no-audit", "--no-fund"], timeout=900, cwd=GRAPHILE)
    gw = json.loads((GRAPHILE / "node_modules" / "graphile-worker" / "package.json").read_text())
    node = run([str(GRAPHILE_NODE), "--version"]).stdout.strip()
    return {"graphile-worker": str(gw["version"]), "node": node}


# -- the throwaway cluster ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """initdb + pg_ctl in a temporary directory, as the postgres OS user when we are root."""

    def __init__(self, pg_bin: Path, base: str | None, options: str = "") -> None:
        self.bin = pg_bin
        self.options = options  # extra server options (`-c name=value ...`)
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="claimq-compare-pg-", dir=base))
        self.data = self.dir / "data"
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "postgres", "postgres")

    def _pg(self, tool: str, *args: str, timeout: float = 120) -> str:
        cmd = [str(self.bin / tool), *args]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return run(cmd, timeout=timeout).stdout

    def start(self) -> None:
        log(f"initdb {self.data} (port {self.port})")
        self._pg("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                 "--no-instructions")
        self._pg("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-w",
                 "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} {self.options}",
                 "start")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def dsn(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def sql(self, query: str, db: str = "postgres") -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.dsn(db), autocommit=True) as conn:
            cur = conn.execute(query)
            return list(cur.fetchall()) if cur.description is not None else []

    @contextlib.contextmanager
    def database(self, name: str) -> Iterator[str]:
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.sql(f'CREATE DATABASE "{name}"')
        try:
            yield self.dsn(name)
        finally:
            self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def settings(self) -> dict[str, str]:
        names = ", ".join(f"'{n}'" for n in PG_SETTINGS)
        rows = self.sql(f"SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings "
                        f"WHERE name IN ({names}) ORDER BY name")
        return {name: value for name, value in rows}


# -- one run of each system ---------------------------------------------------------------------


def claimq_burn(database: str, a: argparse.Namespace, processes: int = 1,
                extra: list[str] | None = None) -> dict[str, Any]:
    cmd = [sys.executable, str(BENCH), "--mode", "burn", "--jobs", str(a.jobs),
           "--processes", str(processes), "--concurrency", str(a.concurrency),
           "--enqueue-batch", str(a.enqueue_batch), "--database", database, "--json",
           "--metrics", *(extra or [])]  # --metrics: worker registry on, /metrics served
    if database.startswith("postgresql"):
        cmd.append("--analyze")
    out = json.loads(run(cmd, timeout=a.timeout).stdout)
    return {
        "enqueue": out["enqueue"]["jobs_per_s"], "drain": out["drain"]["jobs_per_s"],
        "ok": out["verify"]["ok"], "batch": out["batch"], "counters": out.get("counters"),
        "detail": {k: out[k] for k in ("enqueue", "drain", "verify")},
    }


def peer(system: str, a: argparse.Namespace, *, dsn: str = "", file: str = "",
         processes: int = 1) -> dict[str, Any]:
    cmd = [str(PEERS_PY), str(HERE / "peers.py"), system, "--jobs", str(a.jobs),
           "--concurrency", str(a.concurrency), "--enqueue-batch", str(a.enqueue_batch),
           "--processes", str(processes), "--timeout", str(a.timeout)]
    cmd += ["--dsn", dsn, "--analyze"] if dsn else ["--file", file]
    proc = run(cmd, timeout=a.timeout + 120, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"{system} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    out = json.loads(lines[-1])
    return {
        "enqueue": out["enqueue"]["jobs_per_s"], "drain": out["drain"]["jobs_per_s"],
        "ok": out["verify"]["ok"], "version": out["version"], "settings": out["settings"],
        "detail": {k: out[k] for k in ("enqueue", "drain", "verify")},
    }


def _substitute(sql: str, values: dict[str, str]) -> str:
    out = re.sub(r"%\((\w+)\)s", lambda m: values[m.group(1)] if m.group(1) in values
                 else m.group(0), sql)
    left = re.findall(r"%\((\w+)\)s", out)
    if left:
        raise RuntimeError(f"pgbench script: no value for parameters {left}")
    return "\n".join(ln for ln in out.splitlines() if not ln.strip().startswith("--")).strip()


def pgbench_scripts(batch: int, schema: str = "claimq") -> dict[str, str]:
    """claimq's own statement as pgbench scripts. The worker's loop: settle.sql completes the
    previous batch (guarded by its claim tokens) and claims the next, one statement per batch
    (pgbench keeps :ids and :tokens between transactions; `-D` starts them empty). And a
    variant that claims with settle.sql and ends each batch with a token-guarded DELETE."""
    from claimq.backends._sqlfiles import load_queries

    q = load_queries("claimq.backends.postgres", schema)
    settle = _substitute(q.settle, {
        "worker_id": "'pgbench'", "queues": "NULL", "limit": str(batch), "lease": "NULL",
        "now": "NULL", "skip": "NULL",  # the server's clock; no task passed over
        "start": "true", "limited": "'{}'", "ids": ":ids", "tokens": ":tokens",
        "results": "array_fill(NULL::jsonb, ARRAY[cardinality(:ids::bigint[])])"})
    body, sep, _ = settle.rpartition("\nSELECT CASE WHEN coalesce(c.nth, 1) = 1")
    if not sep:
        raise RuntimeError("settle.sql changed shape: update pgbench_scripts")
    # One row for \gset: the claimed ids and tokens, for the next transaction to complete.
    loop = (f"{body}\nSELECT (SELECT count(*) FROM archived) AS archived_now, "
            "coalesce((SELECT array_agg(id)::text FROM claimed), '{}') AS ids, "
            "coalesce((SELECT array_agg(claim_token)::text FROM claimed), '{}') AS tokens\n"
            "\\gset\n")
    claim_only = loop.replace(":ids::bigint[]", "'{}'::bigint[]").replace(
        ":tokens::uuid[]", "'{}'::uuid[]")
    delete = claim_only + (
        f"DELETE FROM {schema}.jobs j USING unnest(:ids::bigint[], :tokens::uuid[]) "
        "AS o(id, token) WHERE j.id = o.id AND j.claim_token = o.token;\n")
    return {"raw_sql": loop, "raw_sql_serial": loop, "raw_sql_delete": delete}


def raw_sql(system: str, dsn: str, cluster: Cluster, a: argparse.Namespace, batch: int,
            workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(BENCH.parent))
    from bench import NOOP, QUEUE, make_app

    app = make_app(dsn)
    try:
        app.migrate()
        started = time.perf_counter()
        for offset in range(0, a.jobs, a.enqueue_batch):
            n = min(a.enqueue_batch, a.jobs - offset)
            app.enqueue_many([{"task": NOOP, "queue": QUEUE}] * n)
        enqueue = a.jobs / (time.perf_counter() - started)
    finally:
        app.close()
    db = dsn.rsplit("/", 1)[1]
    cluster.sql("ANALYZE", db)
    script = workdir / f"{system}.sql"
    script.write_text(pgbench_scripts(batch)[system])
    clients = 1 if system == "raw_sql_serial" else a.pgbench_clients
    # One more transaction per client than the jobs need: each completes the batch before it.
    # (A client's last may still claim a few jobs that a slower client left: counted as not
    # done, since nothing completes them.)
    per_client = max(a.jobs // (batch * clients), 1) + 1
    out = run([str(cluster.bin / "pgbench"), "-n", "-M", "prepared", "-c", str(clients),
               "-D", "ids={}", "-D", "tokens={}",
               "-j", str(min(clients, os.cpu_count() or 1)), "-t", str(per_client),
               "-f", str(script), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres",
               db], timeout=a.timeout).stdout
    tps_match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    txns_match = re.search(r"number of transactions actually processed: (\d+)", out)
    if tps_match is None or txns_match is None:
        raise RuntimeError(f"cannot read pgbench's output:\n{out}")
    tps, txns = float(tps_match.group(1)), int(txns_match.group(1))
    left = cluster.sql("SELECT count(*) FROM claimq.jobs", db)[0][0]
    pending = cluster.sql("SELECT count(*) FROM claimq.jobs WHERE status = 'pending'", db)[0][0]
    archived = cluster.sql("SELECT count(*) FROM claimq.archive", db)[0][0]
    done = a.jobs - left
    seconds = txns / tps
    # Every job claimed; every claimed one done but the few a client's last transaction took.
    ok = pending == 0 and left <= clients * batch and (
        archived == 0 if system == "raw_sql_delete" else archived == done)
    return {"enqueue": enqueue, "drain": done / seconds, "ok": ok,
            "detail": {"tps": tps, "transactions": txns, "jobs_done": done, "left": left,
                       "archived": archived, "seconds": seconds, "batch": batch,
                       "clients": clients}}


def graphile(mode: str, dsn: str, a: argparse.Namespace) -> dict[str, Any]:
    cmd = [str(GRAPHILE_NODE), str(GRAPHILE / "peer.mjs"), "--mode", mode, "--dsn", dsn,
           "--jobs", str(a.jobs), "--concurrency", str(a.concurrency),
           "--enqueue-batch", str(a.enqueue_batch), "--timeout", str(a.timeout), "--analyze"]
    out = json.loads(run(cmd, timeout=a.timeout + 60).stdout)
    return {"enqueue": out["enqueue"]["jobs_per_s"], "drain": out["drain"]["jobs_per_s"],
            "ok": out["verify"]["ok"], "detail": out}


def pg_run(system: str, dsn: str, cluster: Cluster, a: argparse.Namespace, batch: int,
           workdir: Path) -> dict[str, Any]:
    if system == "claimq":
        return claimq_burn(dsn, a)
    if system == "claimq_tuned":
        return claimq_burn(dsn, a, extra=CLAIMQ_TUNED)
    if system.startswith("graphile_"):
        return graphile(system.removeprefix("graphile_"), dsn, a)
    if system.startswith("raw_sql"):
        return raw_sql(system, dsn, cluster, a, batch, workdir)
    return peer(system, a, dsn=dsn)


def sqlite_run(system: str, path: Path, processes: int, a: argparse.Namespace) -> dict[str, Any]:
    if system == "claimq":
        return claimq_burn(f"sqlite:///{path}", a, processes=processes)
    return peer("huey", a, file=str(path), processes=processes)


def attempt(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """One run; a failure is recorded (and left out of the medians), the comparison goes on."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        log(f"  FAILED: {str(exc)[-1500:]}")
        return {"enqueue": None, "drain": None, "ok": False, "error": str(exc)[-4000:]}


def report_run(res: dict[str, Any]) -> None:
    if res.get("drain") is not None:
        log(f"  enqueue {res['enqueue']:,.0f}/s  drain {res['drain']:,.0f}/s  ok={res['ok']}")


# -- aggregation and output ---------------------------------------------------------------------


def summarize(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def fmt(s: dict[str, Any] | None) -> str:
    if not s or s.get("median") is None:
        return "–"
    return f"{s['median']:,.0f} ({s['min']:,.0f}–{s['max']:,.0f})"


LABELS = {
    "claimq": "claimq, defaults",
    "claimq_tuned": "claimq, `batch=100, prefetch=480`",
    "graphile_throughput": "graphile-worker, high-throughput mode (local queue 500, batched "
                           "completions)",
    "graphile_default": "graphile-worker, defaults",
    "pgqueuer": "pgqueuer",
    "procrastinate": "procrastinate",
    "chancy": "chancy",
    "raw_sql": "raw SQL limit: claimq's settle statement, complete + claim (pgbench, 4 clients)",
    "raw_sql_serial": "raw SQL, one client: claimq's settle statement back to back (pgbench -c 1)",
    "raw_sql_delete": "raw SQL: claimq's claim + token-guarded DELETE (pgbench, 4 clients)",
}


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    w = report["workload"]
    v = report["versions"]
    lines = [
        f"# claimq vs peers — {report['date']}",
        "",
        f"Workload: bulk-enqueue {w['jobs']:,} no-op jobs (chunks of {w['enqueue_batch']:,}), "
        f"drain with 1 worker process at concurrency {w['concurrency']}; "
        f"{report['repetitions']} interleaved repetitions; median (min–max) jobs/s. "
        f"PostgreSQL {report['postgres']['settings'].get('server_version', '?')} throwaway "
        f"cluster (default settings, fsync {report['postgres']['settings'].get('fsync')}); "
        f"{report['machine']['cpus']} CPUs; load average before/after "
        f"{report['machine']['loadavg_before']} / {report['machine']['loadavg_after']}.",
        "",
        "| system | version | bulk enqueue jobs/s | drain jobs/s |",
        "| --- | --- | ---: | ---: |",
    ]
    for key in PG_SYSTEMS:
        if key not in s:
            continue
        version = (v.get("claimq") if key.startswith(("claimq", "raw"))
                   else f"{v.get('graphile-worker', '?')} (Node {v.get('node', '?')})"
                   if key.startswith("graphile") else v.get(key, "?"))
        enq = "–" if key.startswith("raw") else fmt(s[key]["enqueue"])
        lines.append(f"| {LABELS[key]} | {version} | {enq} | {fmt(s[key]['drain'])} |")
    r = report["ratios"]
    lines += ["", "Ratios (medians):", ""]
    for name, value in r.items():
        lines.append(f"- {name}: {value}")
    if any(k.startswith("sqlite:") for k in s):
        lines += ["", f"SQLite ({w['jobs']:,} jobs; claimq concurrency {w['concurrency']} per "
                  "process, huey one task at a time per process):", "",
                  "| processes | claimq enqueue | claimq drain | huey enqueue | huey drain |",
                  "| ---: | ---: | ---: | ---: | ---: |"]
        for n in w["sqlite_processes"]:
            c, h = s.get(f"sqlite:claimq:{n}", {}), s.get(f"sqlite:huey:{n}", {})
            lines.append(f"| {n} | {fmt(c.get('enqueue'))} | {fmt(c.get('drain'))} | "
                         f"{fmt(h.get('enqueue'))} | {fmt(h.get('drain'))} |")
    failed = [f"{r['system']} (rep {r['rep']})" for r in report["runs"] if not r.get("ok")]
    lines += ["", "Exactly-once / completeness checks: "
              + ("all passed." if not failed else "FAILED for " + ", ".join(failed)), "",
              f"Command: `{report['command']}`  ", f"Results: `{report['json']}`", ""]
    return "\n".join(lines)


def ratio(a: float | None, b: float | None, pct: bool = False) -> str:
    if not a or not b:
        return "–"
    return f"{100 * a / b:.0f} %" if pct else f"{a / b:.2f}×"


def machine() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError):
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    return {"cpus": os.cpu_count(), "cpu_model": cpu, "memory": mem,
            "platform": platform.platform(), "python": platform.python_version()}


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def git_describe() -> str:
    proc = run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], check=False)
    return proc.stdout.strip() or "?"


def update_readme(table: str) -> None:
    readme = HERE / "README.md"
    if not readme.exists():
        return
    text = readme.read_text()
    start, end = "<!-- latest:start -->", "<!-- latest:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _old, tail = rest.split(end, 1)
        readme.write_text(f"{head}{start}\n{table}\n{end}{tail}")


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    p = argparse.ArgumentParser(description="claimq vs pgqueuer, procrastinate, chancy, huey "
                                            "and the raw-SQL limit, in one run.")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--jobs", type=int, default=20_000)
    p.add_argument("--concurrency", type=int, default=20)
    p.add_argument("--enqueue-batch", type=int, default=5000)
    p.add_argument("--pgbench-clients", type=int, default=4)
    p.add_argument("--systems", default=",".join(PG_SYSTEMS),
                   help="PostgreSQL systems to run (comma separated)")
    p.add_argument("--sqlite-processes", default="1,2,3",
                   help="worker processes for the SQLite comparison ('' skips it)")
    p.add_argument("--pg-bin", default="/usr/lib/postgresql/15/bin")
    p.add_argument("--cluster-base", default=None, help="parent directory of the cluster")
    p.add_argument("--no-upgrade", action="store_true",
                   help="reuse .peers-venv as it is (default: pip install --upgrade)")
    p.add_argument("--timeout", type=float, default=600.0, help="per run")
    p.add_argument("--out", default=str(RESULTS))
    a = p.parse_args()
    systems = [s for s in a.systems.split(",") if s]
    sqlite_procs = [int(n) for n in a.sqlite_processes.split(",") if n]
    started_at = dt.datetime.now(dt.UTC)
    load_before = loadavg()

    versions = {"claimq": git_describe(), **ensure_peers(not a.no_upgrade)}
    if any(s.startswith("graphile") for s in systems):
        versions.update(ensure_graphile())
    cluster = Cluster(Path(a.pg_bin), a.cluster_base)
    runs: list[dict[str, Any]] = []
    workdir = Path(tempfile.mkdtemp(prefix="claimq-compare-"))
    try:
        cluster.start()
        settings = cluster.settings()
        log(f"PostgreSQL {settings.get('server_version')} on port {cluster.port}")
        batch = a.concurrency
        for rep in range(1, a.reps + 1):
            order = systems[rep - 1:] + systems[:rep - 1]  # rotate: no system always first
            for system in order:
                with cluster.database(f"r{rep}_{system}") as dsn:
                    load = loadavg()
                    log(f"rep {rep}: {system} (load average {load})")
                    res = attempt(pg_run, system, dsn, cluster, a, batch, workdir)
                    res["loadavg_before"], res["loadavg_after"] = load, loadavg()
                    if system == "claimq" and res.get("batch"):
                        batch = int(res["batch"])
                runs.append({"rep": rep, "system": system, **res})
                report_run(res)
            for n in sqlite_procs:
                pair = ["claimq", "huey"] if (rep + n) % 2 else ["huey", "claimq"]
                for system in pair:
                    path = workdir / f"{system}-{rep}-{n}.db"
                    log(f"rep {rep}: SQLite {system} x{n} processes")
                    res = attempt(sqlite_run, system, path, n, a)
                    for suffix in ("", "-wal", "-shm"):
                        with contextlib.suppress(OSError):
                            os.remove(f"{path}{suffix}")
                    runs.append({"rep": rep, "system": f"sqlite:{system}:{n}", **res})
                    report_run(res)
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    summary: dict[str, Any] = {}
    for key in dict.fromkeys(r["system"] for r in runs):
        mine = [r for r in runs if r["system"] == key]
        summary[key] = {"enqueue": summarize([r["enqueue"] for r in mine if r["ok"]]),
                        "drain": summarize([r["drain"] for r in mine if r["ok"]]),
                        "failed_runs": sum(1 for r in mine if not r["ok"])}

    def med(key: str, what: str) -> float | None:
        value: float | None = summary.get(key, {}).get(what, {}).get("median")
        return value

    def paired(a_key: str, b_key: str, what: str) -> float | None:
        """Median over the repetitions of a/b within each one: the two ran minutes apart at
        most, so a drift of the machine's speed over the run cancels out."""
        by_rep: dict[int, dict[str, float]] = {}
        for r in runs:
            if r["ok"] and r.get(what):
                by_rep.setdefault(r["rep"], {})[r["system"]] = r[what]
        values = [m[a_key] / m[b_key] for m in by_rep.values() if a_key in m and b_key in m]
        return float(statistics.median(values)) if values else None

    def paired_text(a_key: str, b_key: str, what: str, pct: bool = False) -> str:
        value = paired(a_key, b_key, what)
        return ratio(value, 1.0, pct=pct)

    ratios = {
        "claimq defaults / graphile-worker high-throughput, drain":
            ratio(med("claimq", "drain"), med("graphile_throughput", "drain")),
        "claimq defaults / graphile-worker high-throughput, drain, median of the "
        "per-repetition ratios": paired_text("claimq", "graphile_throughput", "drain"),
        "claimq batch=100 prefetch=480 / graphile-worker high-throughput, drain":
            ratio(med("claimq_tuned", "drain"), med("graphile_throughput", "drain")),
        "claimq batch=100 prefetch=480 / graphile-worker high-throughput, drain, median of "
        "the per-repetition ratios": paired_text("claimq_tuned", "graphile_throughput", "drain"),
        "claimq defaults / graphile-worker defaults, drain":
            ratio(med("claimq", "drain"), med("graphile_default", "drain")),
        "claimq defaults / graphile-worker high-throughput, bulk enqueue":
            ratio(med("claimq", "enqueue"), med("graphile_throughput", "enqueue")),
        "claimq / pgqueuer, drain": ratio(med("claimq", "drain"), med("pgqueuer", "drain")),
        "claimq / pgqueuer, bulk enqueue": ratio(med("claimq", "enqueue"),
                                                 med("pgqueuer", "enqueue")),
        "claimq / pgqueuer, drain, median of the per-repetition ratios":
            paired_text("claimq", "pgqueuer", "drain"),
        "claimq / pgqueuer, bulk enqueue, median of the per-repetition ratios":
            paired_text("claimq", "pgqueuer", "enqueue"),
        f"claimq drain as % of the one-client raw SQL, median of the per-repetition ratios "
        f"(batch {batch})": paired_text("claimq", "raw_sql_serial", "drain", pct=True),
        f"claimq drain as % of the raw-SQL limit (claimq's statements, batch {batch})":
            ratio(med("claimq", "drain"), med("raw_sql", "drain"), pct=True),
        f"claimq drain as % of the one-client raw SQL (claimq's statements, batch {batch})":
            ratio(med("claimq", "drain"), med("raw_sql_serial", "drain"), pct=True),
        f"claimq drain as % of raw SQL claim+DELETE (batch {batch})":
            ratio(med("claimq", "drain"), med("raw_sql_delete", "drain"), pct=True),
        f"claimq drain as % of the raw-SQL limit, median of the per-repetition ratios "
        f"(batch {batch})": paired_text("claimq", "raw_sql", "drain", pct=True),
        f"claimq drain as % of raw SQL claim+DELETE, median of the per-repetition ratios "
        f"(batch {batch})": paired_text("claimq", "raw_sql_delete", "drain", pct=True),
    }
    for n in sqlite_procs:
        ratios[f"SQLite, {n} process(es): claimq / huey, drain"] = ratio(
            med(f"sqlite:claimq:{n}", "drain"), med(f"sqlite:huey:{n}", "drain"))
    date = started_at.strftime("%Y-%m-%d")
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{date}-{started_at.strftime('%H%M')}-compare.json"
    report = {
        "date": started_at.isoformat(timespec="seconds"),
        "duration_s": round((dt.datetime.now(dt.UTC) - started_at).total_seconds(), 1),
        "command": shlex.join([os.path.relpath(sys.executable, ROOT),
                               os.path.relpath(__file__, ROOT), *sys.argv[1:]]),
        "json": os.path.relpath(json_path, ROOT),
        "repetitions": a.reps,
        "workload": {"jobs": a.jobs, "concurrency": a.concurrency, "worker_processes": 1,
                     "enqueue_batch": a.enqueue_batch, "claim_batch": batch,
                     "pgbench_clients": a.pgbench_clients, "sqlite_processes": sqlite_procs,
                     "handler": "async no-op (huey: sync no-op)",
                     "claimq_worker": "worker registry on, Prometheus /metrics served (--metrics)",
                     "drain_clock": "first handler call -> last job recorded as done",
                     "analyze_after_enqueue": True},
        "versions": versions,
        "postgres": {"settings": settings, "cluster": "initdb defaults, own port, fsync on"},
        "machine": {**machine(), "loadavg_before": load_before, "loadavg_after": loadavg()},
        "summary": summary,
        "ratios": ratios,
        "runs": runs,
    }
    json_path.write_text(json.dumps(report, indent=2) + "\n")
    table = markdown(report)
    update_readme(table)  # README.md's Latest results: the table, once (no results/latest.md)
    print(table)
    return 0 if all(r.get("ok") for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
