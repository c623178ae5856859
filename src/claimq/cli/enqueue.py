"""`claimq enqueue TASK`: queue one job, or many identical ones in chunks."""

from __future__ import annotations

from typing import Any

import click

from claimq import _validate
from claimq.app import App
from claimq.cli import main
from claimq.cli._common import (
    EXIT_USAGE,
    PRIORITY,
    SECONDS,
    CliError,
    _app,
    _classify,
    _open,
    _parse_payload,
    _use_app,
    json_option,
)
from claimq.cli._render import _emit_json, _progress_bar

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
@click.option("--delay", type=SECONDS, metavar="SECONDS", help="Run no earlier than this.")
@click.option("--key", metavar="KEY", help="Idempotency key.")
@click.option(
    "--max-attempts", type=click.IntRange(*_validate.MAX_ATTEMPTS_RANGE), metavar="N",
    help="Attempts before dead letters (default: the task's, else 20).",
)
@click.option("--tag", "tags", multiple=True, metavar="T", help="A tag (repeatable).")
@click.option(
    "--count", type=click.IntRange(1, 10_000_000), default=1, show_default=True,
    help=f"Enqueue this many identical jobs (in transactions of {ENQUEUE_CHUNK}).",
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
    as_json: bool,
) -> None:
    """Queue a job of TASK (a task name); prints its id.

    With --app, TASK must be one of that app's tasks and --payload must fit its handler's
    parameters (else exit 2, nothing written), and the task's defaults (queue, priority, max
    attempts, timeout; its retry policy is the worker's) apply unless given here; the app's
    database is used unless --database is given. Without --app nothing checks TASK: the job
    is stored under that name on queue `default` with 20 attempts, and a worker that has no
    such task dead-letters it (unknown_task).
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
    job = app._spec(spec)  # validate before touching the database: bad input writes nothing
    _open()
    ids = [app.enqueue(**spec)] if count == 1 else _enqueue_chunks(app, spec, count)
    if as_json:
        _emit_json({"id": ids[0], "ids": ids} if count == 1 else {"ids": ids, "count": len(ids)})
    elif count == 1:
        click.echo(ids[0])
    else:
        click.echo(
            f"enqueued {len(ids)} jobs of {task} on queue {job.queue} "
            f"(ids {min(ids)}..{max(ids)})"
        )


def _enqueue_chunks(app: App, spec: dict[str, Any], count: int) -> list[int]:
    """enqueue_many in transactions of ENQUEUE_CHUNK jobs, with a progress bar on a terminal.
    Input was validated up front; if the database fails midway, says how many were queued."""
    ids: list[int] = []
    with _progress_bar("enqueueing", count) as advance:
        try:
            while len(ids) < count:
                size = min(ENQUEUE_CHUNK, count - len(ids))
                ids += app.enqueue_many([spec] * size)
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
