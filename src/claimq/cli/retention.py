"""`claimq retention …`: how long finished jobs stay (app.set_retention), and a pruning pass."""

from __future__ import annotations

import dataclasses

import click

from claimq._retention import ALL_QUEUES
from claimq.cli._common import SECONDS, Whole, _open, json_option
from claimq.cli._main import main
from claimq.cli._render import _age, _cell, _emit_json, _print, new_table

ROWS = Whole(0, 2**62)


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
    table = new_table()
    for column in ("queue", "archive age", "archive rows", "dead age", "dead rows"):
        table.add_column(column)
    for p in policies:
        table.add_row(_cell(p.queue), _cell(_age(p.archive_age)), _cell(p.archive_rows),
                      _cell(_age(p.dead_age)), _cell(p.dead_rows))
    _print(table)


LIMITS = ("archive-age", "archive-rows", "dead-age", "dead-rows")


@retention.command("set")
@click.option("--queue", metavar="Q", help="This queue's own policy (default: the default's).")
@click.option("--archive-age", type=SECONDS, metavar="DURATION", help="Archive: at most this old.")
@click.option("--archive-rows", type=ROWS, metavar="N", help="Archive: at most N rows.")
@click.option("--dead-age", type=SECONDS, metavar="DURATION",
              help="Dead letters: at most this old.")
@click.option("--dead-rows", type=ROWS, metavar="N", help="Dead letters: at most N rows.")
@click.option("--lift", "lifted", multiple=True, type=click.Choice(LIMITS),
              help="Remove this limit (repeatable).")
@json_option
def retention_set(queue: str | None, archive_age: float | None, archive_rows: int | None,
                  dead_age: float | None, dead_rows: int | None, lifted: tuple[str, ...],
                  as_json: bool) -> None:
    """Change a policy: the limits given (and those lifted with --lift); every other limit
    stays as it is in force for that queue (its own policy, else the default's)."""
    given = {"archive-age": archive_age, "archive-rows": archive_rows, "dead-age": dead_age,
             "dead-rows": dead_rows}
    both = [name for name in lifted if given[name] is not None]
    if both:
        raise click.UsageError(f"--{both[0]} is both set and lifted")
    if not lifted and all(v is None for v in given.values()):
        raise click.UsageError("give a limit to set (--archive-age, --archive-rows, "
                               "--dead-age, --dead-rows) or one to --lift")
    app = _open()
    found = app.retention()  # the default ('*') first, then each queue's own
    name = queue or ALL_QUEUES
    current = next((p for p in found if p.queue == name), found[0])
    merged = {field: None if option in lifted else (
                  given[option] if given[option] is not None else getattr(current, field))
              for option, field in ((o, o.replace("-", "_")) for o in LIMITS)}
    policy = app.set_retention(queue, **merged)  # type: ignore[arg-type]
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
@click.option("--batch", type=Whole(1, 100_000), default=1000, show_default=True,
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
