"""Workflows' rules (issue 26, /work/wf-design.md), once, for the backends that run them
statement by statement inside one write transaction: SQLite and MariaDB. PostgreSQL writes
the same rules set-based in SQL.

What a backend passes in (the MariaDB side implements the same):

- `Steps`, a small object whose every method runs ONE of the backend's own statements (a file
  of its sql/ folder) on the connection of the write transaction that just moved the jobs.
  Ids go in as Python sequences; each backend encodes them its own way (SQLite a JSON text
  for json_each, MariaDB a tuple for `IN %(ids)s` or JSON_TABLE). Every method's docstring
  says what its statement must do; the locking notes are for MariaDB (SQLite has one writer).
- `release(steps, ended)`: call it in the same transaction, after the statement that moved
  jobs into archive or dead letters, with the ids of those that have a workflow_id (take it
  from that statement's RETURNING, or from the row read under the lock: a queue without
  workflows then runs no statement of this module at all).
- `resurrect(steps, job_id, payload_json, priority)`: the resurrect of a dead job whose
  workflow_id is set (after the backend's own idempotency-key check).
- `workflow_edges` / `spawn_edges`: add_workflow's and spawn's edge bookkeeping (pure).

The pause points (`release.decremented`, `release.moved`, `resurrect.unburied`) are here, so
they are on every backend whose backend.py imports this module (tests/interleavings/specs.py
counts them so).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NamedTuple, Protocol

from claimq._pause import pause

CANCEL, RUN, WAIT = "cancel", "run", "wait"
POLICIES = (CANCEL, RUN, WAIT)


class OutEdge(NamedTuple):
    """An unresolved edge from a parent that has just ended, with how it ended."""

    parent: int
    child: int
    on_failure: str  # the edge's policy: cancel | run | wait
    dead: bool  # the parent is in dead letters (else in the archive)
    task: str  # the parent's task
    reason: str | None  # the parent's dead-letter reason


class InEdge(NamedTuple):
    """An edge into a job being restored (resurrect), with where its parent is now."""

    parent: int
    child: int
    on_failure: str
    place: str  # the parent's table: "live" (jobs or held), "archive" or "dead"
    task: str
    reason: str | None


class Ready(NamedTuple):
    """A held job with no unresolved edge left."""

    id: int
    run_if: str | None  # None, or "failed": run only if a dependency ended dead
    failed_dependency: bool  # one of its parents is in dead letters


class Buried(NamedTuple):
    """A held job to move to dead letters, reason dependency_failed, and its error entry."""

    id: int
    error_json: str


class NewEdge(NamedTuple):
    child: int
    parent: int
    position: int  # the parent's index in the child's dependencies (fan-in result order)
    on_failure: str


class Steps(Protocol):
    """The backend's statements the rules run, on the transaction's connection."""

    def out_edges(self, parents: Sequence[int]) -> list[OutEdge]:
        """The unresolved edges from these parents (each in archive or dead letters now; an
        edge whose parent is in neither is left out), ordered by (parent, child). MariaDB:
        lock them (FOR UPDATE)."""
        ...

    def resolve(self, edges: Sequence[tuple[int, int]]) -> None:
        """Marks these (parent, child) edges resolved."""
        ...

    def bury(self, jobs: Sequence[Buried]) -> list[int]:
        """Moves these jobs held -> dead (reason 'dependency_failed', finished now, each
        error entry appended to its errors) and deletes them from held; the ids it moved (a
        job no longer held is not)."""
        ...

    def decrement(self, counts: Mapping[int, int]) -> None:
        """`UPDATE held SET waiting = waiting - n WHERE id = child`, per child (the one write
        that counts: never derived from a read of the edges)."""
        ...

    def ready(self, children: Sequence[int]) -> list[Ready]:
        """The held rows among `children` whose waiting is 0 or less, by id (MariaDB: FOR
        UPDATE), with whether any of their parents is in dead letters."""
        ...

    def promote(self, ids: Sequence[int]) -> None:
        """Copies these held rows into jobs as pending, run_at = max(run_at, now) (PostgreSQL
        would also NOTIFY)."""
        ...

    def skip(self, ids: Sequence[int]) -> None:
        """Copies these held rows into the archive: result NULL, started_at NULL, finished
        now (a run_if='failed' job none of whose dependencies failed)."""
        ...

    def drop_held(self, ids: Sequence[int]) -> None:
        """Deletes these rows from held (after promote/skip copied them)."""
        ...

    # resurrect only

    def dead_dependents(self, parents: Sequence[int]) -> list[int]:
        """The children of these parents that are in dead letters with reason
        'dependency_failed'."""
        ...

    def unbury(self, job_id: int, payload_json: str | None, priority: int | None) -> bool:
        """Moves a dead letter to held (waiting 0, attempts 0, run_at now, run_if kept if the
        backend stored it; payload and priority replaced when not None), deleting it from
        dead; False if it was not there."""
        ...

    def in_edges(self, children: Sequence[int]) -> list[InEdge]:
        """Every edge into these jobs, with its parent's place (live, archive, dead).
        MariaDB: lock the edges (FOR UPDATE, as out_edges does), so that a parent read as
        live cannot finish before this transaction commits: its completion's out_edges waits
        and then sees the edge unresolved and the job held (else it resolves the edge for a
        job it cannot see yet, and the job waits for ever)."""
        ...

    def mark(self, edges: Sequence[tuple[int, int, bool]]) -> None:
        """Sets each (parent, child) edge's resolved flag to the given value."""
        ...

    def set_waiting(self, counts: Mapping[int, int]) -> None:
        """`UPDATE held SET waiting = n WHERE id = job`, per job."""
        ...


