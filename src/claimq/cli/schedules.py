"""`claimq schedules …`: the periodic schedules stored in the database (app.schedules)."""

from __future__ import annotations

from typing import Any

import click

from claimq import _validate
from claimq.app import App
from claimq.cli._common import (
    EXIT_USAGE,
    POSITIVE_SECONDS,
    PRIORITY,
    CliError,
    Whole,
    _app,
    _open,
    _parse_payload,
    _use_app,
    json_option,
)
from claimq.cli._main import main
from claimq.cli._render import _cell, _emit_json, _print, _when, new_table
from claimq.schedules import MISSED, Schedule


@main.group()
def schedules() -> None:
    """Periodic schedules: cron (in a time zone) or fixed intervals; every worker fires them,
    one job per tick."""


def _table(rows: list[Schedule]) -> Any:
    table = new_table()
    for column in ("name", "task", "when", "tz", "missed", "state", "next run (UTC)",
                   "last run (UTC)", "last job"):
        table.add_column(column)
    for s in rows:
        when = s.cron if s.cron is not None else f"every {s.every:g}s"
        table.add_row(
            _cell(s.name), _cell(s.task), _cell(when), _cell(s.tz), _cell(s.missed),
            _cell("paused" if s.paused else "active"), _cell(_when(s.next_run_at)),
            _cell(_when(s.last_run_at)), _cell(s.last_job_id),
        )
    return table


def _show(row: Schedule, as_json: bool, verb: str) -> None:
    if as_json:
        _emit_json(row.as_dict())
    else:
        _print(f"schedule {row.name} {verb}: task {row.task} on queue {row.queue}, "
               f"{row.max_attempts} attempts; next run {_when(row.next_run_at)}")


@schedules.command("list")
@json_option
def schedules_list(as_json: bool) -> None:
    """Every schedule with its next and last run."""
    rows = _open().schedules.list()
    if as_json:
        _emit_json([r.as_dict() for r in rows])
    elif rows:
        _print(_table(rows))
    else:
        _print("no schedules")


_TIMING_OPTIONS = [
    click.option("--cron", metavar="EXPR", help="A cron expression, e.g. '*/5 * * * *'."),
    click.option("--every", type=POSITIVE_SECONDS, metavar="DURATION", help="A fixed interval."),
    click.option("--tz", metavar="ZONE", help="The cron's time zone (default UTC)."),
    click.option("--missed", type=click.Choice(list(MISSED)),
                 help="Ticks missed while no worker ran: latest (default), all, skip."),
    click.option("--payload", metavar="JSON", help="The job's arguments (JSON object, @FILE, -)."),
    click.option("--queue", metavar="Q",
                 help="The job's queue (default: the task's with --app, else default)."),
    click.option("--priority", type=PRIORITY,
                 help="The job's priority (default: the task's with --app, else 0)."),
    click.option("--max-attempts", type=Whole(*_validate.MAX_ATTEMPTS_RANGE),
                 metavar="N",
                 help="Attempts before dead letters (default: the task's with --app, else 20)."),
]

_APP_OPTION = click.option(
    "--app", "app_path", metavar="APP",
    help="The claimq.App (module:attribute) whose task TASK must be: its defaults apply and "
         "the payload is checked against it.")


def _app_for(app_path: str | None, task: str | None) -> App:
    """The App of --app (TASK must be one of its tasks: else exit 2, nothing written), or the
    App of --database."""
    if app_path is None:
        return _app()
    app = _use_app(app_path)
    if task is not None and task not in app.tasks:
        known = ", ".join(sorted(app.tasks)[:20]) or "none"
        raise CliError(f"{app_path} has no task {task!r} (its tasks: {known})", EXIT_USAGE)
    return app


def _unchecked(row: Schedule) -> None:
    """Without --app, what was stored and why nothing checked it (stderr)."""
    click.echo(
        f"note: without --app, task {row.task!r} was not checked; its jobs go to queue "
        f"{row.queue!r} with priority {row.priority} and {row.max_attempts} attempts (claimq's "
        "defaults unless given), and a worker without that task dead-letters them", err=True)


