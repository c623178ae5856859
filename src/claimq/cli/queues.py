"""`claimq queues …`: queue settings (pause, resume, worker limit, activation, lease, timeout).

Every command that changes a queue refuses a queue that does not exist (exit 1, naming the
queues there are) unless given --create: `claimq queues pause typo` must not make a queue
`typo`. The Python API (App.configure_queue, App.pause, …) creates the queue, as documented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from claimq import _validate
from claimq.app import App
from claimq.cli._common import (
    EXIT_USAGE,
    POSITIVE_SECONDS,
    CliError,
    F,
    Seconds,
    Whole,
    _open,
    json_option,
)
from claimq.cli._main import main
from claimq.cli._render import _emit_json, _print, _queues_table


@main.group()
def queues() -> None:
    """Queue settings: pause, resume, worker limit, activation, lease and timeout."""


@queues.command("list")
@json_option
def queues_list(as_json: bool) -> None:
    """Every queue with its settings."""
    found = _open().queues()
    if as_json:
        _emit_json(found)
    else:
        _print(_queues_table(found))


def _known(app: App, name: str, create: bool) -> bool:
    """Whether queue `name` exists; an unknown one is an error (exit 1) unless `create`: a
    mistyped name must not become a new, empty queue that nothing ever reads."""
    names = [q.name for q in app.queues()]
    if name in names or create:
        return name in names
    listed = ", ".join(names) if names else "none yet (a queue appears with its first job)"
    raise CliError(f"no queue {name!r}; queues: {listed}. Give --create to set up a queue "
                   "before its first job")


def _configure(name: str, as_json: bool, done: str, create: bool, **changes: Any) -> None:
    _validate.queue_name(name)
    app = _open()
    existed = _known(app, name, create)
    info = app.configure_queue(name, **changes)
    if as_json:
        _emit_json(info)
        return
    note = "" if existed else " (new queue created)"
    click.echo(f"queue {name} {done}{note}")


def create_option(
    help_text: str = "Create QUEUE if it does not exist yet (without it, an unknown QUEUE is "
    "an error).",
) -> Callable[[F], F]:
    return click.option("--create", is_flag=True, help=help_text)


def _switch(verb: str, help_text: str, done: str, **changes: bool) -> None:
    """`claimq queues VERB QUEUE`: one setting switched on or off."""

    @queues.command(verb, help=help_text)
    @click.argument("queue")
    @create_option()
    @json_option
    def command(queue: str, create: bool, as_json: bool) -> None:
        _configure(queue, as_json, done, create, **changes)


_switch("pause", "Stop claiming jobs of QUEUE (running jobs finish).", "paused", paused=True)
_switch("resume", "Claim jobs of QUEUE again.", "resumed", paused=False)
_switch("activate", "Mark QUEUE active (claimable).", "activated", active=True)
_switch(
    "deactivate", "Mark QUEUE inactive: no worker claims from it until it is activated.",
    "deactivated", active=False,
)


@queues.command("limit")
@click.argument("queue")
@click.argument("max_workers", metavar="N|none")
@create_option()
@json_option
def queues_limit(queue: str, max_workers: str, create: bool, as_json: bool) -> None:
    """At most N jobs of QUEUE run at once across all workers; `none` lifts the limit."""
    limit: int | None
    if max_workers.strip().lower() == "none":
        limit = None
    else:
        try:
            limit = int(max_workers)
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1_000_000:
            raise CliError(
                f"N must be a whole number from 1 to 1000000, or `none`; got {max_workers!r}",
                EXIT_USAGE,
            )
    done = "has no worker limit" if limit is None else f"runs at most {limit} job(s) at once"
    _configure(queue, as_json, done, create, max_workers=limit)


@queues.command("set")
@click.argument("queue")
@click.option("--lease", type=POSITIVE_SECONDS, metavar="DURATION", help="Default lease.")
@click.option(
    "--timeout", type=Seconds(allow_zero=False, allow_none=True), metavar="DURATION|none",
    help="Default job timeout; `none` clears it.",
)
@click.option(
    "--rate-limit", "rate_limit", metavar="RATE|none",
    help="At most RATE claims for all workers together, e.g. 10/s, 100/m, 5/2s; `none` lifts it.",
)
@click.option("--rate-burst", "rate_burst", type=Whole(), metavar="N",
              help="With --rate-limit: bursts of up to N after a quiet spell (default: its count).")
@click.option(
    "--key-rate-limit", "key_rate_limit", metavar="RATE|none",
    help="At most RATE claims per rate key (a job's rate_key), e.g. 10/s; `none` lifts it.",
)
@click.option("--key-rate-burst", "key_rate_burst", type=Whole(), metavar="N",
              help="With --key-rate-limit: each key's bursts of up to N.")
@click.option(
    "--aging", type=Seconds(allow_zero=False, allow_none=True), metavar="DURATION|none",
    help="A waiting job's priority counts one more every DURATION waited; `none` lifts it.",
)
@click.option("--aging-cap", "aging_cap", type=Whole(), default=10, show_default=True, metavar="N",
              help="With --aging: the most a job's priority gains by waiting.")
@create_option()
@json_option
@click.pass_context
def queues_set(
    ctx: click.Context, queue: str, lease: float | None, timeout: float | None,
    rate_limit: str | None, rate_burst: int | None, key_rate_limit: str | None,
    key_rate_burst: int | None, aging: float | None, aging_cap: int, create: bool,
    as_json: bool,
) -> None:
    """Change QUEUE's default lease, job timeout, rate limit, per-key rate limit and/or
    priority aging (at runtime: every worker's next claim obeys them)."""
    changes: dict[str, Any] = {}
    if lease is not None:
        changes["lease"] = lease
    if ctx.get_parameter_source("timeout") == ParameterSource.COMMANDLINE:
        changes["timeout"] = timeout
    if rate_limit is not None:
        changes["rate_limit"] = None if rate_limit.strip().lower() == "none" else rate_limit
    if rate_burst is not None:
        if rate_limit is None or changes["rate_limit"] is None:
            raise CliError("--rate-burst goes with a --rate-limit", EXIT_USAGE)
        changes["rate_burst"] = rate_burst
    if key_rate_limit is not None:
        changes["key_rate_limit"] = (None if key_rate_limit.strip().lower() == "none"
                                     else key_rate_limit)
    if key_rate_burst is not None:
        if key_rate_limit is None or changes["key_rate_limit"] is None:
            raise CliError("--key-rate-burst goes with a --key-rate-limit", EXIT_USAGE)
        changes["key_rate_burst"] = key_rate_burst
    if ctx.get_parameter_source("aging") == ParameterSource.COMMANDLINE:
        changes["aging"] = aging
        changes["aging_cap"] = aging_cap
    if not changes:
        raise CliError("nothing to set: give --lease, --timeout, --rate-limit, --key-rate-limit "
                       "and/or --aging", EXIT_USAGE)
    parts = []
    if "lease" in changes:
        parts.append(f"lease {lease:g}s")
    if "timeout" in changes:
        parts.append("no timeout" if timeout is None else f"timeout {timeout:g}s")
    if "rate_limit" in changes:
        parts.append("no rate limit" if changes["rate_limit"] is None
                     else f"rate limit {changes['rate_limit']}")
    if "key_rate_limit" in changes:
        parts.append("no per-key rate limit" if changes["key_rate_limit"] is None
                     else f"rate limit {changes['key_rate_limit']} per key")
    if "aging" in changes:
        parts.append("no priority aging" if aging is None
                     else f"priority +1 every {aging:g}s waited, at most +{aging_cap}")
    _configure(queue, as_json, "set: " + ", ".join(parts), create, **changes)


@queues.command("breaker")
@click.argument("queue")
@click.argument("task")
@click.option("--failures", type=Whole(1, 1_000_000), metavar="N",
              help="Open after N failed attempts of TASK within --window.")
@click.option("--window", type=POSITIVE_SECONDS, default=60.0, show_default=True,
              metavar="DURATION", help="How far back failures count.")
@click.option("--cooldown", type=POSITIVE_SECONDS, default=30.0, show_default=True,
              metavar="DURATION", help="How long it stays open before one probe job runs.")
@click.option("--off", is_flag=True, help="Remove TASK's breaker in QUEUE.")
@create_option("Set the breaker even if QUEUE does not exist yet.")
@json_option
def queues_breaker(queue: str, task: str, failures: int | None, window: float, cooldown: float,
                   off: bool, create: bool, as_json: bool) -> None:
    """TASK's circuit breaker in QUEUE, shared by every worker: N failures within the window
    open it (no worker claims TASK's jobs from QUEUE), after the cool-down one probe runs, whose
    success closes it and whose failure opens it again. Its state stays when settings change;
    `claimq stats` shows it."""
    if off == (failures is not None):
        raise CliError("give --failures N (set the breaker) or --off (remove it)", EXIT_USAGE)
    _validate.queue_name(queue)
    app = _open()
    _known(app, queue, create or off)
    info = app.configure_breaker(task, failures=failures, window=window, cooldown=cooldown,
                                     queue=queue)
    if as_json:
        _emit_json(info)
    elif info is None:
        click.echo(f"queue {queue}: task {task} has no circuit breaker")
    else:
        click.echo(f"queue {queue}: task {task} opens its breaker after {failures} failure(s) "
                   f"within {window:g}s, for {cooldown:g}s (now {info.state})")
