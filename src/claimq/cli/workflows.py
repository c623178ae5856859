"""`claimq workflows …`: workflows (jobs with dependencies): list, show (every job with its
status and the jobs it waits for), cancel and retry (rerun the failed steps)."""

from __future__ import annotations

import sys
from typing import Any

import click

from claimq.app import App
from claimq.backends.base import Edge, WorkflowInfo
from claimq.cli._common import (
    EXIT_FAILED,
    EXIT_USAGE,
    JOB_ID,
    CliError,
    Whole,
    _open,
    _say_error,
    json_option,
)
from claimq.cli._main import main
from claimq.cli._render import _emit_json, _jsonable, _print, _workflow_view, _workflows_table
from claimq.workflow import workflow_state


def _open_workflows() -> App:
    app = _open()
    if not app.backend.capabilities.workflows:
        raise CliError("this database's backend has no workflows")
    return app


def _info(app: App, workflow_id: int) -> WorkflowInfo:
    info = app.backend.get_workflow(workflow_id)
    if info is None:
        raise CliError(f"no workflow {workflow_id} (never written, or pruned)")
    return info


def workflow_json(info: WorkflowInfo) -> dict[str, Any]:
    """A workflow as --json shows it: its row, its jobs' counts by status and its state."""
    return {**_jsonable(info), "state": workflow_state(info.counts)}


def edge_json(edge: Edge) -> dict[str, Any]:
    return {"parent": edge.parent, "child": edge.child, "on_failure": edge.on_failure,
            "resolved": edge.resolved}


@main.group()
def workflows() -> None:
    """Workflows: jobs that wait for other jobs (list, show, cancel, retry the failed steps)."""


@workflows.command("list")
@click.option("--limit", type=Whole(1, 10_000), default=50, show_default=True)
@click.option("--before", type=JOB_ID, metavar="ID",
              help="Only workflows with an id below ID (the next page: the last id shown).")
@json_option
def workflows_list(limit: int, before: int | None, as_json: bool) -> None:
    """List workflows, newest first.

    Each with its state and its jobs' counts by status. State: running (a job can still
    run), blocked (only jobs waiting on a dead dependency are left: resurrect it, or
    `claimq workflows retry`), succeeded, failed.
    """
    found = _open_workflows().backend.list_workflows(limit, before)
    if as_json:
        _emit_json([workflow_json(info) for info in found])
    else:
        _print(_workflows_table(found, limit))


@workflows.command("show")
@click.argument("workflow_id", metavar="ID", type=JOB_ID)
@json_option
def workflows_show(workflow_id: int, as_json: bool) -> None:
    """Show workflow ID: its jobs and what each waits for.

    The workflow's state and counts, then every job with its status and the ids of the jobs
    it waits for (--json: the jobs and the edges)."""
    app = _open_workflows()
    info = _info(app, workflow_id)
    jobs, edges = app.backend.workflow_graph(workflow_id)
    if as_json:
        _emit_json({**workflow_json(info), "jobs": _jsonable(jobs),
                    "edges": [edge_json(e) for e in edges]})
    else:
        _print(_workflow_view(info, workflow_state(info.counts), jobs, edges))


@workflows.command("cancel")
@click.argument("workflow_id", metavar="ID", type=JOB_ID)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
def workflows_cancel(workflow_id: int, yes: bool, as_json: bool) -> None:
    """Cancel every unfinished job of workflow ID.

    Every job not yet started goes to dead letters (reason cancelled), every running one is
    asked to stop. Finished jobs are left alone.

    Exit 1 when nothing was left to cancel.
    """
    if not yes and not sys.stdin.isatty():
        raise CliError(
            f"cancelling a workflow cancels every job of it not finished: confirm with --yes "
            f"(cancel workflow {workflow_id})", EXIT_USAGE)
    app = _open_workflows()
    info = _info(app, workflow_id)
    if not yes and not click.confirm(
            f"Cancel every unfinished job of workflow {workflow_id} ({info.name})?",
            default=False):
        _say_error("not confirmed: nothing cancelled")
        click.get_current_context().exit(EXIT_FAILED)
    touched = app.workflow(workflow_id).cancel()  # audited, as the App's actions are
    _report(app, info, "cancelled", touched, as_json,
            done=f"{touched} job(s) cancelled (running ones are asked to stop; their workers "
                 f"stop them shortly)",
            nothing="has no unfinished job")


@workflows.command("retry")
@click.argument("workflow_id", metavar="ID", type=JOB_ID)
@json_option
def workflows_retry(workflow_id: int, as_json: bool) -> None:
    """Rerun the failed steps of workflow ID.

    Each dead job that failed itself is resurrected (attempts reset, history kept), and the
    jobs its failure cancelled come back to wait for it. Steps that succeeded never run again.

    Exit 1 when no step had failed.
    """
    app = _open_workflows()
    info = _info(app, workflow_id)
    revived = app.workflow(workflow_id).retry()
    _report(app, info, "resurrected", revived, as_json,
            done=f"resurrected job(s) {', '.join(map(str, revived))}; the jobs waiting for them "
                 f"follow",
            nothing="has no failed step to retry")


def _report(app: App, before: WorkflowInfo, key: str, outcome: Any, as_json: bool, *,
            done: str, nothing: str) -> None:
    """The ending of an action on a workflow: its row after it (--json, with `key`: the
    outcome) or a line saying what was done; exit 1 when the action found nothing to do."""
    after = app.backend.get_workflow(before.id) or before
    if as_json:
        _emit_json({**workflow_json(after), key: outcome})
    elif outcome:
        click.echo(f"workflow {before.id}: {done}")
    if not outcome:
        if not as_json:
            _say_error(f"workflow {before.id} {nothing} ({workflow_state(before.counts)}): "
                       f"nothing changed")
        click.get_current_context().exit(EXIT_FAILED)
