"""Every App call that changes jobs, queues, schedules, retention or workflows leaves one audit
row naming who (the API, the OS user and host, the database user), on each backend, as the
dashboard's actions do; a call that raises leaves none; the dashboard's one row per action
takes in the App's own (claimq._audit.entry)."""

from __future__ import annotations

import getpass
import socket
from collections.abc import Callable
from typing import Any

import pytest

from claimq import App, JobNotFound, Permanent, Workflow, _audit
from claimq.backends.base import AuditEntry


def _dead_letter(app: App, queue: str) -> int:
    job_id = app.enqueue("t", {"q": queue}, queue=queue)
    [job] = app.claim("test-worker", [queue], limit=1)
    attempt = app.start(job)
    assert app.fail(job, Permanent("boom"), attempt=attempt, worker_id="test-worker") == "dead"
    return job_id


def _archived(app: App, queue: str) -> int:
    job_id = app.enqueue("t", {"q": queue}, queue=queue)
    [job] = app.claim("test-worker", [queue], limit=1)
    app.start(job)
    app.complete(job)
    return job_id


def _rows(app: App) -> list[AuditEntry]:
    return app.backend.list_audit(None, 1000)


def _one_row(app: App, call: Callable[[], Any]) -> AuditEntry:
    """`call` leaves exactly one new audit row; that row."""
    before = {e.id for e in _rows(app)}
    call()
    new = [e for e in _rows(app) if e.id not in before]
    assert len(new) == 1, [(e.action, e.target) for e in new]
    return new[0]


def _names_who(app: App, entry: AuditEntry) -> None:
    by = entry.detail["by"]
    assert by["via"] == "api"
    assert (by["os_user"], by["host"]) == (getpass.getuser(), socket.gethostname())
    assert entry.actor.startswith(f"api {getpass.getuser()}@{socket.gethostname()}")
    if app.backend.kind == "sqlite":
        assert by["db_user"] is None  # SQLite has no users
    else:
        assert by["db_user"] and f"db user {by['db_user']}" in entry.actor
        assert by["db_user"].split("@")[0] == app.url.split("://")[1].split("@")[0].split(":")[0]


def test_each_acting_call_of_the_api_leaves_one_row_naming_who(app: App) -> None:
    pending = app.enqueue("t", queue="q", delay=3600)
    buried = [_dead_letter(app, f"d{i}") for i in range(3)]
    kept = _archived(app, "a")
    flow = app.backend.capabilities.flow_control
    calls: list[tuple[str, str, Callable[[], Any]]] = [
        ("priority", f"job {pending}", lambda: app.set_priority(pending, 5)),
        ("run_now", f"job {pending}", lambda: app.run_now([pending])),
        ("cancel", f"job {pending}", lambda: app.cancel(pending)),
        ("resurrect", f"job {buried[0]}", lambda: app.resurrect(buried[0], payload={"n": 1})),
        ("purge", "dead jobs", lambda: app.purge_jobs("dead", [buried[1]])),
        ("purge", "dead jobs", lambda: app.purge("dead", queue="d2")),
        ("purge", "archive jobs", lambda: app.purge("archive", queue="a")),
        ("pause", "queue q", lambda: app.pause("q")),
        ("resume", "queue q", lambda: app.resume("q")),
        ("deactivate", "queue q", lambda: app.deactivate("q")),
        ("activate", "queue q", lambda: app.activate("q")),
        ("max_workers", "queue q", lambda: app.configure_queue("q", max_workers=2)),
        ("configure_queue", "queue q", lambda: app.configure_queue("q", lease=30, timeout=60)),
        ("retention", "queue q", lambda: app.set_retention("q", archive_age=60)),
        ("clear retention", "queue q", lambda: app.clear_retention("q")),
        ("prune", "finished jobs", lambda: app.prune()),
        ("schedule add", "schedule s", lambda: app.schedules.add("s", "t", every=60)),
        ("schedule change", "schedule s", lambda: app.schedules.change("s", every=120)),
        ("schedule pause", "schedule s", lambda: app.schedules.pause("s")),
        ("schedule resume", "schedule s", lambda: app.schedules.resume("s")),
        ("schedule run_now", "schedule s", lambda: app.schedules.run_now("s")),
        ("schedule remove", "schedule s", lambda: app.schedules.remove("s")),
    ]
    if flow:
        calls.append(("breaker", "queue q task t",
                      lambda: app.configure_breaker("t", failures=3, queue="q")))
    for action, target, call in calls:
        entry = _one_row(app, call)
        assert (entry.action, entry.target) == (action, target)
        _names_who(app, entry)
    rows = {(e.action, e.target): e for e in _rows(app)}
    assert rows[("cancel", f"job {pending}")].detail["outcome"] == "cancelled"
    assert rows[("cancel", f"job {pending}")].affected == 1
    assert rows[("priority", f"job {pending}")].detail["priority"] == 5
    assert rows[("resurrect", f"job {buried[0]}")].detail["payload_edited"] is True
    assert rows[("purge", "archive jobs")].affected == 1  # the archived job
    assert kept not in [j.id for j in app.list_jobs("archive")]
    assert rows[("max_workers", "queue q")].detail["max_workers"] == 2


