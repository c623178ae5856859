"""`claimq enqueue TASK`: queue one job, or many identical ones in chunks."""

from __future__ import annotations

import itertools
from typing import Any

import click

from claimq import _audit, _tracing, _validate
from claimq._specs import job_spec
from claimq._validate import NewJob
from claimq.app import App
from claimq.cli._common import (
    EXIT_USAGE,
    PRIORITY,
    SECONDS,
    CliError,
    Whole,
    _app,
    _classify,
    _open,
    _parse_payload,
    _use_app,
    json_option,
)
from claimq.cli._main import main
from claimq.cli._render import _emit_json, _progress_bar
from claimq.errors import PermissionDenied

ENQUEUE_CHUNK = 1000


@main.command()
@click.argument("task")
@click.option(
    "--app", "app_path", metavar="APP",
    help="The claimq.App (module:attribute) whose task TASK must be: its defaults apply.",
)
@click.option("--payload", metavar="JSON", help="A JSON object; @FILE reads a file, - stdin.")
@click.option("--queue", metavar="Q", help="Queue (default: the task's, else default).")
@click.option("--priority", type=PRIORITY, help="Higher runs first (default: the task's, else 0).")
@click.option("--delay", type=SECONDS, metavar="DURATION", help="Run no earlier than this.")
@click.option("--key", metavar="KEY", help="Idempotency key.")
@click.option(
    "--max-attempts", type=Whole(*_validate.MAX_ATTEMPTS_RANGE), metavar="N",
    help="Attempts before dead letters (default: the task's, else 20).",
)
@click.option("--tag", "tags", multiple=True, metavar="T", help="A tag (repeatable).")
@click.option(
    "--count", type=Whole(1, 10_000_000), default=1, show_default=True,
    help=f"Enqueue this many identical jobs (in transactions of {ENQUEUE_CHUNK}).",
)
@click.option(
    "--force", is_flag=True,
    help="Without --app: enqueue TASK even though no live worker registers it.",
)
@json_option
def enqueue(
    task: str,
    app_path: str | None,
    payload: str | None,
    queue: str | None,
    priority: int | None,
    delay: float | None,
    key: str | None,
    max_attempts: int | None,
    tags: tuple[str, ...],
    count: int,
    force: bool,
    as_json: bool,
) -> None:
    """Queue a job of TASK (a task name); prints its id.

    With --app, TASK must be one of that app's tasks and --payload must fit its handler's
    parameters (else exit 2, nothing written), and the task's defaults (queue, priority, max
    attempts, timeout; its retry policy is the worker's) apply unless given here; the app's
    database is used unless --database is given.

    Without --app, TASK is checked against the live workers (each records the task names it
    runs): while any worker is live, a name that none of them registers is refused (exit 2,
    nothing written) unless --force is given; with no live worker it is not checked. The job
    is stored under that name on queue `default` with 20 attempts. A worker that does not
    register a job's task never runs or fails it: it hands the job back uncounted, so a job
    of a name that no worker registers waits, pending.
    """
    app = _app() if app_path is None else _use_app(app_path)
    if app_path is not None and task not in app.tasks:
        known = ", ".join(sorted(app.tasks)[:20]) or "none"
        raise CliError(f"{app_path} has no task {task!r} (its tasks: {known})", EXIT_USAGE)
    spec: dict[str, Any] = {"task": task, "payload": _parse_payload(payload), "tags": tags}
    for name, value in (
        ("queue", queue), ("priority", priority), ("delay", delay), ("idempotency_key", key),
        ("max_attempts", max_attempts),
    ):
        if value is not None:
            spec[name] = value
    if key is not None and count > 1:
        raise CliError("--key names one job: it cannot be combined with --count", EXIT_USAGE)
    # The one check of the job, by the rule App.enqueue_many applies (_specs.job_spec), before
    # the database is touched: bad input writes nothing. The checked job is what is written.
    job = job_spec(app, spec)
    _open()
    if app_path is None and not force:
        _check_registered(app, task)
    ids = _write(app, job, 1) if count == 1 else _enqueue_chunks(app, job, count)
    # An operator's enqueue is audited (the API's, a producer's hot path, is not).
    _audit.record(app.backend, "enqueue", f"queue {job.queue}", {
        "task": task, "ids": ids[:100], "count": len(ids)}, len(ids))
    if as_json:
        _emit_json({"id": ids[0], "ids": ids} if count == 1 else {"ids": ids, "count": len(ids)})
    elif count == 1:
        click.echo(ids[0])
    else:
        click.echo(
            f"enqueued {len(ids)} jobs of {task} on queue {job.queue} "
            f"(ids {min(ids)}..{max(ids)})"
        )


def _check_registered(app: App, task: str) -> None:
    """Refuses a task name that no live worker registers while some are live (a typo would
    wait for ever); says so and goes on when the registry cannot tell."""
    try:
        live = [w for w in app.workers() if w.alive]
    except PermissionDenied as exc:
        click.echo(f"warning: {task!r} not checked against the live workers: cannot read the "
                   f"worker registry ({exc})", err=True)
        return
    if not live or any(w.tasks is None for w in live):
        return  # nobody to ask, or a worker too old to say what it runs
    known = sorted({name for w in live for name in w.tasks or ()})
    if task in known:
        return
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    raise CliError(
        f"no live worker registers task {task!r} (the {len(live)} live worker(s) run: "
        f"{shown or 'no tasks'}); nothing written. Check the name, give --app to check it "
        f"against an App, or --force to enqueue it anyway", EXIT_USAGE)


def _write(app: App, job: NewJob, count: int) -> list[int]:
    """`count` copies of the checked job in one transaction, as App.enqueue_many writes its
    jobs once it has checked them (with the caller's trace context), without checking again."""
    traceparent = _tracing.current_traceparent()  # None without OpenTelemetry
    if traceparent is not None:
        job = job._replace(trace_context=traceparent)
    return app.backend.enqueue_streaming(
        count, itertools.repeat(job, count), app.idempotency_retention)


def _enqueue_chunks(app: App, job: NewJob, count: int) -> list[int]:
    """The checked job `count` times, in transactions of ENQUEUE_CHUNK jobs, with a progress
    bar on a terminal; if the database fails midway, says how many were queued."""
    ids: list[int] = []
    with _progress_bar("enqueueing", count) as advance:
        try:
            while len(ids) < count:
                size = min(ENQUEUE_CHUNK, count - len(ids))
                ids += _write(app, job, size)
                advance(len(ids))
        except Exception as exc:
            verdict = _classify(exc)
            if verdict is None or not ids:
                raise
            raise CliError(
                f"{verdict[0]} ({len(ids)} of {count} jobs were enqueued and remain queued)",
                verdict[1],
            ) from exc
    return ids
