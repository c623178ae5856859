"""Latency (issue 27, item 4): enqueue -> handler start and a schedule's tick -> start, per
backend, against ONE real `claimq worker latency:app` subprocess with the CLI's default options.

    .venv/bin/python benchmarks/latency.py --out benchmarks/results/latency.json
    .venv/bin/python benchmarks/latency.py --backends postgresql --idle 300

For each backend, on a fresh schema (PostgreSQL), database (MariaDB) or file (SQLite):

- **idle**: after a warm-up job, single jobs enqueued one at a time with a random gap
  (`--gap`, default 0.5-1.5 s) between one job's start and the next enqueue. The handler
  records `time.time()` first thing; the sample is that minus the enqueuer's `time.time()`
  just before its `enqueue()` call (one machine, one clock). The enqueue call's own time
  (insert, commit, NOTIFY) is part of the figure; its percentiles are given beside it.
- **loaded**: the worker's drain rate of no-op jobs (`--drain-jobs` bulk-enqueued into the
  paused queue, then opened; rate over first start -> last start), then a producer enqueuing
  at half that rate for `--loaded-seconds`, paced in `enqueue_many` batches every 10 ms; each
  job's latency from its batch's call.
- **schedule**: a second worker started with an `every=1` schedule declared (the smallest
  `every` allowed); the sample is the tick's job's handler start minus its `run_at` (the
  tick's due time, its schedule's `next_run_at` when it was fired).

The load average (1 min) is recorded before and after each case. Results: p50/p95/p99/max in
milliseconds per case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
QUEUE = "claimq-latency"
PROBE = "latency.probe"
TICK = "latency.tick"
SCHEDULE = "latency-tick"
OUT_ENV = "CLAIMQ_LATENCY_OUT"
SCHEDULE_ENV = "CLAIMQ_LATENCY_SCHEDULE"
TRACE_ENV = "CLAIMQ_LATENCY_TRACE"
URLS = {
    "postgresql": "postgresql://postgres@127.0.0.1/postgres",
    "mariadb": "mysql://root@127.0.0.1:3306/test",
    "sqlite": "sqlite:////tmp/claimq-latency.db",
}

# -- the worker's side: the App `claimq worker latency:app` imports ----------------------------

_records: list[str] = []
_lock = threading.Lock()
_flusher: threading.Thread | None = None


def _flush_forever(path: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        while True:
            time.sleep(0.02)
            with _lock:
                lines = _records[:]
                _records.clear()
            if lines:
                out.write("".join(lines))
                out.flush()


def _record(line: str) -> None:
    global _flusher
    with _lock:
        _records.append(line)
        if _flusher is None:
            _flusher = threading.Thread(target=_flush_forever, args=(os.environ[OUT_ENV],),
                                        name="latency-flush", daemon=True)
            _flusher.start()


async def probe(n: int) -> None:
    """A no-op job that records when its handler started."""
    _record(f"p {n} {time.time():.6f}\n")


async def tick() -> None:
    """A schedule's job: records its start against its run_at (the tick's due time)."""
    started = time.time()
    from claimq.logs import current_job

    job = current_job.get()
    due = job.run_at.timestamp() if job is not None and job.run_at is not None else float("nan")
    _record(f"t {job.id if job else 0} {started:.6f} {due:.6f}\n")


def _make_app() -> Any:
    from claimq import App

    made = App()  # CLAIMQ_DATABASE_URL
    made.task(name=PROBE, queue=QUEUE)(probe)
    if os.environ.get(SCHEDULE_ENV):
        made.task(name=TICK, queue=QUEUE)(tick)
        made.periodic(every=1, name=SCHEDULE)(made.tasks[TICK])
    return made


def _trace() -> None:
    """--trace: the worker also records each step of the wake-up path (PostgreSQL): a
    notification read by the listener's thread (n), the fetcher woken on the loop (k), a claim
    sent (c) and returned (r)."""
    from claimq._worker.claims import Claims
    from claimq._worker.fetcher import Fetcher
    from claimq.backends.postgres.backend import _PgListener

    notices, wake, settle = _PgListener.notices, Fetcher.wake, Claims.settle

    def traced_notices(self: Any, timeout: float) -> Any:
        for note in notices(self, timeout):
            _record(f"e n {time.time():.6f}\n")
            yield note

    def traced_wake(self: Any) -> None:
        _record(f"e k {time.time():.6f}\n")
        wake(self)

    async def traced_settle(self: Any, *a: Any, **k: Any) -> Any:
        _record(f"e c {time.time():.6f}\n")
        try:
            return await settle(self, *a, **k)
        finally:
            _record(f"e r {time.time():.6f}\n")

    _PgListener.notices = traced_notices  # type: ignore[method-assign]
    Fetcher.wake = traced_wake  # type: ignore[method-assign]
    Claims.settle = traced_settle  # type: ignore[method-assign]


if __name__ != "__main__" and os.environ.get(OUT_ENV):
    if os.environ.get(TRACE_ENV):
        _trace()
    app = _make_app()

# -- the measuring side ----------------------------------------------------------------------


def load() -> float:
    return round(os.getloadavg()[0], 2)


class Records:
    """The worker's records, read from its file as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.probes: dict[int, float] = {}
        self.ticks: list[tuple[int, float, float]] = []
        self.events: list[tuple[str, float]] = []

    def poll(self) -> None:
        with open(self.path, encoding="utf-8") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind("\n") + 1
        self.offset += len(data[:end].encode())
        for line in data[:end].splitlines():
            parts = line.split()
            if parts[0] == "p":
                self.probes[int(parts[1])] = float(parts[2])
            elif parts[0] == "e":
                self.events.append((parts[1], float(parts[2])))
            else:
                self.ticks.append((int(parts[1]), float(parts[2]), float(parts[3])))

    def wait_probe(self, n: int, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while n not in self.probes:
            if time.monotonic() > deadline:
                raise SystemExit(f"probe {n} did not run within {timeout:.0f}s")
            time.sleep(0.005)
            self.poll()
        return self.probes[n]

    def wait_count(self, ns: range, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            if all(n in self.probes for n in (ns.start, ns.stop - 1)) and \
                    sum(1 for n in ns if n in self.probes) == len(ns):
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"only {sum(1 for n in ns if n in self.probes)} of {len(ns)}"
                                 " jobs ran")
            time.sleep(0.05)


@contextmanager
def worker(url: str, out: Path, *, schedule: bool = False,
           trace: bool = False) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "CLAIMQ_DATABASE_URL": url, OUT_ENV: str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    env.pop(SCHEDULE_ENV, None)
    env.pop(TRACE_ENV, None)
    if trace:
        env[TRACE_ENV] = "1"
    if schedule:
        env[SCHEDULE_ENV] = "1"
    claimq = Path(sys.executable).with_name("claimq")
    proc = subprocess.Popen([str(claimq), "worker", "latency:app", "--log-level", "warning"],
                            env=env, cwd=str(HERE))
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def pct(values: list[float]) -> dict[str, Any]:
    from bench import percentiles

    figures = {k: None if v is None else round(v * 1000.0, 3)
               for k, v in percentiles(values).items()}
    return {**figures, "samples": len(values)}


def steps(records: Records, first: int, lat: list[float],
          call: list[float]) -> dict[str, Any]:
    """--trace: each idle sample split into the wake-up path's steps."""
    parts: dict[str, list[float]] = {}
    for i, (total, took) in enumerate(zip(lat, call, strict=True)):
        start = records.probes[first + i]
        t0 = start - total
        seen = {kind: [t for k, t in records.events if k == kind and t0 <= t <= start]
                for kind in "nkcr"}
        if not all(seen.values()):
            parts.setdefault("missing_step", []).append(total)
            continue
        # the claim that took the job is the last to return before its start (the fetcher's
        # next claim may be sent before the handler runs)
        n, k, r = seen["n"][0], seen["k"][0], seen["r"][-1]
        sent = [t for t in seen["c"] if t <= r]
        if not sent:
            parts.setdefault("missing_step", []).append(total)
            continue
        c = sent[-1]
        for name, value in (("enqueue_call", took), ("call_to_notice", n - t0),
                            ("notice_to_wake", k - n), ("wake_to_claim", c - k),
                            ("claim", r - c), ("claimed_to_handler", start - r)):
            parts.setdefault(name, []).append(value)
    return {name: pct(values) for name, values in parts.items()}


def measure(kind: str, base: str, args: argparse.Namespace) -> dict[str, Any]:
    from bench import Target

    from claimq import App

    target = Target.make(base, fresh=True)
    url = target.url
    result: dict[str, Any] = {"backend": kind, "database": base}
    out = Path(f"/tmp/claimq-latency-{os.getpid()}-{kind}.txt")
    out.write_text("")
    client = App(url)
    try:
        client.migrate()
        records = Records(out)
        n = 0
        with worker(url, out, trace=args.trace):
            # warm-up: the worker is up and has run a job (imports, connections)
            for _ in range(5):
                client.enqueue(PROBE, {"n": n}, queue=QUEUE)
                records.wait_probe(n, timeout=60)
                n += 1
            time.sleep(2.0)  # the fetcher backs off to its poll interval: idle
            # (a) idle
            load_before = load()
            lat: list[float] = []
            call: list[float] = []
            first_idle = n
            for _ in range(args.idle):
                t0 = time.time()
                client.enqueue(PROBE, {"n": n}, queue=QUEUE)
                t1 = time.time()
                started = records.wait_probe(n)
                lat.append(started - t0)
                call.append(t1 - t0)
                n += 1
                time.sleep(random.uniform(*args.gap))
            result["idle"] = {"enqueue_to_start_ms": pct(lat),
                              "enqueue_to_start_from_return_ms": pct(
                                  [a - b for a, b in zip(lat, call, strict=True)]),
                              "enqueue_call_ms": pct(call), "gap_s": list(args.gap),
                              "load": [load_before, load()]}
            print(kind, "idle", result["idle"]["enqueue_to_start_ms"], "load",
                  result["idle"]["load"], flush=True)
            if args.trace:
                records.poll()
                result["idle"]["steps_ms"] = steps(records, first_idle, lat, call)
                print(json.dumps(result["idle"]["steps_ms"], indent=1), flush=True)
                return result

            # (b) loaded: the drain rate first, then half of it, paced
            load_before = load()
            client.pause(QUEUE)
            first = n
            jobs = [{"task": PROBE, "queue": QUEUE, "payload": {"n": first + i}}
                    for i in range(args.drain_jobs)]
            for i in range(0, len(jobs), 5000):
                client.enqueue_many(jobs[i:i + 5000])
            n += args.drain_jobs
            client.resume(QUEUE)
            client.backend.wake_workers([QUEUE])
            records.wait_count(range(first, n), timeout=600)
            starts = [records.probes[i] for i in range(first, n)]
            drain = (args.drain_jobs - 1) / (max(starts) - min(starts))
            half = drain / 2
            time.sleep(2.0)
            step = 0.01
            sent: list[tuple[int, float]] = []  # (first n of the batch, call time), per batch
            begin = time.time()
            first = n
            while True:
                now = time.time()
                if now - begin >= args.loaded_seconds:
                    break
                due = int((now - begin) * half) - (n - first)
                if due > 0:
                    client.enqueue_many([{"task": PROBE, "queue": QUEUE, "payload": {"n": n + i}}
                                         for i in range(due)])
                    sent.append((n, now))
                    n += due
                time.sleep(max(0.0, begin + (int((now - begin) / step) + 1) * step - time.time()))
            produced_s = time.time() - begin
            records.wait_count(range(first, n), timeout=600)
            lat = []
            for (lo, t0), (hi, _) in zip(sent, [*sent[1:], (n, 0.0)], strict=True):
                lat.extend(records.probes[i] - t0 for i in range(lo, hi))
            result["loaded"] = {
                "drain_jobs": args.drain_jobs, "drain_jobs_per_s": round(drain, 1),
                "target_jobs_per_s": round(half, 1),
                "produced_jobs_per_s": round((n - first) / produced_s, 1),
                "seconds": args.loaded_seconds, "batches": len(sent),
                "enqueue_to_start_ms": pct(lat), "load": [load_before, load()]}
            print(kind, "loaded", {k: v for k, v in result["loaded"].items()}, flush=True)

        # (c) a schedule's tick -> start, on a worker that declares it
        load_before = load()
        skip_before = time.time() + 1.0
        with worker(url, out, schedule=True):
            deadline = time.monotonic() + args.ticks * 3 + 60
            while True:
                records.poll()
                ticks = [t for t in records.ticks if t[2] >= skip_before]
                if len(ticks) >= args.ticks:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"only {len(ticks)} ticks ran")
                time.sleep(0.1)
        ticks = ticks[:args.ticks]
        result["schedule"] = {"every_s": 1, "tick_to_start_ms": pct([s - d for _, s, d in ticks]),
                              "load": [load_before, load()]}
        print(kind, "schedule", result["schedule"], flush=True)
    finally:
        client.close()
        try:
            target.drop()
        except Exception as exc:  # noqa: BLE001 - report it, keep the real error
            print(f"could not drop the fresh database: {exc}", file=sys.stderr)
        out.unlink(missing_ok=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="postgresql,mariadb,sqlite")
    parser.add_argument("--postgresql", default=URLS["postgresql"])
    parser.add_argument("--mariadb", default=URLS["mariadb"])
    parser.add_argument("--sqlite", default=URLS["sqlite"])
    parser.add_argument("--idle", type=int, default=200, help="idle samples")
    parser.add_argument("--gap", type=float, nargs=2, default=(0.5, 1.5), metavar=("MIN", "MAX"))
    parser.add_argument("--drain-jobs", type=int, default=10_000)
    parser.add_argument("--loaded-seconds", type=float, default=10.0)
    parser.add_argument("--ticks", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--trace", action="store_true",
                        help="idle only, PostgreSQL: split each sample into the wake-up path's "
                             "steps (the worker records them)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    results = []
    for kind in args.backends.split(","):
        results.append(measure(kind, getattr(args, kind), args))
    data = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join([".venv/bin/python benchmarks/latency.py", *sys.argv[1:]]),
        "worker": "claimq worker latency:app (CLI defaults: concurrency 10, poll interval 1 s)",
        "python": platform.python_version(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "results": results,
    }
    text = json.dumps(data, indent=2) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