def test_workflow_cancel_and_retry_are_audited(app: App) -> None:
    wf = Workflow("audited")
    first = wf.add("t", {"n": 1})
    wf.add("t", {"n": 2}, after=[first])
    handle = app.enqueue_workflow(wf)
    entry = _one_row(app, handle.cancel)
    assert (entry.action, entry.target, entry.affected) == (
        "cancel workflow", f"workflow {handle.id}", 2)
    _names_who(app, entry)
    entry = _one_row(app, handle.retry)
    assert (entry.action, entry.target) == ("retry workflow", f"workflow {handle.id}")


def test_a_call_that_changes_nothing_or_fails_is_recorded_as_such(app: App) -> None:
    done = _archived(app, "a")
    entry = _one_row(app, lambda: app.cancel(done))  # finished already: nothing changed
    assert (entry.action, entry.affected, entry.detail["outcome"]) == ("cancel", 0, "finished")
    before = len(_rows(app))
    with pytest.raises(JobNotFound):
        app.cancel(987654)
    with pytest.raises(JobNotFound):
        app.resurrect(done)  # not a dead letter
    with pytest.raises(JobNotFound):
        app.clear_retention("nothing-here")
    assert len(_rows(app)) == before  # a refused call changed nothing and records nothing
    # Reading never writes the audit table.
    app.queues(), app.stats(), app.find_jobs("archive"), app.retention(), app.schedules.list()
    assert len(_rows(app)) == before


def test_the_dashboard_entry_takes_the_apis_rows_in(app: App) -> None:
    ids = [app.enqueue("t", queue="b") for _ in range(3)]
    by = {"via": "dashboard", "caller": "admin-token:feedbeef", "role": "admin",
          "client": "10.0.0.7"}

    def bulk() -> None:
        with _audit.entry(app.backend, "bulk cancel", "live jobs", actor="admin-token:feedbeef",
                          by=by) as entry:
            entry.detail = {"ids": ids}
            entry.affected = sum(app.cancel(i) == "cancelled" for i in ids)

    entry = _one_row(app, bulk)  # one row for three cancels
    assert (entry.action, entry.actor, entry.affected) == ("bulk cancel", "admin-token:feedbeef",
                                                           3)
    assert entry.detail == {"ids": ids, "by": by}

    # Failing half-way after changes: the row says what was done and what failed.
    more = [app.enqueue("t", queue="c") for _ in range(2)]

    def broken() -> None:
        with _audit.entry(app.backend, "bulk cancel", "live jobs", actor="x", by=by):
            app.cancel(more[0])
            app.cancel(987654)

    before = {e.id for e in _rows(app)}
    with pytest.raises(JobNotFound):
        broken()
    [failed] = [e for e in _rows(app) if e.id not in before]
    assert failed.affected == 1 and failed.detail["done"] == [f"cancel job {more[0]}"]
    assert failed.detail["error"].startswith("JobNotFound")

    # Failing before any change: nothing recorded.
    def refused() -> None:
        with _audit.entry(app.backend, "cancel", "job 987654", actor="x", by=by):
            app.cancel(987654)

    before_ids = {e.id for e in _rows(app)}
    with pytest.raises(JobNotFound):
        refused()
    assert {e.id for e in _rows(app)} == before_ids
