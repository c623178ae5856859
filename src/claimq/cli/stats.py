"""`claimq stats`: per queue and per task, what waits, what runs, what failed and how fast it
goes (App.stats())."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from claimq.cli._common import Seconds, _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _age, _cell, _console, _emit_json, _queue_state, _when, new_table
from claimq.stats import DEFAULT_WINDOW, BreakerInfo, Latency, QueueStats, Stats, TaskStats

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text


NAME_WIDTH = 22  # longer queue and task names are cut (with …) to keep tables in 100 columns


def _ms(latency: Latency) -> str:
    """p50/p95/p99 in seconds, compact."""
    if latency.p50 is None or latency.p95 is None or latency.p99 is None:
        return "-"
    return "/".join(_short(v) for v in (latency.p50, latency.p95, latency.p99))


def _short(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    return _age(seconds)


def _span(seconds: float) -> str:
    """A setting's duration, short: 30s, 1m, 1m30s, 2h, 1h30m, 1.5s."""
    if seconds != int(seconds) or seconds < 60:
        return f"{seconds:g}s"
    whole = int(seconds)
    for unit, size, rest_unit, rest_size in (("d", 86400, "h", 3600), ("h", 3600, "m", 60),
                                             ("m", 60, "s", 1)):
        if whole >= size:
            n, rest = divmod(whole, size)
            return f"{n}{unit}" + (f"{rest // rest_size}{rest_unit}" if rest else "")
    return f"{whole}s"  # pragma: no cover - seconds < 60 returned above


def _rate(value: float) -> str:
    if not value:
        return "0"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def _state(q: QueueStats) -> Text:
    from rich.text import Text

    if q.throttled_until is not None and q.active and not q.paused:
        return Text("throttled", style="yellow")  # until: `claimq queues list`
    return _queue_state(q)


def _name_column(table: Table, header: str) -> None:
    table.add_column(header, max_width=NAME_WIDTH, overflow="ellipsis", no_wrap=True)


def _now_table(title: str, rows: Sequence[TaskStats], queues: bool) -> Table:
    """What waits and runs now: queue (or task), state, due, scheduled, running (under a live
    lease), past their lease (reclaimable: not counted as running), the oldest due job's age,
    dead letters."""
    from rich.text import Text

    table = new_table(title)
    _name_column(table, "queue" if queues else "task")
    if queues:
        table.add_column("state")
    for header in ("due", "scheduled", "running", "past lease", "oldest due", "dead"):
        table.add_column(header, justify="right")
    for r in rows:
        cells: list[Text | str] = [_cell(r.name)]
        if isinstance(r, QueueStats):
            cells.append(_state(r))
        cells += [
            # a job past its lease is not running: its worker stalled or is gone
            _cell(r.pending), _cell(r.scheduled), _cell(r.running - r.past_lease),
            Text(str(r.past_lease), style="red" if r.past_lease else ""),
            _cell(_age(r.oldest_due_age)),
            Text(str(r.dead), style="red" if r.dead else ""),
        ]
        table.add_row(*cells)
    if not rows:
        table.caption = "no queues yet: a queue appears with its first job" if queues else None
    return table


def _done_table(title: str, rows: Sequence[TaskStats], queues: bool) -> Table:
    """What finished: completions and failures per minute, attempts per job, wait (due to
    start) and run (start to finish) latency p50/p95/p99."""
    from rich.text import Text

    table = new_table(title)
    _name_column(table, "queue" if queues else "task")
    for header in ("done/min", "failed/min", "attempts", "wait p50/p95/p99", "run p50/p95/p99"):
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(
            _cell(r.name), _cell(_rate(r.completed_per_minute)),
            Text(_rate(r.failed_per_minute), style="red" if r.failed_per_minute else ""),
            _cell("-" if r.attempts_per_job is None else f"{r.attempts_per_job:.2f}"),
            _cell(_ms(r.wait)), _cell(_ms(r.run)),
        )
    return table


def _dead_table(stats: Stats) -> Table:
    from rich.text import Text

    table = new_table("dead letters by reason")
    _name_column(table, "queue")
    table.add_column("reason")
    table.add_column("jobs", justify="right")
    for q in stats.queues:
        for reason, n in q.dead_by_reason.items():
            table.add_row(_cell(q.name), Text(reason, style="red"), _cell(n))
    return table


