"""claimq jobs … and claimq dead …: listings, inspection and operator actions."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from datetime import datetime

from cli_helpers import TIMEOUT, Cli, archived, cli_env, dead_permanent

from claimq import App, DeadReason, Status


def test_jobs_list_and_show(cli: Cli, app: App) -> None:
    first = app.enqueue("alpha", {"n": 1}, queue="q1", tags=["t1"])
    second = app.enqueue("beta", {"n": 2}, queue="q2", priority=3)
    done = archived(app, "delta", "qa", result={"ok": True})
    failed = dead_permanent(app, "gamma", "qd", message="card declined")

    (
        live, filtered, dead_rows, archive_rows, human_live, human_archive, show_json, show_human,
        missing,
    ) = cli.many(
        ["jobs", "list", "--json"],
        ["jobs", "list", "--queue", "q1", "--task", "alpha", "--status", "pending", "--json"],
        ["jobs", "list", "--table", "dead", "--json"],
        ["jobs", "list", "--table", "archive", "--limit", "5", "--offset", "0", "--json"],
        ["jobs", "list"],
        ["jobs", "list", "--table", "archive"],
        ["jobs", "show", str(failed), "--json"],
        ["jobs", "show", str(failed)],
        ["jobs", "show", "987654"],
    )
    assert [j["id"] for j in live.json()] == [first, second]
    (only,) = filtered.json()
    assert only["id"] == first and only["payload"] == {"n": 1} and only["tags"] == ["t1"]
    datetime.fromisoformat(only["created_at"])  # datetimes are ISO strings
    (dead_row,) = dead_rows.json()
    assert dead_row["id"] == failed and dead_row["reason"] == DeadReason.PERMANENT_ERROR
    (archive_row,) = archive_rows.json()
    assert archive_row["id"] == done and archive_row["result"] == {"ok": True}
    assert "alpha" in human_live.ok().out and "beta" in human_live.ok().out
    assert "delta" in human_archive.ok().out

    job = show_json.json()
    assert job["id"] == failed and job["status"] == "dead" and job["task"] == "gamma"
    (error,) = job["errors"]
    assert error["error"] == "Permanent" and error["message"] == "card declined"
    assert error["worker"] == "test-worker" and "card declined" in error["traceback"]
    datetime.fromisoformat(job["finished_at"])
    for word in ("gamma", "permanent_error", "errors (1)", "card declined", "payload"):
        assert word in show_human.ok().out
    missing.failed(1, "no job 987654")


def test_jobs_actions(cli: Cli, app: App) -> None:
    to_cancel = app.enqueue("alpha", {"n": 1}, queue="q1")
    to_reprioritise = app.enqueue("beta", queue="q2")
    done = archived(app, "delta", "qa")
    failed = dead_permanent(app, "gamma", "qd")

    cancel, cancel_done, revive, revive_live, priority, priority_done, cancel_missing = cli.many(
        ["jobs", "cancel", str(to_cancel), "--json"],
        ["jobs", "cancel", str(done)],
        ["dead", "resurrect", str(failed), "--payload", '{"n": 30}', "--priority", "7", "--json"],
        ["dead", "resurrect", str(to_reprioritise)],
        ["jobs", "priority", str(to_reprioritise), "9"],
        ["jobs", "priority", str(done), "1"],
        ["jobs", "cancel", "987654"],
    )
    assert cancel.json() == {"id": to_cancel, "outcome": "cancelled"}
    cancelled = app.get_job(to_cancel)
    assert cancelled.status == Status.DEAD and cancelled.reason == DeadReason.CANCELLED
    cancel_done.failed(1, "already finished")
    assert app.get_job(done).status == Status.SUCCEEDED

    again = revive.json()
    assert again["status"] == "pending" and again["payload"] == {"n": 30}
    revived = app.get_job(failed)
    assert revived.status == Status.PENDING and revived.priority == 7 and revived.attempts == 0
    assert revived.payload == {"n": 30} and len(revived.errors) == 1  # history kept
    revive_live.failed(1, "no dead letter")

    assert "priority 9" in priority.ok().out
    assert app.get_job(to_reprioritise).priority == 9
    priority_done.failed(1, "no pending or held job")
    cancel_missing.failed(1, "no job 987654")



def _purge_with_terminal_stdin(
    cli: Cli, answer: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """Runs a purge whose stdin is a terminal (so it asks) and answers the prompt."""
    master, slave = pty.openpty()
    try:
        os.write(master, answer.encode() + b"\n")
        return subprocess.run(
            cli.argv(args), stdin=slave, capture_output=True, text=True, timeout=TIMEOUT,
            cwd=cli.cwd, env=cli_env(),
        )
    finally:
        os.close(slave)
        os.close(master)


def test_purge(cli: Cli, app: App) -> None:
    kept_archive = archived(app, "delta", "qa")
    archived(app, "delta", "qb")
    dead_a = app.enqueue("gamma", queue="qa")
    dead_b = app.enqueue("gamma", queue="qb")
    app.cancel(dead_a)
    app.cancel(dead_b)

    too_young, by_queue = cli.many(
        ["jobs", "purge", "--older-than", "3600", "--yes", "--json"],
        ["jobs", "purge", "--queue", "qb", "--yes", "--json"],
    )
    assert too_young.json() == {"table": "archive", "purged": 0}
    assert by_queue.json() == {"table": "archive", "purged": 1}
    assert [j.id for j in app.list_jobs("archive")] == [kept_archive]
    assert len(app.list_jobs("dead")) == 2

    declined = _purge_with_terminal_stdin(cli, "n", "dead", "purge", "--queue", "qa")
    assert declined.returncode == 1, declined
    assert "Delete every job of queue qa" in declined.stdout
    assert declined.stderr == "error: not confirmed: nothing deleted\n"
    assert len(app.list_jobs("dead")) == 2
    accepted = _purge_with_terminal_stdin(cli, "y", "dead", "purge", "--queue", "qa")
    assert accepted.returncode == 0, accepted
    assert "purged 1 job(s) from the dead letters" in accepted.stdout
    assert [j.id for j in app.list_jobs("dead")] == [dead_b]

    everything = cli("dead", "purge", "--yes", "--json").json()
    assert everything == {"table": "dead", "purged": 1}
    assert app.list_jobs("dead") == []


def test_dead_letters(cli: Cli, app: App) -> None:
    cancelled = app.enqueue("alpha", {"n": 1}, queue="q1")
    app.cancel(cancelled)
    failed = dead_permanent(app, "gamma", "qd", message="no such customer")
    pending = app.enqueue("beta", queue="q2")

    (
        all_dead, by_reason, by_queue, human, show_json, show_human, show_live, show_missing,
    ) = cli.many(
        ["dead", "list", "--json"],
        ["dead", "list", "--reason", "cancelled", "--json"],
        ["dead", "list", "--queue", "qd", "--task", "gamma", "--limit", "10", "--json"],
        ["dead", "list"],
        ["dead", "show", str(failed), "--json"],
        ["dead", "show", str(failed)],
        ["dead", "show", str(pending)],
        ["dead", "show", "987654"],
    )
    assert {j["id"] for j in all_dead.json()} == {cancelled, failed}
    assert [j["id"] for j in by_reason.json()] == [cancelled]
    assert [j["id"] for j in by_queue.json()] == [failed]
    for word in ("alpha", "gamma", "cancelled", "permanent_error", "no such customer"):
        assert word in human.ok().out
    shown = show_json.json()
    assert shown["reason"] == "permanent_error"
    assert shown["errors"][0]["message"] == "no such customer"
    assert "no such customer" in show_human.ok().out
    show_live.failed(1, "not a dead letter")
    show_missing.failed(1, "no job 987654")
    resurrect, revive_live = cli.many(
        ["dead", "resurrect", str(cancelled), "--priority", "4", "--json"],
        ["dead", "resurrect", str(pending)],
    )
    back = resurrect.json()
    assert back["status"] == "pending" and back["priority"] == 4
    revived = app.get_job(cancelled)
    assert revived.status == Status.PENDING and revived.priority == 4
    revive_live.failed(1, "no dead letter")
    assert app.get_job(failed).status == Status.DEAD


def test_jobs_run_now(cli: Cli, app: App) -> None:
    later = app.enqueue("alpha", queue="q1", delay=3600)
    also_later = app.enqueue("alpha", queue="q1", delay=3600)
    due = app.enqueue("alpha", queue="q1")
    done = archived(app, "delta", "qa")

    one, mixed, none, as_json = cli.many(
        ["jobs", "run-now", str(later)],
        ["jobs", "run-now", str(also_later), str(done)],
        ["jobs", "run-now", str(due), "987654"],
        ["jobs", "run-now", str(due), "--json"],
    )
    assert f"due now: job(s) {later}" in one.ok().out
    out = mixed.ok().out
    assert f"due now: job(s) {also_later}" in out and f"left as they were: job(s) {done}" in out
    none.failed(1, "no job changed")
    assert as_json.code == 1 and json.loads(as_json.out) == {"changed": []}
    for job_id in (later, also_later):
        job = app.get_job(job_id)
        assert job.status == Status.PENDING and job.run_at <= datetime.now(job.run_at.tzinfo)
    assert app.get_job(done).status == Status.SUCCEEDED
