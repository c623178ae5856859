"""`claimq jobs …`: browse and act on jobs: live, archived (succeeded) and dead letters.
Dead-letter verbs (resurrect, purge) are `claimq dead …`'s; `jobs purge` is the archive's."""

from __future__ import annotations

import sys
from typing import Literal

import click

from claimq import _validate
from claimq.cli._common import (
    EXIT_FAILED,
    EXIT_USAGE,
    JOB_ID,
    PRIORITY,
    SECONDS,
    CliError,
    F,
    Whole,
    _open,
    _say_error,
    json_option,
)
from claimq.cli._main import main
from claimq.cli._render import _age, _emit_json, _job_view, _jobs_table, _jsonable, _print, _spinner
from claimq.job import DeadReason, Status

LIVE_STATUSES = (Status.PENDING, Status.FETCHED, Status.PROCESSING)


def _status_filter(table: str, status: str | None) -> str | None:
    """--status for the chosen table: a live status, `succeeded`, or `dead`/a dead reason."""
    if status is None:
        return None
    if table == "live":
        allowed = [s.value for s in LIVE_STATUSES]
        if status in allowed:
            return status
    elif table == "archive":
        allowed = [Status.SUCCEEDED.value]
        if status in allowed:
            return None
    else:
        allowed = [Status.DEAD.value] + [r.value for r in DeadReason]
        if status == Status.DEAD.value:
            return None
        if status in allowed:
            return status
    raise CliError(
        f"--status {status!r} does not apply to --table {table}: use one of {', '.join(allowed)}",
        EXIT_USAGE,
    )


def _check_filters(queue: str | None, task: str | None) -> None:
    if queue is not None:
        _validate.queue_name(queue)
    if task is not None:
        _validate.task_name(task)