def _render(stats: Stats) -> Table:
    """Tables of at most 100 columns: queues now, tasks now, then what finished (rates over
    the time they measure), dead letters by reason, breakers, throttled keys."""
    from rich.table import Table

    grid = Table.grid(padding=(1, 0))
    grid.add_row(_now_table(f"claimq queues at {_when(stats.at)} UTC", stats.queues, True))
    if stats.tasks:
        grid.add_row(_now_table("tasks", stats.tasks, False))
    measured = stats.window if stats.measured is None else stats.measured
    if any(r.completed_per_minute or r.failed_per_minute or r.wait.count
           for r in (*stats.queues, *stats.tasks)):
        title = f"finished in the last {_age(stats.window)}"
        if measured < stats.window:
            title += f" (rates over {_age(measured)}: since the first of those jobs was created)"
        grid.add_row(_done_table(title, stats.queues, True))
        if stats.tasks:
            grid.add_row(_done_table("finished, by task", stats.tasks, False))
    else:
        grid.add_row(f"nothing finished in the last {_age(stats.window)}")
    if any(q.dead for q in stats.queues):
        grid.add_row(_dead_table(stats))
    if stats.breakers:
        grid.add_row(_breakers_table(stats.breakers))
    if stats.throttled_keys:
        keys = new_table("throttled rate keys")
        for column in ("queue", "key", "until (UTC)"):
            keys.add_column(column)
        for k in stats.throttled_keys:
            keys.add_row(k.queue, k.key, _when(k.until))
        grid.add_row(keys)
    return grid


def _breakers_table(breakers: Sequence[BreakerInfo]) -> Table:
    from rich.text import Text

    table = new_table("circuit breakers")
    _name_column(table, "queue")
    _name_column(table, "task")
    table.add_column("state")
    table.add_column("failures", justify="right")
    for column in ("opens after, for", "open until", "probe"):
        table.add_column(column)
    styles = {"closed": "green", "open": "red", "half_open": "yellow"}
    for b in breakers:
        table.add_row(
            b.queue, b.task, Text(b.state, style=styles.get(b.state, "")),
            str(b.failures), f"{b.failure_limit} in {_span(b.window)}, {_span(b.cooldown)}",
            _when(b.open_until)[11:] + " UTC" if b.state == "open" else "-",
            "-" if b.probe_id is None or b.state != "half_open" else str(b.probe_id))
    return table


WIDTH = 100


def _show(view: Table) -> None:
    """Printed at most WIDTH columns wide: a cell longer than planned wraps within it."""
    console = _console()
    console.print(view, width=min(console.width, WIDTH))


@click.command()
@click.option("--watch", is_flag=True, help="Refresh until Ctrl-C.")
@click.option(
    "--interval", type=Seconds(allow_zero=False), default=2.0, show_default=True,
    metavar="DURATION", help="Refresh interval of --watch.",
)
@click.option(
    "--window", type=Seconds(allow_zero=False), default=DEFAULT_WINDOW, show_default=True,
    metavar="DURATION", help="How far back rates, latency and attempts look.",
)
@json_option
def stats(watch: bool, interval: float, window: float, as_json: bool) -> None:
    """Per queue and per task: due and scheduled (due later) jobs, running ones (under a live
    lease), those past their lease (reclaimable; not counted as running), the oldest due job's
    age, dead letters; what finished within --window: completions and failures per minute
    (over the time measured: less than the window when nothing finished before it), attempts
    per job, wait (due to start) and run (start to finish) latency p50/p95/p99; dead letters by
    reason. Fits 100 columns.

    With --watch --json, prints one JSON line per refresh.
    """
    app = _open()
    if not watch:
        if as_json:
            _emit_json(app.stats(window))
        else:
            _show(_render(app.stats(window)))
        return
    try:
        if as_json:
            while True:
                _emit_json(app.stats(window), compact=True)
                sys.stdout.flush()
                time.sleep(interval)
        console = _console()
        if console.is_terminal:
            from rich.live import Live

            with Live(_render(app.stats(window)), console=console, auto_refresh=False) as live:
                while True:
                    time.sleep(interval)
                    live.update(_render(app.stats(window)), refresh=True)
        while True:
            _show(_render(app.stats(window)))
            sys.stdout.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        return


main.add_command(stats)
