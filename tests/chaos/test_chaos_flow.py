"""Flow control with real worker processes (4 of them, 4 slots each) on both backends, handler
runs recorded in the business table:

- concurrency by key: the runs of one key never overlap more than its limit, while different
  keys do run side by side; sampled from the database, no key ever has more jobs in flight.
- rate limit: the claim times the database recorded (the worker claims and starts at once)
  never put more than the burst plus rate x window into any window, and the handlers' own
  start times show no more than rate + burst (+ one burst for their start lag) in any second.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import chaos_biz as biz
import pytest
from chaos_harness import (
    ARCHIVE,
    WorkerProcess,
    archived,
    check_invariants,
    finished_ids,
    live,
    max_overlap,
    wait_until,
)

from claimq import App

pytestmark = pytest.mark.timeout(120)

PROCESSES = 4
OPTIONS = {"concurrency": 4, "lease": 10.0, "poll_interval": 0.05, "grace": 2.0}


def _work_through(
    capp: App, spawn: Callable[..., WorkerProcess], ids: list[int],
    sample: Callable[[], None] = lambda: None,
) -> None:
    """PROCESSES workers run until every job of `ids` is finished; `sample()` runs every
    10 ms meanwhile (and may add jobs to `ids`)."""
    workers = [spawn(capp.url, **OPTIONS) for _ in range(PROCESSES)]
    for w in workers:
        w.wait_started()

    def finished() -> bool:
        sample()
        return set(ids) <= finished_ids(capp)

    wait_until(finished, 90, "the jobs to finish", interval=0.01)
    for w in workers:
        assert w.stop() == 0


def test_runs_per_key_never_overlap_beyond_the_limit(capp: App, spawn) -> None:
    limits = {"a": 1, "b": 1, "c": 1, "wide": 2}
    specs = [
        {"task": "chaos.work", "queue": "acct", "payload": {"n": i, "key": key, "sleep": 0.04},
         "concurrency_key": key, "concurrency_limit": limit}
        for i in range(12) for key, limit in limits.items()
    ]
    ids = capp.enqueue_many(specs)
    key_of = {job_id: spec["payload"]["key"] for job_id, spec in zip(ids, specs, strict=True)}
    samples: list[Counter[str]] = []

    def sample() -> None:
        samples.append(Counter(key_of[j.id] for j in live(capp)
                               if j.status in ("fetched", "processing")))

    _work_through(capp, spawn, ids, sample)
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))

    assert len(samples) > 10
    for key, limit in limits.items():
        assert max(s[key] for s in samples) <= limit, key
    runs_by_key: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in biz.runs(capp):
        assert r.ended is not None
        runs_by_key[key_of[r.job_id]].append((r.started, r.ended))
    for key, limit in limits.items():
        assert len(runs_by_key[key]) == 12
        assert max_overlap(runs_by_key[key]) <= limit, key
    every = [run for runs in runs_by_key.values() for run in runs]
    assert max_overlap(every) >= 2, "different keys did not run side by side"
    workers_used = {j.worker_id for j in archived(capp)}
    assert len(workers_used) >= 2, "the keys were not shared out among the workers"


def _within_the_rate(claimed: list[float], rate: float, burst: int, what: str) -> None:
    """No window of the (sorted) claim times holds more than the burst plus rate x window."""
    for i in range(len(claimed)):
        for j in range(i, len(claimed)):
            window = claimed[j] - claimed[i]
            assert j - i + 1 <= burst + rate * window + 0.01, (
                f"{what}{j - i + 1} claims within {window:.3f}s")


def test_rate_limit_holds_across_worker_processes(capp: App, spawn) -> None:
    rate, burst, total = 20, 5, 60
    capp.configure_queue("api", rate_limit=f"{rate}/s", rate_burst=burst)
    ids = capp.enqueue_many(
        {"task": "chaos.work", "queue": "api", "payload": {"n": i}} for i in range(total))
    _work_through(capp, spawn, ids)
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))

    claimed = sorted(j.started_at.timestamp() for j in archived(capp) if j.started_at)
    assert len(claimed) == total
    _within_the_rate(claimed, rate, burst, "")
    assert len({j.worker_id for j in archived(capp)}) >= 2, "one worker took every job"
    starts = sorted(r.started for r in biz.runs(capp))
    assert len(starts) == total
    for i, start in enumerate(starts):
        in_second = sum(1 for s in starts[i:] if s < start + 1.0)
        assert in_second <= rate + 2 * burst, f"{in_second} handler starts within a second"


def test_priority_aging_bounds_how_long_a_flood_holds_a_job_back(capp: App, spawn) -> None:
    """A flood of fresh high-priority jobs arrives faster than the workers run them; with
    aging, a low-priority job that has waited gap * step longer than a flood job outranks it."""
    step, gap = 0.05, 10
    capp.configure_queue("aged", aging=step, aging_cap=1000)
    low = capp.enqueue("chaos.work", {"n": -1}, queue="aged", priority=0)
    ids = [low]
    batches = iter(range(200))

    def feed() -> None:  # 8 jobs every 10 ms, for 2 s: more than 16 slots of 30 ms can run
        n = next(batches, None)
        if n is not None:
            ids.extend(capp.enqueue_many(
                {"task": "chaos.work", "queue": "aged", "priority": gap,
                 "payload": {"n": 8 * n + i, "sleep": 0.03}} for i in range(8)))

    _work_through(capp, spawn, ids, feed)
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))

    jobs = {j.id: j for j in archived(capp)}
    outranked_from = jobs[low].run_at.timestamp() + gap * step
    started = jobs[low].started_at.timestamp()
    flood = [jobs[i] for i in ids[1:]]
    overtook = [j.id for j in flood
                if j.run_at.timestamp() > outranked_from and j.started_at.timestamp() < started]
    # Claims already under way when it came to outrank them may still take a few: at most a
    # batch per claiming path (fetcher, completer) of each worker process.
    assert len(overtook) <= 2 * PROCESSES * OPTIONS["concurrency"], len(overtook)
    assert sum(j.started_at.timestamp() > started for j in flood) > 0, (
        "the flood did not outlast it")


def _throttled_at(capp: App, ids: list[int], throttled_id: int) -> tuple[dict[int, Any], float]:
    """Every job of `ids` archived (the work run through), the throttled one retried once
    after its Throttled; the archived jobs by id, and when the handler raised."""
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE), effects_for_archived=False)
    jobs = {j.id: j for j in archived(capp)}
    throttled = jobs[throttled_id]
    assert throttled.attempts == 2 and throttled.errors[0]["error"] == "Throttled"
    raised = next(r.ended for r in biz.runs(capp) if r.outcome == "throttled")
    assert raised is not None
    return jobs, raised


def test_a_throttle_stops_every_workers_claims_and_they_resume(capp: App, spawn) -> None:
    pause = 1.5
    ids = capp.enqueue_many(
        {"task": "chaos.throttle", "queue": "api",
         "payload": {"n": i, "sleep": 0.05, **({"throttle": pause} if i == 8 else {})}}
        for i in range(120))
    _work_through(capp, spawn, ids)
    jobs, raised = _throttled_at(capp, ids, ids[8])
    claims = sorted(j.started_at.timestamp() for j in jobs.values() if j.started_at)
    # The failure is written at most a moment after the handler raised; claims already under
    # way then may still land. From then until the throttle ends, no worker claims.
    quiet = [t for t in claims if raised + 0.3 < t < raised + pause - 0.1]
    assert quiet == [], f"{len(quiet)} claims while the queue was throttled"
    assert sum(t > raised + pause for t in claims) > 10, "the workers did not resume"


def _sequence_runs(capp: App, seq_of: dict[int, str]) -> dict[str, list[biz.Run]]:
    """Every handler run of the sequences' jobs, by sequence, in the order they started."""
    runs: dict[str, list[biz.Run]] = defaultdict(list)
    for r in sorted(biz.runs(capp), key=lambda r: r.started):
        assert r.ended is not None
        runs[seq_of[r.job_id]].append(r)
    return runs


