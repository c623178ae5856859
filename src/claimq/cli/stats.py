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
from claimq.cli._render import _age, _cell, _console, _emit_json, _print, _queue_state, _when
from claimq.stats import DEFAULT_WINDOW, BreakerInfo, Latency, QueueStats, Stats, TaskStats

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text


def _ms(latency: Latency) -> str:
    """p50/p95/p99 in seconds, compact."""
    if latency.p50 is None or latency.p95 is None or latency.p99 is None:
        return "-"
    return "/".join(_short(v) for v in (latency.p50, latency.p95, latency.p99))


def _short(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    return _age(seconds)


def _rate(value: float) -> str:
    return f"{value:.1f}" if value else "0"


def _dead(figures: TaskStats) -> Text:
    from rich.text import Text

    if not figures.dead_by_reason:
        return Text("0")
    return Text(", ".join(f"{reason} {n}" for reason, n in figures.dead_by_reason.items()),
                style="red")


def _table(title: str, rows: Sequence[TaskStats], queues: bool) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("queue" if queues else "task")
    if queues:
        table.add_column("state")
    for header in ("pending", "scheduled", "running", "past lease", "oldest due"):
        table.add_column(header, justify="right")
    if queues:
        table.add_column("max workers", justify="right")
    for header in ("done/min", "failed/min", "wait p50/95/99", "run p50/95/99", "attempts/job",
                   "dead"):
        table.add_column(header, justify="right")
    for r in rows:
        cells: list[Text | str] = [_cell(r.name)]
        if isinstance(r, QueueStats):
            cells.append(_queue_state(r))
        cells += [
            _cell(r.pending), _cell(r.scheduled), _cell(r.running),
            Text(str(r.past_lease), style="red" if r.past_lease else ""),
            _cell(_age(r.oldest_due_age)),
        ]
        if isinstance(r, QueueStats):
            cells.append(_cell(r.max_workers if r.max_workers is not None else "unlimited"))
        cells += [
            _cell(_rate(r.completed_per_minute)),
            Text(_rate(r.failed_per_minute), style="red" if r.failed_per_minute else ""),
            _cell(_ms(r.wait)), _cell(_ms(r.run)),
            _cell("-" if r.attempts_per_job is None else f"{r.attempts_per_job:.2f}"),
            _dead(r),
        ]
        table.add_row(*cells)
    if not rows:
        table.caption = "no queues yet: a queue appears with its first job" if queues else None
    return table


def _render(stats: Stats) -> Table:
    from rich.table import Table

    window = _age(stats.window)
    grid = Table.grid(padding=(1, 0))
    grid.add_row(_table(f"claimq queues at {_when(stats.at)} UTC (rates, latency: last "
                        f"{window})", stats.queues, True))
    if stats.tasks:
        grid.add_row(_table("tasks", stats.tasks, False))
    if stats.breakers:
        grid.add_row(_breakers_table(stats.breakers))
    if stats.throttled_keys:
        keys = Table(title="throttled rate keys", title_justify="left")
        for column in ("queue", "key", "until"):
            keys.add_column(column)
        for k in stats.throttled_keys:
            keys.add_row(k.queue, k.key, _when(k.until))
        grid.add_row(keys)
    return grid


def _breakers_table(breakers: Sequence[BreakerInfo]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="circuit breakers", title_justify="left")
    for column in ("queue", "task", "state", "failures", "opens after", "open until", "probe"):
        table.add_column(column)
    styles = {"closed": "green", "open": "red", "half_open": "yellow"}
    for b in breakers:
        table.add_row(
            b.queue, b.task, Text(b.state, style=styles.get(b.state, "")),
            str(b.failures), f"{b.failure_limit} in {_short(b.window)}, open {_short(b.cooldown)}",
            _when(b.open_until) if b.state == "open" else "-",
            "-" if b.probe_id is None or b.state != "half_open" else str(b.probe_id))
    return table


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
    """Per queue and per task: pending (due, scheduled), running, running past their lease, the
    oldest due job's age, completions and failures per minute, wait (due to start) and run
    (start to finish) latency p50/p95/p99, attempts per job, and dead letters by reason.

    With --watch --json, prints one JSON line per refresh.
    """
    app = _open()
    if not watch:
        if as_json:
            _emit_json(app.stats(window))
        else:
            _print(_render(app.stats(window)))
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
            _print(_render(app.stats(window)))
            sys.stdout.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        return


main.add_command(stats)
