"""`claimq worker APP`: run a worker (one or several processes) for a claimq.App."""

from __future__ import annotations

import logging
import os
from typing import Any

import click

from claimq import _validate
from claimq._processes import setup_logging
from claimq.app import App
from claimq.cli._common import (
    EXIT_USAGE,
    POSITIVE_SECONDS,
    SECONDS,
    CliError,
    Whole,
    _check_database,
    _state,
    _use_app,
    check_port_free,
)
from claimq.cli._main import main
from claimq.errors import ClaimqError, DatabaseUnavailable
from claimq.worker import run_worker


def _queue_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names: list[str] = []
    for raw in text.split(","):
        name = raw.strip()
        if not name:
            raise CliError(f"--queues {text!r} has an empty queue name", EXIT_USAGE)
        _validate.queue_name(name)
        if name not in names:
            names.append(name)
    return names


LOG_LEVELS = ("debug", "info", "warning", "error")
log = logging.getLogger("claimq.worker")


def _warn_unknown_queues(app: App, queues: list[str] | None) -> None:
    """A warning line for each --queues name that no queue has yet: a typo serves nothing. The
    worker still starts: the first job enqueued to it creates the queue."""
    if not queues:
        return
    known = [q.name for q in app.queues()]
    for name in queues:
        if name not in known:
            log.warning(
                "queue.unknown: --queues names %r, which does not exist yet (queues: %s); the "
                "worker serves it once a job is enqueued to it", name,
                ", ".join(known) or "none yet", extra={"event": "queue.unknown", "queue": name})


@main.command()
@click.argument("app_path", metavar="APP")
@click.option("--queues", "queues_text", metavar="A,B", help="Queues to serve (default: all).")
@click.option(
    "--concurrency", type=Whole(low=1), default=10, show_default=True,
    help="Jobs run at once per process.",
)
@click.option(
    "--prefetch", type=Whole(0, 10_000), default=None, metavar="N",
    help="Jobs claimed ahead of free slots, at most (default: 480, or the concurrency if "
    "larger, on PostgreSQL and MariaDB; none on SQLite; 0: none); only while handlers end "
    "faster than a claim's round trip.",
)
@click.option(
    "--processes", type=Whole(low=1), default=1, show_default=True,
    help="Worker processes.",
)
@click.option(
    "--lease", type=POSITIVE_SECONDS, default=None, metavar="DURATION",
    help="Lease length (default: each queue's).",
)
@click.option(
    "--poll-interval", type=POSITIVE_SECONDS, default=1.0, show_default=True, metavar="DURATION",
    help="Longest wait between claims when the queues are empty.",
)
@click.option(
    "--grace", type=SECONDS, default=30.0, show_default=True, metavar="DURATION",
    help="On shutdown, how long running jobs get before they are handed back.",
)
@click.option(
    "--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), default="info",
    show_default=True, help="Log level of the worker's lines on stderr (start, stop, failures).",
)
@click.option(
    "--log-format", type=click.Choice(("text", "json")), default="text", show_default=True,
    help="json: one JSON object per line, with event names and job fields.",
)
@click.option(
    "--metrics-port", type=Whole(0, 65535), default=None, metavar="PORT",
    help="Serve Prometheus /metrics on PORT (process i of --processes on PORT+i); needs "
    "claimq[metrics].",
)
@click.option(
    "--metrics-host", default="127.0.0.1", show_default=True, metavar="ADDR",
    help="Address the /metrics server binds to (0.0.0.0: every interface).",
)
@click.option(
    "--metrics-token", envvar="CLAIMQ_METRICS_TOKEN", default=None, metavar="TOKEN",
    help="Bearer token /metrics asks for (16+ characters); better given as "
    "CLAIMQ_METRICS_TOKEN, which other users cannot read from the process list.",
)
@click.option(
    "--metrics-no-token", is_flag=True,
    help="Serve /metrics without a token, to anyone who can reach --metrics-host.",
)
@click.pass_context
def worker(ctx: click.Context, /, app_path: str, **options: Any) -> None:
    """Run a worker for APP, a claimq.App given as module:attribute (e.g. tasks:app, or
    mypackage.jobs:registry.app for an attribute of an attribute).

    The App's own database is used unless --database is given on the command line. A second
    SIGTERM or SIGINT stops at once (exit 130), leaving running jobs to their leases.
    """
    app = _use_app(app_path)
    if _state().explicit:
        # worker processes that import APP again build App() from the environment
        os.environ["CLAIMQ_DATABASE_URL"] = app.url
    ctx.exit(start_worker(app, app_path, **options))


def start_worker(
    app: App,
    app_path: str,
    *,
    queues_text: str | None,
    concurrency: int,
    prefetch: int | None,
    processes: int,
    lease: float | None,
    poll_interval: float,
    grace: float,
    log_level: str,
    log_format: str,
    metrics_port: int | None,
    metrics_host: str,
    metrics_token: str | None,
    metrics_no_token: bool,
) -> int:
    """What `claimq worker` does with its options once it has its App (`manage.py
    claimq_worker` too, with the same options: see WORKER_OPTIONS): the queue list checked, the
    logging set up, the database checked (or waited for), unknown queues named, the metrics
    ports checked, then the worker run; its exit code. Bad input raises CliError."""
    queues = _queue_list(queues_text)
    setup_logging(log_level.upper(), log_format)
    try:
        try:
            _check_database(app, migrated=True)
        except DatabaseUnavailable as exc:
            # Started before its database (a fresh deployment): the worker waits for it.
            log.warning("database.unreachable: %s; the worker waits for it (with back-off)",
                        exc, extra={"event": "database.unreachable"})
        else:
            _warn_unknown_queues(app, queues)
    finally:
        app.close()  # the worker opens its own connections (possibly in other processes)
    if metrics_port is not None:
        try:
            import claimq.metrics  # noqa: F401 - says which extra is missing, before starting
        except ClaimqError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        for i in range(processes):  # process i serves on metrics_port + i
            check_port_free(metrics_host, metrics_port + i if metrics_port else 0, "/metrics")
    code = run_worker(
        app, queues=queues, concurrency=concurrency, prefetch=prefetch, processes=processes,
        lease=lease,
        poll_interval=poll_interval, grace=grace, app_path=app_path, metrics_port=metrics_port,
        metrics_host=metrics_host, metrics_token=metrics_token,
        metrics_no_token=metrics_no_token, log_format=log_format,
    )
    return int(code or 0)


# The worker's options, one definition: `manage.py claimq_worker` builds its own from these.
WORKER_OPTIONS: list[click.Option] = [
    p for p in worker.params if isinstance(p, click.Option) and p.expose_value
]