@pytest.mark.parametrize("on_failure", ["wait", "skip"])
def test_sequences_run_one_at_a_time_in_enqueue_order(capp: App, spawn, on_failure) -> None:
    """4 sequences of 10 jobs (every third fails its first attempt) under 4 worker processes:
    within a sequence no two runs overlap; with "wait" every run (retries included) starts in
    id order, with "skip" each first attempt does and a retry runs later."""
    sequences = ("a", "b", "c", "d")
    specs = [
        {"task": "chaos.work", "queue": "seq", "sequence_key": s, "on_failure": on_failure,
         "payload": {"n": i, "sleep": 0.02, "fail_attempts": int(i % 3 == 1)}}
        for i in range(10) for s in sequences
    ]
    ids = capp.enqueue_many(specs)
    seq_of = {job_id: spec["sequence_key"] for job_id, spec in zip(ids, specs, strict=True)}
    _work_through(capp, spawn, ids)
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))

    runs = _sequence_runs(capp, seq_of)
    for s in sequences:
        mine = runs[s]
        assert len(mine) == 10 + 3, s  # jobs 1, 4, 7 ran twice
        for before, after in zip(mine, mine[1:], strict=False):
            assert before.ended is not None and before.ended <= after.started, (
                f"sequence {s}: job {before.job_id} and {after.job_id} overlapped")
        firsts = [r.job_id for r in mine if r.attempt == 1]
        assert firsts == sorted(firsts), f"sequence {s} started out of order: {firsts}"
        if on_failure == "wait":
            order = [r.job_id for r in mine]
            assert order == sorted(order), f"sequence {s} ran out of order: {order}"
        else:
            for r in mine:
                if r.attempt == 2:
                    first = next(f for f in mine if f.job_id == r.job_id and f.attempt == 1)
                    assert first.ended is not None and first.ended <= r.started
    every = [(r.started, r.ended) for rs in runs.values() for r in rs if r.ended is not None]
    assert max_overlap(every) >= 2, "different sequences did not run side by side"
    assert len({j.worker_id for j in archived(capp)}) >= 2, "one worker took every job"


