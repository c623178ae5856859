"""`claimq retention …`: how long finished jobs stay (app.set_retention), and a pruning pass."""

from __future__ import annotations

import dataclasses

import click

from claimq.cli import main
from claimq.cli._common import SECONDS, _open, json_option
from claimq.cli._render import _age, _cell, _emit_json, _print

ROWS = click.IntRange(0, 2**62)


@main.group()
def retention() -> None:
    """Retention of the archive and dead letters, per queue ('*': the default); every worker
    prunes by it (one at a time)."""


@retention.command("list")
@json_option
def retention_list(as_json: bool) -> None:
    """The policies in force: the default first, then each queue's own."""
    policies = _open().retention()
    if as_json:
        _emit_json([dataclasses.asdict(p) for p in policies])
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for column in ("queue", "archive age", "archive rows", "dead age", "dead rows"):
        table.add_column(column)
    for p in policies:
        table.add_row(_cell(p.queue), _cell(_age(p.archive_age)), _cell(p.archive_rows),
                      _cell(_age(p.dead_age)), _cell(p.dead_rows))
    _print(table)


@retention.command("set")
@click.option("--queue", metavar="Q", help="This queue's own policy (default: the default's).")
@click.option("--archive-age", type=SECONDS, metavar="SECONDS", help="Archive: at most this old.")
@click.option("--archive-rows", type=ROWS, metavar="N", help="Archive: at most N rows.")
@click.option("--dead-age", type=SECONDS, metavar="SECONDS", help="Dead letters: at most this old.")
@click.option("--dead-rows", type=ROWS, metavar="N", help="Dead letters: at most N rows.")
@json_option
def retention_set(queue: str | None, archive_age: float | None, archive_rows: int | None,
                  dead_age: float | None, dead_rows: int | None, as_json: bool) -> None:
    """Set a policy (a limit not given is lifted)."""
    policy = _open().set_retention(queue, archive_age=archive_age, archive_rows=archive_rows,
                                   dead_age=dead_age, dead_rows=dead_rows)
    if as_json:
        _emit_json(dataclasses.asdict(policy))
    else:
        _print(f"retention for {policy.queue} set")


@retention.command("clear")
@click.option("--queue", metavar="Q", help="This queue's policy (default: the default's).")
def retention_clear(queue: str | None) -> None:
    """Remove a policy: the queue takes the default again (the default: the built-in one)."""
    _open().clear_retention(queue)
    _print(f"retention for {queue or '*'} cleared")


@retention.command("partition")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def retention_partition(yes: bool) -> None:
    """PostgreSQL: partition the archive by day, so that retention drops whole days (locks
    the archive while its rows are checked once)."""
    if not yes:
        click.confirm("partition the archive (it is locked meanwhile)?", abort=True)
    done = _open().partition_archive()
    _print("archive partitioned by day" if done else "the archive is partitioned already")


@retention.command("prune")
@click.option("--batch", type=click.IntRange(1, 100_000), default=1000, show_default=True,
              help="Rows per transaction.")
@json_option
def retention_prune(batch: int, as_json: bool) -> None:
    """Run one pruning pass now, as the workers do (unless one is pruning right now)."""
    counts = _open().prune(batch=batch)
    if as_json:
        _emit_json({"pruned": counts})
    elif counts is None:
        _print("another process is pruning right now; nothing done")
    else:
        _print("pruned " + ", ".join(f"{n} {table}" for table, n in counts.items()))
