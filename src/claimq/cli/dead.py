"""`claimq dead …`: dead letters: list, show, resurrect (run again) and purge."""

from __future__ import annotations

import click

from claimq import _validate
from claimq.cli._common import JOB_ID, PRIORITY, _app, _open, _parse_payload, json_option
from claimq.cli._main import main
from claimq.cli._render import _emit_json
from claimq.cli.jobs import _list, _list_options, _purge, _purge_options, _show
from claimq.job import DeadReason


@main.group()
def dead() -> None:
    """Dead letters: jobs that failed for good, were cancelled, or expired."""


@dead.command("list")
@_list_options
@click.option(
    "--reason", type=click.Choice([r.value for r in DeadReason]), help="Only this reason."
)
@json_option
def dead_list(
    queue: str | None,
    task: str | None,
    limit: int,
    offset: int,
    reason: str | None,
    as_json: bool,
) -> None:
    """Dead letters, most recent first."""
    _list("dead", queue, task, reason, limit, offset, as_json)


@dead.command("show")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def dead_show(job_id: int, as_json: bool) -> None:
    """Everything about dead letter ID, with its error history."""
    _show(job_id, as_json, dead_only=True)


@dead.command("resurrect")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@click.option("--payload", metavar="JSON", help="Replace the payload (JSON object, @FILE, -).")
@click.option("--priority", type=PRIORITY, help="Replace the priority.")
@json_option
def dead_resurrect(job_id: int, payload: str | None, priority: int | None, as_json: bool) -> None:
    """Move dead letter ID back to pending (attempts reset, history kept).

    --payload and --priority replace the job's payload and priority.
    """
    edited = _parse_payload(payload)
    app = _app()
    if edited is not None:
        _validate.payload_json(edited, app.payload_limit)
    _open()
    app.resurrect(job_id, payload=edited, priority=priority)
    if as_json:
        _emit_json(app.get_job(job_id))
    else:
        click.echo(f"job {job_id} is pending again (attempts reset, history kept)")


@dead.command("purge")
@_purge_options
@json_option
def dead_purge(
    older_than: float | None, queue: str | None, task: str | None, yes: bool, as_json: bool
) -> None:
    """Delete dead letters for good."""
    _purge("dead", older_than, queue, task, yes, as_json)