def _none_in_flight(capp: App, queue: str, task: str) -> float | None:
    """The time at which no job of `task` was fetched or processing, taken while holding what
    every claim of `queue` holds (its row's lock on PostgreSQL and MariaDB, the writer's lock on
    SQLite), so that no claim was under way either; None when some were."""
    schema = getattr(capp.backend, "schema", None) if capp.backend.kind == "postgresql" else None
    with capp.transaction() as conn:
        if schema:
            conn.execute(f"SELECT 1 FROM {schema}.queues WHERE name = %s FOR UPDATE", (queue,))
            row = conn.execute(f"SELECT count(*) AS n FROM {schema}.jobs WHERE task = %s"
                               " AND status IN ('fetched', 'processing')", (task,)).fetchone()
            n = row["n"] if isinstance(row, dict) else row[0]
        elif capp.backend.kind == "mysql":
            cur = conn.cursor()
            cur.execute("SELECT 1 FROM claimq_queues WHERE name = %s FOR UPDATE", (queue,))
            cur.execute("SELECT count(*) FROM claimq_jobs WHERE task = %s"
                        " AND status IN ('fetched', 'processing')", (task,))
            n = cur.fetchone()[0]
        else:
            conn.execute("UPDATE claimq_queues SET updated_at = updated_at WHERE name = ?",
                         (queue,))
            n = conn.execute("SELECT count(*) FROM claimq_jobs WHERE task = ?"
                             " AND status IN ('fetched', 'processing')", (task,)).fetchone()[0]
        return time.time() if n == 0 else None


def test_an_open_breaker_stops_every_workers_claims_of_its_task(
        capp: App, spawn, tmp_path) -> None:
    """A dependency goes down: its task's breaker opens after 3 failures. From the moment none
    of the task's jobs is out any more, every claim of it is a lone probe (no two runs of it
    overlap) while the queue's other task flows on. Once the dependency is back, the next probe
    succeeds, runs alone, and the breaker closes: every job then finishes."""
    down = tmp_path / "down"
    down.touch()
    capp.configure_breaker("chaos.dependent", failures=3, window=60, cooldown=0.3, queue="brk")
    ids = capp.enqueue_many(
        {"task": "chaos.dependent", "queue": "brk", "payload": {"n": i, "down_flag": str(down)}}
        for i in range(40))
    workers = [spawn(capp.url, **OPTIONS) for _ in range(PROCESSES)]
    for w in workers:
        w.wait_started()

    def breaker() -> str:
        return next(b.state for b in capp.breakers() if b.task == "chaos.dependent")

    wait_until(lambda: breaker() == "open", 60, "the breaker to open", interval=0.01)

    quiet: list[float] = []

    def none_out() -> bool:
        moment = _none_in_flight(capp, "brk", "chaos.dependent")
        quiet.extend([] if moment is None else [moment])
        return moment is not None

    wait_until(none_out, 60, "the jobs claimed before it opened to finish", interval=0.01)
    quiet_from = quiet[0]  # from here, a run of the task was claimed after the breaker shut
    others = capp.enqueue_many(
        {"task": "chaos.work", "queue": "brk", "payload": {"n": i, "sleep": 0.01}}
        for i in range(30))

    def probes() -> list[biz.Run]:
        return [r for r in biz.runs(capp) if r.started > quiet_from and r.job_id in set(ids)]

    def failed_probes() -> int:
        return sum(r.outcome == "failed" for r in probes())

    wait_until(lambda: failed_probes() >= 2 and set(others) <= finished_ids(capp), 60,
               "two failed probes, and the other task's jobs to finish", interval=0.05)
    down.unlink()  # the dependency is back
    wait_until(lambda: set(ids) <= finished_ids(capp), 90, "every job to finish", interval=0.05)
    for w in workers:
        assert w.stop() == 0
    check_invariants(capp, dict.fromkeys(ids + others, ARCHIVE), effects_for_archived=False)

    after = sorted(probes(), key=lambda r: r.started)
    first_ok = next(i for i, r in enumerate(after) if r.outcome == "returned")
    assert first_ok >= 2 and all(r.outcome == "failed" for r in after[:first_ok])
    lone = after[:first_ok + 1]  # the failed probes and the one that closed the breaker
    for before, probe in zip(lone, after[1:first_ok + 2], strict=False):
        assert before.ended is not None and before.ended <= probe.started, (
            f"job {probe.job_id} ran beside probe {before.job_id}")
    every = [(r.started, r.ended) for r in after[first_ok + 1:] if r.ended is not None]
    assert max_overlap(every) >= 2, "the jobs did not flow again once it closed"
    assert breaker() == "closed"
    other_runs = [r for r in biz.runs(capp) if r.job_id in set(others)]
    assert any(r.started < after[first_ok].started for r in other_runs), (
        "the other task did not run while the breaker was open")