def dependency_error(parent: int, task: str, reason: str | None) -> str:
    """The error entry a job buried for its dependency's failure gets, as JSON text."""
    return json.dumps({
        "type": "DependencyFailed",
        "message": f"dependency {parent} ({task}) ended in dead letters: {reason}",
        "dependency": parent,
    })


def release(steps: Steps, ended: Sequence[int]) -> list[int]:
    """The release rule for jobs that have just left the live (or held) table for the archive
    or dead letters, in the same transaction: per unresolved edge from them, by the edge's
    policy when the parent is dead. Cascades (a child buried, or archived unrun by run_if,
    ends in turn). Returns the ids moved held -> jobs."""
    released: list[int] = []
    frontier = list(dict.fromkeys(ended))
    while frontier:
        edges = steps.out_edges(frontier)
        if not edges:
            break
        resolved: list[tuple[int, int]] = []
        counts: Counter[int] = Counter()
        doomed: dict[int, OutEdge] = {}
        for e in edges:
            if not e.dead or e.on_failure == RUN:
                resolved.append((e.parent, e.child))
                counts[e.child] += 1
            elif e.on_failure == CANCEL:
                resolved.append((e.parent, e.child))
                doomed.setdefault(e.child, e)
            # WAIT: the edge stays unresolved and counted until the parent is resurrected
        steps.resolve(resolved)
        buried = steps.bury([Buried(c, dependency_error(e.parent, e.task, e.reason))
                             for c, e in doomed.items()]) if doomed else []
        counts = Counter({c: n for c, n in counts.items() if c not in doomed})
        frontier = buried
        if counts:
            steps.decrement(counts)
            pause("release.decremented")
            moved, skipped = _move_ready(steps, sorted(counts))
            released += moved
            frontier += skipped
    return released


def _move_ready(steps: Steps, children: Sequence[int]) -> tuple[list[int], list[int]]:
    """Moves the held children with nothing left to wait for: held -> jobs, or held ->
    archive for a run_if='failed' one none of whose dependencies failed. Returns (moved to
    jobs, archived)."""
    ready = steps.ready(children)
    if not ready:
        return [], []
    run = [r.id for r in ready if r.run_if != "failed" or r.failed_dependency]
    skip = [r.id for r in ready if r.run_if == "failed" and not r.failed_dependency]
    if run:
        steps.promote(run)
    if skip:
        steps.skip(skip)
    pause("release.moved")
    steps.drop_held([r.id for r in ready])
    return run, skip


