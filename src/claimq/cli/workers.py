"""`claimq workers`: the worker processes in the registry (App.workers())."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from claimq.app import WORKER_SILENT_AFTER
from claimq.backends.base import WorkerInfo
from claimq.cli._common import Seconds, _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _age, _cell, _emit_json, _print, new_table

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text


def _state_text(w: WorkerInfo) -> Text:
    from rich.text import Text

    if w.alive:
        return Text("alive", style="green")
    # silent: no refresh within the liveness window; dead: a reaper marked it so
    return Text("silent" if w.dead_at is None else "dead", style="red")


def _table(workers: Sequence[WorkerInfo], silent_after: float) -> Table:
    gone = [w for w in workers if not w.alive]
    table = new_table(f"claimq workers ({len(workers) - len(gone)} alive"
                      + (f", {len(gone)} gone" if gone else "") + ")")
    for header in ("worker", "state", "host", "pid", "queues", "version", "up for",
                   "last seen"):
        table.add_column(header)
    for header in ("in flight", "concurrency"):
        table.add_column(header, justify="right")
    for w in workers:
        up = _age((w.last_seen_at - w.started_at).total_seconds() + w.silent_for) \
            if w.alive else "-"
        table.add_row(
            _cell(w.id), _state_text(w), _cell(w.host), _cell(w.pid),
            _cell(", ".join(w.queues) if w.queues is not None else "all"), _cell(w.version),
            _cell(up), _cell(f"{_age(w.silent_for)} ago"),
            # a gone worker's last count is stale: its jobs come back when their leases end
            _cell(w.in_flight if w.alive else "-"), _cell(w.concurrency),
        )
    if not workers:
        table.caption = "no worker has registered (start one: claimq worker APP)"
    elif gone:
        held = sum(w.in_flight for w in gone)
        table.caption = (
            f"silent: no refresh for over {_age(silent_after)}; dead: marked by a reaper. "
            + (f"They last reported {held} job(s) in flight: once past their leases these are "
               "not running (claimq stats: past lease) and a running worker's reaper puts them "
               "back in their queues." if held else "They held no jobs.")
        )
    return table


@click.command()
@click.option(
    "--silent-after", type=Seconds(allow_zero=False), default=WORKER_SILENT_AFTER,
    show_default=True, metavar="DURATION",
    help="A worker whose row was not refreshed for this long is shown as silent, not alive.",
)
@json_option
def workers(silent_after: float, as_json: bool) -> None:
    """Worker processes: alive ones (refreshing their row every few seconds) and those gone
    silent (no refresh for --silent-after; killed or cut off) or marked dead by a reaper, until
    they are pruned. A gone worker's jobs return to their queues when their leases run out."""
    found = _open().workers(silent_after=silent_after)
    if as_json:
        _emit_json(found)
    else:
        _print(_table(found, silent_after))


main.add_command(workers)