def test_per_key_rate_limits_hold_across_worker_processes(capp: App, spawn) -> None:
    """key_rate_limit 10/s (burst 3) per customer, 3 customers: the claim times the database
    recorded never put more than the burst plus rate x window of one key into any window."""
    rate, burst, per_key = 10, 3, 20
    capp.configure_queue("api", key_rate_limit=f"{rate}/s", key_rate_burst=burst)
    specs = [{"task": "chaos.work", "queue": "api", "rate_key": key, "payload": {"n": i}}
             for i in range(per_key) for key in ("a", "b", "c")]
    ids = capp.enqueue_many(specs)
    key_of = {job_id: spec["rate_key"] for job_id, spec in zip(ids, specs, strict=True)}
    _work_through(capp, spawn, ids)
    check_invariants(capp, dict.fromkeys(ids, ARCHIVE))

    claimed: dict[str, list[float]] = defaultdict(list)
    for job in archived(capp):
        assert job.started_at is not None
        claimed[key_of[job.id]].append(job.started_at.timestamp())
    for key, times in claimed.items():
        assert len(times) == per_key, key
        _within_the_rate(sorted(times), rate, burst, f"key {key}: ")
    assert len({j.worker_id for j in archived(capp)}) >= 2, "one worker took every job"


def test_a_throttle_pauses_its_rate_key_for_every_worker(capp: App, spawn) -> None:
    """A job of customer a raises Throttled(after=2): from the moment the failure is written
    (the database's time, as app.throttled_keys() shows it) until then, no worker claims a's
    jobs, while customer b's (fed all along) are claimed meanwhile."""
    pause = 2.0
    ids = capp.enqueue_many(
        {"task": "chaos.throttle", "queue": "api", "rate_key": "a",
         "payload": {"n": i, "sleep": 0.05, **({"throttle": pause} if i == 8 else {})}}
        for i in range(60))
    b_ids: list[int] = []
    everything = list(ids)  # _work_through waits for these, b's included as they come
    seen: set[tuple[str, str, float]] = set()

    def feed_b() -> None:  # two of b's jobs every 10 ms until a's are done
        seen.update((k.queue, k.key, k.until.timestamp()) for k in capp.throttled_keys())
        if not set(ids) <= finished_ids(capp):
            more = capp.enqueue_many(
                {"task": "chaos.throttle", "queue": "api", "rate_key": "b",
                 "payload": {"n": 1000 + len(b_ids) + i, "sleep": 0.01}} for i in range(2))
            b_ids.extend(more)
            everything.extend(more)

    _work_through(capp, spawn, everything, feed_b)
    jobs, _ = _throttled_at(capp, everything, ids[8])
    assert next(q for q in capp.queues() if q.name == "api").throttled_until is None
    (until,) = [t for queue, key, t in seen if (queue, key) == ("api", "a")]
    written = until - pause  # the failure's time in the database

    def claims(of: list[int]) -> list[float]:
        return sorted(jobs[i].started_at.timestamp() for i in of if jobs[i].started_at)

    # a claim whose transaction began a moment before the failure's may still land after it
    quiet = [t for t in claims(ids) if written + 0.2 < t < until]
    assert quiet == [], f"{len(quiet)} claims of the throttled key while it was paused"
    assert sum(t >= until for t in claims(ids)) > 10, "the key did not resume"
    assert any(written + 0.2 < t < until for t in claims(b_ids)), "the other key stopped too"