def _timing_options(fn: Any) -> Any:
    for option in reversed(_TIMING_OPTIONS):
        fn = option(fn)
    return fn


@schedules.command("add")
@click.argument("name")
@click.argument("task")
@_APP_OPTION
@_timing_options
@click.option("--paused", is_flag=True, help="Add it paused.")
@json_option
def schedules_add(name: str, task: str, app_path: str | None, cron: str | None,
                  every: float | None, tz: str | None, missed: str | None, payload: str | None,
                  queue: str | None, priority: int | None, max_attempts: int | None,
                  paused: bool, as_json: bool) -> None:
    """Add schedule NAME, enqueueing TASK at every tick (give --cron or --every).

    With --app, TASK must be one of that app's tasks (else exit 2, nothing written), the
    task's defaults (queue, priority, max attempts, timeout) apply unless given here, and the
    payload is checked as the app's enqueue checks it; the app's database is used unless
    --database is given. Without --app nothing checks TASK: its jobs go to queue `default`
    with priority 0 and 20 attempts unless given, and a worker that has no such task
    dead-letters them (unknown_task).
    """
    _app_for(app_path, task)
    row = _open().schedules.add(
        name, task, cron=cron, every=every, tz=tz or "UTC", missed=missed or "latest",  # type: ignore[arg-type]
        payload=_parse_payload(payload), queue=queue, priority=priority,
        max_attempts=max_attempts, paused=paused)
    _show(row, as_json, "added")
    if app_path is None:
        _unchecked(row)


@schedules.command("change")
@click.argument("name")
@click.option("--task", metavar="TASK", help="Enqueue this task instead.")
@_APP_OPTION
@_timing_options
@json_option
def schedules_change(name: str, task: str | None, app_path: str | None, cron: str | None,
                     every: float | None, tz: str | None, missed: str | None,
                     payload: str | None, queue: str | None, priority: int | None,
                     max_attempts: int | None, as_json: bool) -> None:
    """Change schedule NAME; a new timing takes effect at its next tick, in every worker.

    With --app, a new --task must be one of that app's tasks and the payload is checked
    against the schedule's task; the fields not given keep their stored values.
    """
    given = {"task": task, "cron": cron, "every": every, "tz": tz, "missed": missed,
             "payload": _parse_payload(payload), "queue": queue, "priority": priority,
             "max_attempts": max_attempts}
    changes = {k: v for k, v in given.items() if v is not None}
    if not changes:
        raise click.UsageError("nothing to change: give at least one option")
    _app_for(app_path, task)
    _show(_open().schedules.change(name, **changes), as_json, "changed")


@schedules.command("pause")
@click.argument("name")
@json_option
def schedules_pause(name: str, as_json: bool) -> None:
    """Pause schedule NAME (the ticks that fall meanwhile are not caught up)."""
    row = _open().schedules.pause(name)
    if as_json:
        _emit_json(row.as_dict())
    else:
        _print(f"schedule {name} paused")


@schedules.command("resume")
@click.argument("name")
@json_option
def schedules_resume(name: str, as_json: bool) -> None:
    """Resume schedule NAME from its next tick after now."""
    _show(_open().schedules.resume(name), as_json, "resumed")


@schedules.command("remove")
@click.argument("name")
@json_option
def schedules_remove(name: str, as_json: bool) -> None:
    """Remove schedule NAME (a worker whose code declares it writes it again at start)."""
    _open().schedules.remove(name)
    if as_json:
        _emit_json({"removed": name})
    else:
        _print(f"schedule {name} removed")


@schedules.command("run-now")
@click.argument("name")
@json_option
def schedules_run_now(name: str, as_json: bool) -> None:
    """Enqueue schedule NAME's job now, outside its ticks."""
    job_id = int(_open().schedules.run_now(name))
    if as_json:
        _emit_json({"schedule": name, "id": job_id})
    else:
        _print(f"enqueued job {job_id} for schedule {name}")