def _list(
    table: Literal["live", "archive", "dead"],
    queue: str | None,
    task: str | None,
    status: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    _check_filters(queue, task)
    app = _open()
    found = app.list_jobs(
        table, queue=queue, task=task, status=status, limit=limit, offset=offset
    )
    if as_json:
        _emit_json(found)
    else:
        _print(_jobs_table(found, table))


def _list_options(fn: F) -> F:
    for option in reversed([
        click.option("--queue", metavar="Q", help="Only this queue."),
        click.option("--task", metavar="TASK", help="Only this task."),
        click.option(
            "--limit", type=Whole(1, 100_000), default=100, show_default=True
        ),
        click.option("--offset", type=Whole(low=0), default=0, show_default=True),
    ]):
        fn = option(fn)
    return fn


@main.group()
def jobs() -> None:
    """Browse and act on jobs: live, archived (succeeded) and dead letters (see `dead`)."""


@jobs.command("list")
@click.option(
    "--table", "table", type=click.Choice(["live", "archive", "dead"]), default="live",
    show_default=True, help="live jobs, the archive of succeeded ones, or dead letters.",
)
@_list_options
@click.option(
    "--status", metavar="STATUS",
    help="live: pending|fetched|processing; dead: a dead-letter reason.",
)
@json_option
def jobs_list(
    table: Literal["live", "archive", "dead"],
    queue: str | None,
    task: str | None,
    limit: int,
    offset: int,
    status: str | None,
    as_json: bool,
) -> None:
    """List jobs (live: oldest first; archive and dead: most recent first)."""
    _list(table, queue, task, _status_filter(table, status), limit, offset, as_json)


def _show(job_id: int, as_json: bool, *, dead_only: bool = False) -> None:
    job = _open().get_job(job_id)
    if dead_only and job.status != Status.DEAD:
        raise CliError(
            f"job {job_id} is not a dead letter (it is {job.status.value}): "
            f"see `claimq jobs show {job_id}`"
        )
    progress = _open().get_progress(job_id)
    if as_json:
        _emit_json({**_jsonable(job), "progress": _jsonable(progress)})
    else:
        _print(_job_view(job, progress))


@jobs.command("show")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def jobs_show(job_id: int, as_json: bool) -> None:
    """Everything about job ID, wherever it lives, with its error history."""
    _show(job_id, as_json)


@jobs.command("cancel")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def jobs_cancel(job_id: int, as_json: bool) -> None:
    """Cancel job ID: waiting jobs go to dead letters now, a running job is asked to stop.

    A job that has already finished is left alone (exit 1).
    """
    app = _open()
    outcome = app.cancel(job_id)
    if as_json:
        _emit_json({"id": job_id, "outcome": outcome})
    elif outcome == "cancelled":
        click.echo(f"job {job_id} cancelled (moved to dead letters)")
    elif outcome == "cancel_requested":
        click.echo(f"job {job_id} is running: cancel requested, its worker stops it shortly")
    if outcome == "finished":
        if not as_json:
            status = app.get_job(job_id).status.value
            _say_error(f"job {job_id} has already finished ({status}): nothing changed")
        click.get_current_context().exit(EXIT_FAILED)


@jobs.command("priority")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@click.argument("priority", metavar="N", type=PRIORITY)
@json_option
def jobs_priority(job_id: int, priority: int, as_json: bool) -> None:
    """Set the priority of pending (or held workflow) job ID to N (higher runs first)."""
    app = _open()
    app.set_priority(job_id, priority)
    if as_json:
        _emit_json(app.get_job(job_id))
    else:
        click.echo(f"job {job_id} now has priority {priority}")


@jobs.command("run-now")
@click.argument("job_ids", metavar="ID...", type=JOB_ID, nargs=-1, required=True)
@json_option
def jobs_run_now(job_ids: tuple[int, ...], as_json: bool) -> None:
    """Make pending jobs ID... due now (a retry's backoff or a later run_at is skipped).

    Jobs already due, running or finished are left as they are. Exit 1 when none changed.
    """
    changed = _open().run_now(job_ids)
    if as_json:
        _emit_json({"changed": changed})
    elif changed:
        click.echo(f"due now: job(s) {', '.join(map(str, changed))}")
    if not changed:
        if not as_json:
            _say_error("no job changed (already due, running, finished or unknown)")
        click.get_current_context().exit(EXIT_FAILED)
    elif len(changed) < len(set(job_ids)) and not as_json:
        left = sorted(set(job_ids) - set(changed))
        click.echo(f"left as they were: job(s) {', '.join(map(str, left))}")


def _purge(
    table: Literal["archive", "dead"],
    older_than: float | None,
    queue: str | None,
    task: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    _check_filters(queue, task)
    what = "the archive" if table == "archive" else "the dead letters"
    scope = ""
    if queue:
        scope += f" of queue {queue}"
    if task:
        scope += f" of task {task}"
    if older_than is not None:
        scope += f" older than {_age(older_than)}"
    if not yes and not sys.stdin.isatty():
        raise CliError(
            f"purging deletes jobs for good: confirm with --yes (purge {what}{scope})",
            EXIT_USAGE,
        )
    app = _open()
    if not yes and not click.confirm(f"Delete every job{scope} in {what}?", default=False):
        _say_error("not confirmed: nothing deleted")
        click.get_current_context().exit(EXIT_FAILED)
    with _spinner(f"purging {what}"):
        count = app.purge(table, older_than=older_than, queue=queue, task=task)
    if as_json:
        _emit_json({"table": table, "purged": count})
    else:
        click.echo(f"purged {count} job(s) from {what}")


def _purge_options(fn: F) -> F:
    for option in reversed([
        click.option(
            "--older-than", type=SECONDS, metavar="DURATION",
            help="Only jobs that finished at least this long ago.",
        ),
        click.option("--queue", metavar="Q", help="Only this queue."),
        click.option("--task", metavar="TASK", help="Only this task."),
        click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation."),
    ]):
        fn = option(fn)
    return fn


@jobs.command("purge")
@_purge_options
@json_option
def jobs_purge(
    older_than: float | None, queue: str | None, task: str | None, yes: bool, as_json: bool
) -> None:
    """Delete succeeded jobs from the archive for good.

    Dead letters are purged with `claimq dead purge`.
    """
    _purge("archive", older_than, queue, task, yes, as_json)
