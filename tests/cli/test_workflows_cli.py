"""claimq workflows …: list, show (jobs and the ids they wait for), cancel and retry, on a real
SQLite file and PostgreSQL."""

from __future__ import annotations

import os
import pty
import subprocess
from datetime import datetime
from typing import Any

import pytest
from cli_helpers import TIMEOUT, Cli, cli_env

from claimq import App, DeadReason, Permanent, Status, Workflow
from claimq.workflow import WorkflowHandle


@pytest.fixture
def wf_app(app: App) -> App:
    assert app.backend.capabilities.workflows, app.backend.kind
    return app


def run_one(app: App, queue: str, *, fail: bool = False, result: Any = None) -> int:
    """Claims the one due job of `queue` and completes it (or fails it for good)."""
    (job,) = app.claim("test-worker", [queue], limit=1)
    attempt = app.start(job)
    if fail:
        assert app.fail(job, Permanent("boom"), attempt=attempt, worker_id="test-worker") == "dead"
    else:
        app.complete(job, result)
    return job.id


def failed_pipeline(app: App, queue: str) -> tuple[WorkflowHandle, list[int]]:
    """extract -> transform (fails for good) -> load (cancelled: dependency_failed), and a
    `report` that runs whatever happens to transform."""
    wf = Workflow("etl", key=f"etl-{queue}")
    extract = wf.add("extract", {"n": 1}, queue=queue)
    transform = wf.add("transform", after=[extract], queue=queue)
    load = wf.add("load", after=[transform], queue=queue)
    report = wf.add("report", after=[(transform, "run")], queue=queue)
    handle = app.enqueue_workflow(wf)
    run_one(app, queue, result={"rows": 3})
    run_one(app, queue, fail=True)
    ids = [handle.job_id(s) for s in (extract, transform, load, report)]
    assert app.get_job(ids[2]).reason == DeadReason.DEPENDENCY_FAILED
    assert app.get_job(ids[3]).status == Status.PENDING
    return handle, ids


def test_workflows_list_and_show(cli: Cli, wf_app: App) -> None:
    app = wf_app
    failed, (extract, transform, load, report) = failed_pipeline(app, "qa")
    waiting = Workflow("fan")
    first = waiting.add("split", queue="qb")
    parts = [waiting.add("part", {"i": i}, after=[first], queue="qb") for i in range(2)]
    waiting.add("join", after=parts, queue="qb")
    running = app.enqueue_workflow(waiting)

    (
        listed, first_page, second_page, human, human_page, shown, human_show, missing, bad_id,
    ) = cli.many(
        ["workflows", "list", "--json"],
        ["workflows", "list", "--limit", "1", "--json"],
        ["workflows", "list", "--before", str(running.id), "--json"],
        ["workflows", "list"],
        ["workflows", "list", "--limit", "1"],
        ["workflows", "show", str(failed.id), "--json"],
        ["workflows", "show", str(running.id)],
        ["workflows", "show", "987654"],
        ["workflows", "show", "zero"],
    )
    rows = listed.json()
    assert [w["id"] for w in rows] == [running.id, failed.id]  # newest first
    fan, etl = rows
    assert (fan["name"], fan["key"], fan["state"]) == ("fan", None, "running")
    assert fan["counts"] == {"pending": 1, "held": 3}
    assert (etl["name"], etl["key"], etl["state"]) == ("etl", "etl-qa", "running")
    assert etl["counts"] == {"succeeded": 1, "dead": 2, "pending": 1}
    datetime.fromisoformat(etl["created_at"])
    assert [w["id"] for w in first_page.json()] == [running.id]
    assert [w["id"] for w in second_page.json()] == [failed.id]
    table = human.ok().out
    for word in ("fan", "etl", "etl-qa", "running", "held 3", "succeeded 1, dead 2"):
        assert word in table, word
    assert "--before" not in table
    assert f"more may follow: --before {running.id}" in human_page.ok().out

    detail = shown.json()
    assert (detail["id"], detail["state"], detail["on_failure"]) == (failed.id, "running", "cancel")
    statuses = {j["id"]: (j["task"], j["status"], j["reason"]) for j in detail["jobs"]}
    assert statuses == {
        extract: ("extract", "succeeded", None),
        transform: ("transform", "dead", "permanent_error"),
        load: ("load", "dead", "dependency_failed"),
        report: ("report", "pending", None),
    }
    assert {(e["parent"], e["child"], e["on_failure"], e["resolved"]) for e in detail["edges"]} == {
        (extract, transform, "cancel", True),
        (transform, load, "cancel", True),
        (transform, report, "run", True),
    }
    (result,) = [j["result"] for j in detail["jobs"] if j["id"] == extract]
    assert result == {"rows": 3}

    out = human_show.ok().out
    split, part0, part1, join = running.job_ids
    assert f"workflow {running.id}" in out and "held 3" in out and "waits for" in out
    lines = {line.split()[1]: line for line in out.splitlines()
             if line.strip().startswith("│") and line.split()[1].isdigit()}
    assert "held" in lines[str(join)] and f"{part0}, {part1}" in lines[str(join)]
    assert f" {split} " in lines[str(part1)] and "pending" in lines[str(split)]
    missing.failed(1, "no workflow 987654")
    bad_id.usage_error("zero")


