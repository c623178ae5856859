"""The committed-state sampler: worker processes drive a mixed load at one database (plain,
keyed, sequenced, idempotent and delayed jobs; claims, completions, retries, permanent
failures, expired leases and the reaper, cancels, resurrections) while this process reads the
committed state again and again and checks every invariant of invariants.py on each sample.

Each process streams the ids it queued (after enqueue returned, so committed) to the sampler,
which drains them before every sample: a job it knows of must be in exactly one table.
Nothing here depends on how fast anything runs: a slow machine takes fewer samples."""

from __future__ import annotations

import contextlib
import multiprocessing
import queue as queues
import random
import time
from dataclasses import dataclass, field
from typing import Any

from invariants import check_all

from claimq import App
from claimq.backends.base import Completion, Failure
from claimq.errors import ClaimqError, JobNotFound, KeyHeld

Q = "soak"
SCOPE = "active"  # the soak's idempotency keys: one live job per key


@dataclass
class SoakReader:
    kind: str
    url: str
    app: App
    enqueued: set[int] = field(default_factory=set)
    scopes: dict[str, str] = field(default_factory=dict)

    def table(self, name: str) -> str:
        if self.kind == "postgresql":
            return f"{self.app.backend.schema}.{name}"  # type: ignore[attr-defined]
        return f"claimq_{name}"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return self.app.backend.run_sql(sql)


def _enqueue(app: App, rng: random.Random, n: int) -> int:
    kind = rng.randrange(6)
    kw: dict[str, Any] = {"queue": Q}
    if kind == 1:
        kw.update(concurrency_key=f"k{n % 2}", concurrency_limit=1)
    elif kind == 2:
        kw.update(sequence_key=f"s{n % 2}")
    elif kind == 3:
        kw.update(idempotency_key=f"i{n % 4}", unique=SCOPE)
    elif kind == 4:
        kw.update(delay=rng.choice((0.01, 0.05, 0.2)))
    return int(app.enqueue("t.soak", {"n": n}, **kw))


def work(url: str, seed: int, seconds: float, ids: Any, errors: Any) -> None:
    """One soak process: a random mix of operations for `seconds`."""
    rng = random.Random(seed)
    app = App(url)
    backend = app.backend
    dead: list[int] = []
    n = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            n += 1
            try:
                for _ in range(rng.randrange(1, 4)):
                    ids.put(_enqueue(app, rng, n * 10 + _))
                lease = rng.choice((0.2, 30.0))  # a short lease is left to expire sometimes
                jobs = backend.claim(f"soak-{seed}", [Q], rng.randrange(1, 4), lease, True)
                done, failed = [], []
                for job in jobs:
                    token = str(job.claim_token)
                    roll = rng.random()
                    if roll < 0.65:
                        done.append(Completion(job.id, token, "1"))
                    elif roll < 0.9:
                        permanent = roll > 0.85
                        failed.append(Failure(job.id, token, {"error": "Soak"}, 0.0,
                                              "permanent_error" if permanent else "error",
                                              permanent))
                    # else: abandoned, for its lease to run out and the reaper to find it
                if done:
                    backend.complete(done)
                if failed:
                    buried = backend.fail(failed).dead
                    dead += [j.id for j in jobs if j.id in buried]
                if rng.random() < 0.3:
                    backend.reap()
                if rng.random() < 0.1 and jobs:
                    with contextlib.suppress(JobNotFound):
                        app.cancel(rng.choice(jobs).id)
                if dead and rng.random() < 0.2:
                    # KeyHeld: a new job holds the dead letter's key (refused, nothing moved)
                    with contextlib.suppress(JobNotFound, KeyHeld):
                        app.resurrect(dead.pop(rng.randrange(len(dead))))
            except ClaimqError as exc:  # reported, and the test fails with it
                errors.put(f"process {seed}: {exc!r}")
    finally:
        app.close()


@dataclass
class SoakResult:
    samples: int
    jobs: int
    violations: list[str]
    errors: list[str]


def soak(kind: str, url: str, *, processes: int = 3, seconds: float = 3.0) -> SoakResult:
    """Runs `processes` soak processes for `seconds` while sampling the committed state; the
    last sample is taken after they have all stopped."""
    reader = SoakReader(kind, url, App(url))
    reader.app.migrate()
    reader.scopes.update({f"i{k}": SCOPE for k in range(4)})
    ctx = multiprocessing.get_context("spawn")
    ids, errors = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=work, args=(url, seed, seconds, ids, errors), daemon=True)
             for seed in range(processes)]
    for p in procs:
        p.start()
    violations: list[str] = []
    samples = 0
    try:
        while True:
            running = any(p.is_alive() for p in procs)
            _drain(ids, reader.enqueued)
            found = check_all(reader)
            samples += 1
            violations += [f"sample {samples}: {v}" for v in found]
            if not running or len(violations) > 20:
                break
        for p in procs:
            p.join(60)
        _drain(ids, reader.enqueued)
        violations += [f"final: {v}" for v in check_all(reader)]
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        reader.app.close()
    problems: list[str] = []
    _drain(errors, problems)
    return SoakResult(samples, len(reader.enqueued), violations, problems)


def _drain(source: Any, into: Any) -> None:
    while True:
        try:
            item = source.get_nowait()
        except queues.Empty:
            return
        (into.add if isinstance(into, set) else into.append)(item)