def resurrect(
    steps: Steps, job_id: int, payload_json: str | None = None, priority: int | None = None
) -> bool:
    """Resurrects dead workflow job `job_id` and every dead letter of its workflow reachable
    from it by edges whose reason is 'dependency_failed' ("rerun from the failed step"): all
    go to held; each one's in-edges are re-derived (resolved when the parent is archived, or
    dead, not restored, under 'run'); one whose parent is dead under 'cancel' is buried again
    at once; those with nothing to wait for are released. Archived jobs never run again.
    False if `job_id` is no dead letter."""
    # Each job's in-edges are read (MariaDB: locked) before the job moves to held: the
    # release rule's lock order, edges then held rows. Else a parent finishing meanwhile
    # locks an edge, then waits for the held row this transaction inserted, while this one
    # waits for that edge: a deadlock.
    steps.in_edges([job_id])
    if not steps.unbury(job_id, payload_json, priority):
        return False
    restored = [job_id]
    seen = {job_id}
    frontier = [job_id]
    while frontier:
        found = list(dict.fromkeys(c for c in steps.dead_dependents(frontier) if c not in seen))
        if found:
            steps.in_edges(found)
        found = [c for c in found if steps.unbury(c, None, None)]
        seen.update(found)
        restored += found
        frontier = found
    pause("resurrect.unburied")  # every job restored to held, none re-derived yet
    marks: list[tuple[int, int, bool]] = []
    waiting: Counter[int] = Counter({c: 0 for c in restored})
    doomed: dict[int, InEdge] = {}
    for e in steps.in_edges(restored):
        if e.parent in seen or e.place == "live":
            is_resolved = False
        elif e.place == "archive" or e.on_failure == RUN:
            is_resolved = True
        elif e.on_failure == CANCEL:
            is_resolved = True
            doomed.setdefault(e.child, e)
        else:  # WAIT on a dead parent: waits for the operator again
            is_resolved = False
        marks.append((e.parent, e.child, is_resolved))
        if not is_resolved:
            waiting[e.child] += 1
    steps.mark(marks)
    steps.set_waiting(waiting)
    ended = steps.bury([Buried(c, dependency_error(e.parent, e.task, e.reason))
                        for c, e in doomed.items()]) if doomed else []
    free = sorted(c for c, n in waiting.items() if n == 0 and c not in doomed)
    _, skipped = _move_ready(steps, free) if free else ([], [])
    release(steps, ended + skipped)
    return True


def workflow_edges(
    job_ids: Sequence[int],
    after: Sequence[Sequence[tuple[int, str | None]]],
    default: str,
) -> tuple[list[NewEdge], dict[int, int]]:
    """add_workflow's edges from NewWorkflow.after (indexes into `job_ids`), each with its
    policy resolved (its own, else the workflow's `default`), a repeated dependency counted
    once; and each held job's `waiting` (jobs without a dependency are not in it)."""
    edges: list[NewEdge] = []
    waiting: dict[int, int] = {}
    for i, deps in enumerate(after):
        child = job_ids[i]
        seen: set[int] = set()
        for index, policy in deps:
            parent = job_ids[index]
            if parent in seen:
                continue
            seen.add(parent)
            edges.append(NewEdge(child, parent, len(seen) - 1, policy or default))
        if seen:
            waiting[child] = len(seen)
    return edges, waiting


class Dependent(NamedTuple):
    """A job waiting for the spawner: its edge's policy and the next free position among its
    dependencies."""

    child: int
    on_failure: str
    next_position: int


def spawn_edges(
    new_ids: Sequence[int],
    after: Sequence[Sequence[int]],
    dependents: Sequence[Dependent],
    default: str,
) -> tuple[list[NewEdge], dict[int, int], dict[int, int]]:
    """spawn's edges: among the new jobs (`after`: indexes into `new_ids`, the workflow's
    `default` policy), and from each new job to every job that waits for the spawner (its
    edge's policy, positions after its existing dependencies). Returns (edges, waiting of the
    new jobs that wait, how much more each dependent waits)."""
    edges, waiting = workflow_edges(new_ids, [[(i, None) for i in deps] for deps in after],
                                    default)
    more: dict[int, int] = {}
    for d in dependents:
        for n, parent in enumerate(new_ids):
            edges.append(NewEdge(d.child, parent, d.next_position + n, d.on_failure))
        if new_ids:
            more[d.child] = len(new_ids)
    return edges, waiting, more
