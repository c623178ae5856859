"""`claimq schedules …`: the periodic schedules stored in the database (app.schedules)."""

from __future__ import annotations

from typing import Any

import click

from claimq.cli import main
from claimq.cli._common import POSITIVE_SECONDS, PRIORITY, _open, _parse_payload, json_option
from claimq.cli._render import _cell, _emit_json, _print, _when
from claimq.schedules import MISSED, Schedule


@main.group()
def schedules() -> None:
    """Periodic schedules: cron (in a time zone) or fixed intervals; every worker fires them,
    one job per tick."""


def _table(rows: list[Schedule]) -> Any:
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for column in ("name", "task", "when", "tz", "missed", "state", "next run", "last run",
                   "last job"):
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
        _print(f"schedule {row.name} {verb}; next run {_when(row.next_run_at)}")


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
    click.option("--every", type=POSITIVE_SECONDS, metavar="SECONDS", help="A fixed interval."),
    click.option("--tz", metavar="ZONE", help="The cron's time zone (default UTC)."),
    click.option("--missed", type=click.Choice(list(MISSED)),
                 help="Ticks missed while no worker ran: latest (default), all, skip."),
    click.option("--payload", metavar="JSON", help="The job's arguments (JSON object, @FILE, -)."),
    click.option("--queue", metavar="Q", help="The job's queue (default: default)."),
    click.option("--priority", type=PRIORITY, help="The job's priority."),
]


def _timing_options(fn: Any) -> Any:
    for option in reversed(_TIMING_OPTIONS):
        fn = option(fn)
    return fn


@schedules.command("add")
@click.argument("name")
@click.argument("task")
@_timing_options
@click.option("--paused", is_flag=True, help="Add it paused.")
@json_option
def schedules_add(name: str, task: str, cron: str | None, every: float | None, tz: str | None,
                  missed: str | None, payload: str | None, queue: str | None,
                  priority: int | None, paused: bool, as_json: bool) -> None:
    """Add schedule NAME, enqueueing TASK at every tick (give --cron or --every)."""
    row = _open().schedules.add(
        name, task, cron=cron, every=every, tz=tz or "UTC", missed=missed or "latest",  # type: ignore[arg-type]
        payload=_parse_payload(payload), queue=queue, priority=priority, paused=paused)
    _show(row, as_json, "added")


@schedules.command("change")
@click.argument("name")
@click.option("--task", metavar="TASK", help="Enqueue this task instead.")
@_timing_options
@json_option
def schedules_change(name: str, task: str | None, cron: str | None, every: float | None,
                     tz: str | None, missed: str | None, payload: str | None,
                     queue: str | None, priority: int | None, as_json: bool) -> None:
    """Change schedule NAME; a new timing takes effect at its next tick, in every worker."""
    given = {"task": task, "cron": cron, "every": every, "tz": tz, "missed": missed,
             "payload": _parse_payload(payload), "queue": queue, "priority": priority}
    changes = {k: v for k, v in given.items() if v is not None}
    if not changes:
        raise click.UsageError("nothing to change: give at least one option")
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
