"""Invariants of claimq's committed state, each one read from the tables as they are now (by a
reader outside every operation), so the same checks serve the pairwise matrix (after each
interleaving) and the sampler (repeatedly, under a multi-process soak).

Every check returns a list of violations (strings, empty when it holds); `check_all` runs them
all and `assert_invariants` fails a test with every violation at once."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

IN_FLIGHT = "('fetched', 'processing')"
EPSILON = 1e-6  # seconds: the tables' resolution (MariaDB keeps microseconds)


class Reader(Protocol):
    kind: str
    enqueued: set[int]
    scopes: dict[str, str]  # idempotency key -> the unique scope it was queued with

    def table(self, name: str) -> str: ...
    def rows(self, sql: str) -> list[tuple[Any, ...]]: ...


def seconds(value: Any) -> float | None:
    """A time column as seconds since the epoch, whatever the backend stores."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return float(value)


def _tags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return list(json.loads(value))
    return list(value)


def keys_within_limit(w: Reader) -> list[str]:
    """No concurrency key runs more jobs than its limit."""
    rows = w.rows(f"SELECT queue, concurrency_key, count(*), min(concurrency_limit) "
                  f"FROM {w.table('jobs')} WHERE status IN {IN_FLIGHT} "
                  f"AND concurrency_key IS NOT NULL GROUP BY queue, concurrency_key")
    return [f"concurrency key {q}/{k}: {n} in flight, limit {lim}"
            for q, k, n, lim in rows if int(n) > int(lim)]


def one_of_sequence(w: Reader) -> list[str]:
    """At most one job of an ordered sequence in flight."""
    rows = w.rows(f"SELECT queue, sequence_key, count(*) FROM {w.table('jobs')} "
                  f"WHERE status IN {IN_FLIGHT} AND sequence_key IS NOT NULL "
                  f"GROUP BY queue, sequence_key")
    return [f"sequence {q}/{k}: {n} in flight" for q, k, n in rows if int(n) > 1]


def max_workers(w: Reader) -> list[str]:
    """No queue runs more jobs than its max_workers."""
    rows = w.rows(f"SELECT q.name, q.max_workers, count(j.id) FROM {w.table('queues')} q "
                  f"JOIN {w.table('jobs')} j ON j.queue = q.name AND j.status IN {IN_FLIGHT} "
                  f"WHERE q.max_workers IS NOT NULL GROUP BY q.name, q.max_workers")
    return [f"queue {q}: {n} in flight, max_workers {m}" for q, m, n in rows if int(n) > int(m)]


def one_live_holder(w: Reader) -> list[str]:
    """One holder per idempotency key inside its scope: never two pending jobs of one key
    (every scope refuses that); for keys the world queued with unique="active", one live job;
    with "until_done" (the default), one job live or finished (every window in these tests
    outlasts them)."""
    out = [f"idempotency key {k!r}: {n} pending jobs" for k, n in w.rows(
        f"SELECT idempotency_key, count(*) FROM {w.table('jobs')} "
        f"WHERE idempotency_key IS NOT NULL AND status = 'pending' GROUP BY idempotency_key")
        if int(n) > 1]
    held: Counter[str] = Counter()
    for table, (key,) in _all_jobs(w, "idempotency_key"):
        scope = w.scopes.get(key) if key is not None else None
        if scope == "until_done" or (scope == "active" and table == "jobs"):
            held[key] += 1
    return out + [f"idempotency key {k!r} ({w.scopes[k]}): {n} holders"
                  for k, n in held.items() if n > 1]


def _all_jobs(w: Reader, columns: str) -> Iterable[tuple[str, tuple[Any, ...]]]:
    """`columns` of every job, live, archived or dead, in one statement (one snapshot: a job
    moving between tables meanwhile is seen in exactly one of them)."""
    tables = ("jobs", "held", "archive", "dead") if _has_workflows(w) else (
        "jobs", "archive", "dead")
    sql = " UNION ALL ".join(f"SELECT '{t}', {columns} FROM {w.table(t)}" for t in tables)
    for row in w.rows(sql):
        yield str(row[0]), tuple(row[1:])


def _has_workflows(w: Reader) -> bool:
    """Whether the database has the workflow tables (a backend may not have them yet)."""
    known = getattr(w, "_has_held", None)
    if known is None:
        try:
            w.rows(f"SELECT count(*) FROM {w.table('held')} WHERE 1 = 0")
            known = True
        except Exception:  # noqa: BLE001 - no such table, whatever the backend calls that
            known = False
        setattr(w, "_has_held", known)  # noqa: B010 - a cache on whichever reader it is
    return bool(known)


def held_counts_its_edges(w: Reader) -> list[str]:
    """Every held job's `waiting` is the number of its unresolved edges, and above zero (a job
    with none left is released in the transaction that resolved its last one)."""
    if not _has_workflows(w):
        return []
    rows = w.rows(f"SELECT h.id, h.waiting, (SELECT count(*) FROM {w.table('deps')} e "
                  f"WHERE e.child = h.id AND NOT e.resolved) FROM {w.table('held')} h")
    return [f"held job {i} waits for {n} but has {edges} unresolved edge(s)"
            for i, n, edges in rows if int(n) != int(edges) or int(n) <= 0]


