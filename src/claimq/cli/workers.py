"""`claimq workers`: the worker processes in the registry (App.workers())."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from claimq.backends.base import WorkerInfo
from claimq.cli._common import _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _age, _cell, _emit_json, _print, _when

if TYPE_CHECKING:
    from rich.table import Table


def _table(workers: Sequence[WorkerInfo]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"claimq workers ({sum(w.alive for w in workers)} alive)",
                  title_justify="left")
    for header in ("worker", "state", "host", "pid", "queues", "version", "started",
                   "last seen"):
        table.add_column(header)
    for header in ("in flight", "concurrency"):
        table.add_column(header, justify="right")
    for w in workers:
        state = Text("alive", style="green") if w.alive else Text("dead", style="red")
        table.add_row(
            _cell(w.id), state, _cell(w.host), _cell(w.pid),
            _cell(",".join(w.queues) if w.queues is not None else "*"), _cell(w.version),
            _cell(_when(w.started_at)), _cell(f"{_age(w.silent_for)} ago"),
            _cell(w.in_flight), _cell(w.concurrency),
        )
    if not workers:
        table.caption = "no worker has registered (start one: claimq worker APP)"
    return table


@click.command()
@json_option
def workers(as_json: bool) -> None:
    """Worker processes: alive ones (refreshing their row with their heartbeat) and those gone
    silent (marked dead, pruned later)."""
    found = _open().workers()
    if as_json:
        _emit_json(found)
    else:
        _print(_table(found))


main.add_command(workers)