def test_a_blocked_and_a_finished_workflow(cli: Cli, wf_app: App) -> None:
    app = wf_app
    wf = Workflow("careful", on_failure="wait")
    first = wf.add("first", queue="qw")
    wf.add("second", after=[first], queue="qw")
    blocked = app.enqueue_workflow(wf)
    run_one(app, "qw", fail=True)
    one = Workflow("one")
    one.add("only", queue="qo")
    done = app.enqueue_workflow(one)
    run_one(app, "qo", result=1)

    listed, human = cli.many(
        ["workflows", "list", "--json"], ["workflows", "show", str(blocked.id)])
    states = {w["id"]: (w["state"], w["finished_at"]) for w in listed.json()}
    assert states[blocked.id] == ("blocked", None)
    assert states[done.id][0] == "succeeded"
    datetime.fromisoformat(states[done.id][1])
    assert "blocked" in human.ok().out and "(wait)" in human.ok().out


def test_workflows_cancel(cli: Cli, wf_app: App) -> None:
    app = wf_app
    wf = Workflow("to-cancel")
    a = wf.add("a", queue="qc")
    b = wf.add("b", after=[a], queue="qc")
    handle = app.enqueue_workflow(wf)

    unconfirmed, missing = cli.many(
        ["workflows", "cancel", str(handle.id)],
        ["workflows", "cancel", "987654", "--yes"],
    )
    unconfirmed.usage_error("--yes")
    assert handle.status().counts == {"pending": 1, "held": 1}
    missing.failed(1, "no workflow 987654")

    declined = _with_terminal_stdin(cli, "n", "workflows", "cancel", str(handle.id))
    assert declined.returncode == 1, declined
    assert f"Cancel every unfinished job of workflow {handle.id} (to-cancel)?" in declined.stdout
    assert declined.stderr == "error: not confirmed: nothing cancelled\n"
    assert handle.status().counts == {"pending": 1, "held": 1}

    audited = len(app.backend.list_audit(None, 1000))
    cancelled = cli("workflows", "cancel", str(handle.id), "--yes", "--json").json()
    assert cancelled["cancelled"] == 2
    (entry, *_) = app.backend.list_audit(None, 1000)  # the one row, naming the CLI
    assert len(app.backend.list_audit(None, 1000)) == audited + 1
    assert (entry.action, entry.target, entry.affected) == (
        "cancel workflow", f"workflow {handle.id}", 2)
    assert entry.actor.startswith("cli ") and entry.detail["by"]["via"] == "cli"
    assert (cancelled["state"], cancelled["counts"]) == ("failed", {"dead": 2})
    for step in (a, b):
        job = app.get_job(handle.job_id(step))
        assert (job.status, job.reason) == (Status.DEAD, DeadReason.CANCELLED)

    again = cli("workflows", "cancel", str(handle.id), "--yes")
    again.failed(1, "no unfinished job", "nothing changed")
    again_json = cli("workflows", "cancel", str(handle.id), "--yes", "--json")
    assert again_json.code == 1 and '"cancelled": 0' in again_json.out

    running = Workflow("running")
    running.add("long", queue="qr")
    handle = app.enqueue_workflow(running)
    (job,) = app.claim("test-worker", ["qr"], limit=1)
    app.start(job)
    accepted = _with_terminal_stdin(cli, "y", "workflows", "cancel", str(handle.id))
    assert accepted.returncode == 0, accepted
    assert "1 job(s) cancelled" in accepted.stdout
    assert app.get_job(job.id).cancel_requested is True


def test_workflows_retry(cli: Cli, wf_app: App) -> None:
    app = wf_app
    handle, (extract, transform, load, report) = failed_pipeline(app, "qr")
    run_one(app, "qr")  # report ran anyway
    assert handle.status().state == "failed"

    retried = cli("workflows", "retry", str(handle.id), "--json").json()
    assert retried["resurrected"] == [transform]
    entry = app.backend.list_audit(None, 1)[0]
    assert (entry.action, entry.target, entry.affected, entry.detail["ids"]) == (
        "retry workflow", f"workflow {handle.id}", 1, [transform])
    assert entry.actor.startswith("cli ")
    assert retried["state"] == "running"
    assert retried["counts"] == {"succeeded": 2, "pending": 1, "held": 1}
    assert app.get_job(transform).status == Status.PENDING
    assert app.get_job(load).status == Status.HELD
    assert app.get_job(extract).attempts == 1  # never run again

    nothing, missing = cli.many(
        ["workflows", "retry", str(handle.id)], ["workflows", "retry", "987654"])
    nothing.failed(1, "no failed step", "nothing changed")
    missing.failed(1, "no workflow 987654")

    run_one(app, "qr")  # transform, this time it succeeds: load is released
    assert app.get_job(load).status == Status.PENDING
    run_one(app, "qr")
    human = cli("workflows", "show", str(handle.id)).ok().out
    assert "succeeded" in human and "dead" not in human


def test_workflows_help_names_the_verbs(cli: Cli) -> None:
    out = cli("workflows", "--help").ok().out
    for verb in ("list", "show", "cancel", "retry"):
        assert verb in out


def _with_terminal_stdin(cli: Cli, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Runs a command whose stdin is a terminal (so it asks) and answers the prompt."""
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