def never_released_early(w: Reader) -> list[str]:
    """No live job has an unresolved dependency (it was released only once every edge into it
    was resolved, and nothing unresolves the edges of a live job)."""
    if not _has_workflows(w):
        return []
    rows = w.rows(f"SELECT e.child, e.parent FROM {w.table('deps')} e "
                  f"JOIN {w.table('jobs')} j ON j.id = e.child WHERE NOT e.resolved")
    return [f"job {child} is live while its dependency {parent} is unresolved"
            for child, parent in rows]


def one_job_per_tick(w: Reader) -> list[str]:
    """A schedule's tick (its tag schedule:<name>, at its run_at) became at most one job."""
    ticks: Counter[tuple[str, float | None]] = Counter()
    for _, (tags, run_at) in _all_jobs(w, "tags, run_at"):
        for tag in _tags(tags):
            if tag.startswith("schedule:"):
                ticks[(tag, seconds(run_at))] += 1
    return [f"{tag} tick at {at}: {n} jobs" for (tag, at), n in ticks.items() if n > 1]


def no_job_lost(w: Reader) -> list[str]:
    """Every job the world queued is in exactly one of live, held, archive and dead."""
    seen: Counter[int] = Counter()
    where: dict[int, list[str]] = {}
    for table, (job_id,) in _all_jobs(w, "id"):
        seen[int(job_id)] += 1
        where.setdefault(int(job_id), []).append(table)
    lost = [f"job {i} lost (in no table)" for i in sorted(w.enqueued) if seen[i] == 0]
    twice = [f"job {i} in {where[i]}" for i, n in sorted(seen.items()) if n > 1]
    return lost + twice


def claims_respect_run_at_and_pause(w: Reader) -> list[str]:
    """No job in flight was claimed before its run_at, nor from a queue paused before."""
    out = []
    paused = {name: seconds(at) for name, p, at in w.rows(
        f"SELECT name, paused, updated_at FROM {w.table('queues')}") if p}
    for job_id, queue, run_at, started, updated in w.rows(
            f"SELECT id, queue, run_at, started_at, updated_at FROM {w.table('jobs')} "
            f"WHERE status IN {IN_FLIGHT}"):
        claimed = seconds(started) if started is not None else seconds(updated)
        due = seconds(run_at)
        if claimed is not None and due is not None and claimed + EPSILON < due:
            out.append(f"job {job_id} claimed at {claimed}, {due - claimed:.3f}s before run_at")
        since = paused.get(queue)
        if since is not None and claimed is not None and claimed > since + EPSILON:
            out.append(f"job {job_id} claimed at {claimed} from queue {queue} paused at {since}")
    return out


def claims_respect_breakers(w: Reader) -> list[str]:
    """No job of a queue's task is in flight from a claim after its breaker opened, but the
    one probe a half-open breaker lets through."""
    out = []
    breakers = {(q, t): (state, seconds(opened), probe) for q, t, state, opened, probe in w.rows(
        f"SELECT queue, task, state, opened_at, probe_id FROM {w.table('breakers')} "
        f"WHERE state <> 'closed'")}
    if not breakers:
        return out
    for job_id, queue, task, started, updated in w.rows(
            f"SELECT id, queue, task, started_at, updated_at FROM {w.table('jobs')} "
            f"WHERE status IN {IN_FLIGHT}"):
        found = breakers.get((queue, task))
        if found is None:
            continue
        state, opened, probe = found
        claimed = seconds(started) if started is not None else seconds(updated)
        if (opened is not None and claimed is not None and claimed > opened + EPSILON
                and not (state == "half_open" and probe is not None and int(probe) == job_id)):
            out.append(f"job {job_id} claimed at {claimed} past {queue}/{task}'s breaker, "
                       f"{state} since {opened}")
    return out


CHECKS: list[Callable[[Reader], list[str]]] = [
    keys_within_limit, one_of_sequence, max_workers, one_live_holder, one_job_per_tick,
    no_job_lost, claims_respect_run_at_and_pause, claims_respect_breakers,
    held_counts_its_edges, never_released_early,
]


def check_all(w: Reader) -> list[str]:
    return [v for check in CHECKS for v in check(w)]


def assert_invariants(w: Reader) -> None:
    violations = check_all(w)
    assert not violations, "invariants broken:\n  " + "\n  ".join(violations)


# -- history checks: what committed state alone cannot say ----------------------------------------


def one_owner_wins(outcome: Any, a_took: set[int], b_took: set[int], jobs: Iterable[int]
                   ) -> list[str]:
    """No write by a stale token: of two token-guarded writes to one job (or a write and an
    ownership change), at most one takes effect."""
    both = sorted(set(jobs) & a_took & b_took)
    return [f"job {i}: both A and B wrote it (one of them with a stale token)" for i in both]


def claimed_once(*claims: Iterable[Any]) -> list[str]:
    """No job handed to two claims."""
    seen: Counter[int] = Counter(j.id for batch in claims for j in batch)
    return [f"job {i} claimed {n} times" for i, n in seen.items() if n > 1]
