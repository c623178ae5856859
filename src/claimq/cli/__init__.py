"""The `claimq` command line: migrate, worker, enqueue, stats, queues, jobs and dead letters.

Parsing is click's, tables and progress are rich's; every operation goes through `claimq.App`.
Other modules add commands to the `main` group: see `_Main` and OPTIONAL_COMMANDS.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlparse

import click
from click.core import ParameterSource

from claimq import __version__, _validate
from claimq._processes import import_app, run_worker, setup_logging
from claimq.app import DEFAULT_URL, App
from claimq.backends import redact as _redact
from claimq.backends.base import Progress, QueueInfo
from claimq.errors import ClaimqError, InvalidInput
from claimq.job import DeadReason, Job, Status
from claimq.stats import QueueStats

if TYPE_CHECKING:  # rich is imported only for human output: --json and errors skip it
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_FAILED = 1  # not found, nothing changed, database missing / unreachable / not migrated
EXIT_USAGE = 2  # bad input: usage, invalid values, bad JSON; nothing was written

ENQUEUE_CHUNK = 1000
JOB_ID = click.IntRange(1, 2**63 - 1)
PRIORITY = click.IntRange(*_validate.PRIORITY_RANGE)
LIVE_STATUSES = (Status.PENDING, Status.FETCHED, Status.PROCESSING)

EPILOG = """\b
Exit codes:
  0  success
  1  failure: job not found or not in the needed state, nothing to change,
     database unreachable or not migrated (run `claimq migrate`), declined prompt
  2  bad input: unknown command or option, invalid value, bad JSON;
     nothing was written
130  interrupted: Ctrl-C, or a worker's second SIGTERM/SIGINT (it stopped
     at once and left its running jobs to their leases)
\b
The database comes from --database, else $CLAIMQ_DATABASE_URL, else sqlite:///claimq.db.
Every listing takes --json (datetimes as ISO 8601 strings)."""


class CliError(Exception):
    """A message for the operator and the exit code that goes with it."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


# -- shared state ------------------------------------------------------------------------------


@dataclass
class _State:
    url: str
    explicit: bool  # --database was given on the command line
    app: App | None = None
    checked: bool = False  # the database was found reachable (and migrated, if asked)
    console: Console | None = None


def _state() -> _State:
    return click.get_current_context().find_object(_State) or _State(DEFAULT_URL, False)


def _console() -> Console:
    from rich.console import Console

    state = _state()
    if state.console is None:
        console = Console(highlight=False, soft_wrap=False)
        if not console.is_terminal and "COLUMNS" not in os.environ:
            console = Console(highlight=False, soft_wrap=False, width=200)
        state.console = console
    return state.console


def _app() -> App:
    """The App of --database, not yet connected."""
    state = _state()
    if state.app is None:
        state.app = App(state.url)
        click.get_current_context().find_root().call_on_close(state.app.close)
    return state.app


def _open(*, migrated: bool = True) -> App:
    """The App of --database, checked: reachable and (unless `migrated` is false) migrated."""
    app = _app()
    state = _state()
    if not state.checked:
        _check_database(app, migrated=migrated)
        state.checked = True
    return app


def _check_database(app: App, *, migrated: bool) -> None:
    """Fail fast and clearly: a SQLite file that does not exist is not created (except by
    `migrate`), and a schema that is missing or behind names `claimq migrate` (the backend
    itself fails fast, with a claimq error, on a server it cannot reach)."""
    url = app.url
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        path = urlparse(url).path[1:]
        folder = os.path.dirname(path)
        if path and path != ":memory:" and folder and not os.path.isdir(folder):
            raise CliError(f"the directory of database {path} does not exist: {folder}")
        if migrated and path and path != ":memory:" and not os.path.exists(path):
            raise CliError(f"database {path} does not exist: run `claimq migrate` first")
    if migrated:
        app.backend.check_schema()


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split("\n")[0].split())
    return text or type(exc).__name__


# -- errors ------------------------------------------------------------------------------------


def _classify(exc: BaseException) -> tuple[str, int] | None:
    """The operator's message and exit code for an expected error; None for a bug."""
    if isinstance(exc, CliError):
        return str(exc), exc.code
    if isinstance(exc, InvalidInput):
        return str(exc) or "invalid input", EXIT_USAGE
    if isinstance(exc, ClaimqError):
        # JobNotFound, SchemaMissing/MigrationError, DatabaseMissing, DatabaseUnavailable,
        # DatabaseError, LeaseLost: the backends name the cause in the message.
        return str(exc) or type(exc).__name__, EXIT_FAILED
    return None


def _say_error(message: str) -> None:
    click.echo(f"error: {' '.join(message.split())}", err=True)


OPTIONAL_COMMANDS = ("demo", "bench")
_NO_ARGS_IS_HELP: type[click.UsageError] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_Never", (click.UsageError,), {})
)


class _Main(click.Group):
    """The root group: one-line `error: …` messages and the exit codes of the epilog.

    Commands that live in other modules (`claimq demo`, `claimq bench`) are loaded lazily,
    so that no other command pays for their imports: the first time a command name is not
    found, or the commands are listed (--help, completion), each module `claimq.<name>` of
    OPTIONAL_COMMANDS is imported; one that exposes a click command as `command` is added
    under `<name>`, and one may instead decorate its function with `@main.command()`.
    A module that fails to import (ImportError) is skipped silently.
    """

    _optional_loaded = False

    def _load_optional_commands(self) -> None:
        if self._optional_loaded:
            return
        self._optional_loaded = True
        for name in OPTIONAL_COMMANDS:
            try:
                module = importlib.import_module(f"claimq.{name}")
            except ImportError:
                continue
            command = getattr(module, "command", None)
            if isinstance(command, click.Command) and name not in self.commands:
                self.add_command(command, name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and not self._optional_loaded:
            self._load_optional_commands()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_optional_commands()
        return super().list_commands(ctx)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as exc:  # `claimq` or `claimq jobs` alone: the help text
            exc.show()
            sys.exit(EXIT_USAGE)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see `{exc.ctx.command_path} --help`)"
            _say_error(exc.format_message() + hint)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            _say_error(exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            interrupted = isinstance(exc.__context__, KeyboardInterrupt)
            _say_error("interrupted" if interrupted else "aborted")
            sys.exit(130 if interrupted else EXIT_FAILED)
        except Exception as exc:
            verdict = _classify(exc)
            if verdict is None:
                raise
            _say_error(verdict[0])
            sys.exit(verdict[1])
        sys.exit(rv if isinstance(rv, int) else EXIT_OK)


# -- parameter types ---------------------------------------------------------------------------


class Seconds(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """A finite number of seconds up to _validate.MAX_SECONDS; `none` too when `allow_none`."""

    name = "seconds"

    def __init__(self, *, allow_zero: bool = True, allow_none: bool = False) -> None:
        self.allow_zero = allow_zero
        self.allow_none = allow_none

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, float):
            return value
        text = str(value).strip()
        if self.allow_none and text.lower() == "none":
            return None
        try:
            number = float(text)
        except ValueError:
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(number):
            self.fail("must be a finite number of seconds", param, ctx)
        if number < 0 or (number == 0 and not self.allow_zero):
            self.fail(f"must be {'>= 0' if self.allow_zero else '> 0'}, got {text}", param, ctx)
        if number > _validate.MAX_SECONDS:
            self.fail(
                f"must be at most {_validate.MAX_SECONDS:.0f} seconds (100 years), got {text}",
                param, ctx,
            )
        return number


SECONDS = Seconds()
POSITIVE_SECONDS = Seconds(allow_zero=False)


def json_option(fn: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Machine-readable JSON output."
    )(fn)


def _parse_payload(text: str | None) -> dict[str, Any] | None:
    """--payload: a JSON object, `@file` to read one from a file, `-` to read stdin."""
    if text is None:
        return None
    source = "--payload"
    if text == "-":
        text, source = sys.stdin.read(), "--payload from stdin"
    elif text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as fh:
                text, source = fh.read(), f"--payload file {text[1:]}"
        except OSError as exc:
            raise CliError(f"cannot read --payload file: {exc}", EXIT_USAGE) from None
    try:
        # Numbers no 64-bit float or integer holds stay marked, for the payload check to refuse.
        value = _validate.parse_json(text)
    except (ValueError, RecursionError) as exc:
        raise CliError(f"{source} is not valid JSON: {exc}", EXIT_USAGE) from None
    if not isinstance(value, dict):
        raise CliError(
            f"{source} must be a JSON object such as '{{\"n\": 1}}', got {type(value).__name__}",
            EXIT_USAGE,
        )
    return value


# -- output ------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    return value


def _emit_json(value: Any, *, compact: bool = False) -> None:
    indent = None if compact else 2
    click.echo(json.dumps(_jsonable(value), indent=indent, ensure_ascii=False, default=str))


def _print(*renderables: RenderableType) -> None:
    _console().print(*renderables)


def _when(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0.0, float(seconds))
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def _num(value: float | None, unit: str = "s") -> str:
    return "-" if value is None else f"{value:g}{unit}"


def _cell(value: Any) -> Text:
    from rich.text import Text

    return Text("-" if value is None or value == "" else str(value))


def _queue_state(q: QueueInfo | QueueStats) -> Text:
    from rich.text import Text

    if not q.active:
        return Text("inactive" + (", paused" if q.paused else ""), style="red")
    if q.paused:
        return Text("paused", style="yellow")
    if q.throttled_until is not None and q.throttled_until > datetime.now(UTC):
        return Text(f"throttled until {_when(q.throttled_until)}", style="yellow")
    return Text("active", style="green")


def _queues_table(queues: Sequence[QueueInfo]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for header in ("queue", "paused", "active", "max workers", "lease", "timeout"):
        table.add_column(header)
    table.add_column("live jobs", justify="right")
    table.add_column("rate limit")
    for q in queues:
        table.add_row(
            _cell(q.name),
            Text("yes", style="yellow") if q.paused else _cell("no"),
            _cell("yes") if q.active else Text("no", style="red"),
            _cell(q.max_workers if q.max_workers is not None else "unlimited"),
            _cell(_num(q.lease_seconds)), _cell(_num(q.timeout_seconds)),
            _cell(q.pending + q.scheduled + q.fetched + q.processing),
            _cell(q.rate_limit),
        )
    if not queues:
        table.caption = "no queues yet: a queue appears with its first job"
    return table


def _last_error(job: Job) -> str:
    if not job.errors:
        return "-"
    last = job.errors[-1]
    text = f"{last.get('error', '')}: {last.get('message', '')}".strip(": ")
    return text if len(text) <= 80 else text[:77] + "..."


def _jobs_table(jobs: Sequence[Job], table_name: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table()
    table.add_column("id", justify="right")
    table.add_column("queue")
    table.add_column("task")
    if table_name == "live":
        table.add_column("status")
        table.add_column("priority", justify="right")
        table.add_column("attempts", justify="right")
        table.add_column("run at (UTC)")
        table.add_column("worker")
    elif table_name == "archive":
        table.add_column("attempts", justify="right")
        table.add_column("finished (UTC)")
        table.add_column("took", justify="right")
    else:
        table.add_column("reason")
        table.add_column("attempts", justify="right")
        table.add_column("died (UTC)")
        table.add_column("last error")
    for job in jobs:
        row: list[RenderableType] = [_cell(job.id), _cell(job.queue), _cell(job.task)]
        attempts = _cell(f"{job.attempts}/{job.max_attempts}")
        if table_name == "live":
            row += [
                _cell(job.status.value), _cell(job.priority), attempts, _cell(_when(job.run_at)),
                _cell(job.worker_id),
            ]
        elif table_name == "archive":
            took = None
            if job.finished_at and job.started_at:
                took = (job.finished_at - job.started_at).total_seconds()
            row += [attempts, _cell(_when(job.finished_at)), _cell(_age(took))]
        else:
            row += [
                Text(job.reason or "-", style="red"), attempts,
                _cell(_when(job.finished_at)), _cell(_last_error(job)),
            ]
        table.add_row(*row)
    if not jobs:
        table.caption = "no jobs match"
    return table


def _progress_text(p: Progress) -> str:
    note = f" {p.note}" if p.note else ""
    return f"{p.fraction:.0%}{note} (attempt {p.attempt}, at {_when(p.updated_at)} UTC)"


def _job_view(job: Job, progress: Progress | None = None) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    where = {Status.SUCCEEDED: "archive", Status.DEAD: "dead letters"}.get(job.status, "live")
    title = f"job {job.id} ({where}: {job.status.value}"
    title += f", {job.reason})" if job.reason else ")"
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column()
    took = None
    if job.finished_at and job.started_at:
        took = (job.finished_at - job.started_at).total_seconds()
    rows: list[tuple[str, Any]] = [
        ("queue", job.queue),
        ("task", job.task),
        ("status", job.status.value),
        ("reason", job.reason),
        ("priority", job.priority),
        ("attempts", f"{job.attempts}/{job.max_attempts}"),
        ("tags", ", ".join(job.tags) or None),
        ("idempotency key", job.idempotency_key),
        ("effective key", job.effective_key),
        ("worker", job.worker_id),
        ("lease until", _when(job.lease_until) if job.lease_until else None),
        ("heartbeat at", _when(job.heartbeat_at) if job.heartbeat_at else None),
        ("cancel requested", "yes" if job.cancel_requested else None),
        ("timeout", _num(job.timeout) if job.timeout is not None else None),
        ("retry policy", json.dumps(job.retry) if job.retry else None),
        ("created (UTC)", _when(job.created_at)),
        ("run at (UTC)", _when(job.run_at)),
        ("started (UTC)", _when(job.started_at) if job.started_at else None),
        ("updated (UTC)", _when(job.updated_at) if job.updated_at else None),
        ("finished (UTC)", _when(job.finished_at) if job.finished_at else None),
        ("took", _age(took) if took is not None else None),
        ("progress", None if progress is None else _progress_text(progress)),
    ]
    for name, value in rows:
        if value is not None:
            fields.add_row(name, _cell(value))
    parts: list[RenderableType] = [
        Text(title, style="bold"),
        fields,
        Text("payload", style="bold"),
        Text(json.dumps(job.payload, indent=2, ensure_ascii=False)),
    ]
    if job.result is not None:
        parts += [
            Text("result", style="bold"),
            Text(json.dumps(job.result, indent=2, ensure_ascii=False)),
        ]
    if job.errors:
        errors = Table(title=f"errors ({len(job.errors)})", title_justify="left")
        for header in ("attempt", "at", "worker", "error", "message"):
            errors.add_column(header)
        for entry in job.errors:
            errors.add_row(
                _cell(entry.get("attempt")), _cell(entry.get("at")), _cell(entry.get("worker")),
                _cell(entry.get("error")), _cell(entry.get("message")),
            )
        parts.append(errors)
        trace = job.errors[-1].get("traceback")
        if trace:
            parts += [Text("last traceback", style="bold"), Text(str(trace).rstrip())]
    else:
        parts.append(Text("no errors recorded", style="dim"))
    return Group(*parts)


@contextmanager
def _spinner(description: str) -> Iterator[None]:
    """An indeterminate progress display for one long statement (only on a terminal)."""
    if not sys.stdout.isatty():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = _console()
    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
        console=console, transient=True, disable=not console.is_terminal,
    )
    with progress:
        progress.add_task(description, total=None)
        yield


# -- root --------------------------------------------------------------------------------------


@click.group(
    cls=_Main,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--database",
    "database",
    metavar="URL",
    envvar="CLAIMQ_DATABASE_URL",
    default=DEFAULT_URL,
    show_default=True,
    help="sqlite:///path.db, postgresql://user@host/db?schema=claimq or "
    "mysql://user@host/db (env: CLAIMQ_DATABASE_URL).",
)
@click.version_option(__version__, "--version", prog_name="claimq")
@click.pass_context
def main(ctx: click.Context, database: str) -> None:
    """claimq: a job queue whose coordination boundary is a SQL database."""
    source = ctx.get_parameter_source("database")
    ctx.obj = _State(url=database, explicit=source == ParameterSource.COMMANDLINE)


# -- migrate -----------------------------------------------------------------------------------


@main.command()
@json_option
def migrate(as_json: bool) -> None:
    """Create or upgrade claimq's tables (safe to run from several processes at once)."""
    app = _open(migrated=False)
    with _spinner("migrating"):
        applied = app.migrate()
    version = app.backend.schema_version()
    if as_json:
        _emit_json({"applied": applied, "version": version, "database": _redact(app.url)})
    elif applied:
        listed = ", ".join(str(v) for v in applied)
        click.echo(f"applied migration(s) {listed}: schema is at version {version}")
    else:
        click.echo(f"up to date: schema is at version {version}")


# -- worker ------------------------------------------------------------------------------------


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


def _use_app(path: str) -> App:
    """The App named by `module:attribute` (see claimq._processes.import_app), on its own
    database unless --database was given on the command line; later _open() calls check it."""
    app = import_app(path)
    state = _state()
    if state.explicit and app.url != state.url:
        app.close()
        app.url = state.url
    state.url = app.url
    state.app = app
    state.checked = False
    click.get_current_context().find_root().call_on_close(app.close)
    return app


LOG_LEVELS = ("debug", "info", "warning", "error")


@main.command()
@click.argument("app_path", metavar="APP")
@click.option("--queues", "queues_text", metavar="A,B", help="Queues to serve (default: all).")
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=10, show_default=True,
    help="Jobs run at once per process.",
)
@click.option(
    "--processes", type=click.IntRange(min=1), default=1, show_default=True,
    help="Worker processes.",
)
@click.option(
    "--lease", type=POSITIVE_SECONDS, default=None, metavar="SECONDS",
    help="Lease length (default: each queue's).",
)
@click.option(
    "--poll-interval", type=POSITIVE_SECONDS, default=1.0, show_default=True, metavar="SECONDS",
    help="Longest wait between claims when the queues are empty.",
)
@click.option(
    "--grace", type=SECONDS, default=30.0, show_default=True, metavar="SECONDS",
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
    "--metrics-port", type=click.IntRange(0, 65535), default=None, metavar="PORT",
    help="Serve Prometheus /metrics on PORT (process i of --processes on PORT+i); needs "
    "claimq[metrics].",
)
@click.option(
    "--metrics-host", default="0.0.0.0", show_default=True, metavar="ADDR",
    help="Address the /metrics server binds to.",
)
@click.pass_context
def worker(
    ctx: click.Context,
    app_path: str,
    queues_text: str | None,
    concurrency: int,
    processes: int,
    lease: float | None,
    poll_interval: float,
    grace: float,
    log_level: str,
    log_format: str,
    metrics_port: int | None,
    metrics_host: str,
) -> None:
    """Run a worker for APP, a claimq.App given as module:attribute (e.g. tasks:app, or
    mypackage.jobs:registry.app for an attribute of an attribute).

    The App's own database is used unless --database is given on the command line. A second
    SIGTERM or SIGINT stops at once (exit 130), leaving running jobs to their leases.
    """
    queues = _queue_list(queues_text)
    app = _use_app(app_path)
    if _state().explicit:
        # worker processes that import APP again build App() from the environment
        os.environ["CLAIMQ_DATABASE_URL"] = app.url
    try:
        _check_database(app, migrated=True)
    finally:
        app.close()  # the worker opens its own connections (possibly in other processes)
    if metrics_port is not None:
        try:
            import claimq.metrics  # noqa: F401 - says which extra is missing, before starting
        except ClaimqError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    setup_logging(log_level.upper(), log_format)
    code = run_worker(
        app, queues=queues, concurrency=concurrency, processes=processes, lease=lease,
        poll_interval=poll_interval, grace=grace, app_path=app_path, metrics_port=metrics_port,
        metrics_host=metrics_host, log_format=log_format,
    )
    ctx.exit(int(code or 0))


# -- enqueue -----------------------------------------------------------------------------------


@main.command()
@click.argument("task")
@click.option(
    "--app", "app_path", metavar="APP",
    help="The claimq.App (module:attribute) whose task TASK must be: its defaults apply.",
)
@click.option("--payload", metavar="JSON", help="A JSON object; @FILE reads a file, - stdin.")
@click.option("--queue", metavar="Q", help="Queue (default: the task's, else default).")
@click.option("--priority", type=PRIORITY, help="Higher runs first (default: the task's, else 0).")
@click.option("--delay", type=SECONDS, metavar="SECONDS", help="Run no earlier than this.")
@click.option("--key", metavar="KEY", help="Idempotency key.")
@click.option(
    "--max-attempts", type=click.IntRange(*_validate.MAX_ATTEMPTS_RANGE), metavar="N",
    help="Attempts before dead letters (default: the task's, else 20).",
)
@click.option("--tag", "tags", multiple=True, metavar="T", help="A tag (repeatable).")
@click.option(
    "--count", type=click.IntRange(1, 10_000_000), default=1, show_default=True,
    help=f"Enqueue this many identical jobs (in transactions of {ENQUEUE_CHUNK}).",
)
@json_option
def enqueue(
    task: str,
    app_path: str | None,
    payload: str | None,
    queue: str | None,
    priority: int | None,
    delay: float | None,
    key: str | None,
    max_attempts: int | None,
    tags: tuple[str, ...],
    count: int,
    as_json: bool,
) -> None:
    """Queue a job of TASK (a task name); prints its id.

    With --app, TASK must be one of that app's tasks (else exit 2, nothing written), and the
    task's defaults (queue, priority, max attempts, timeout; its retry policy is the worker's)
    apply unless given here; the app's database is used unless --database is given. Without
    --app nothing checks TASK: the job is stored under that name on queue `default` with 20
    attempts, and a worker that has no such task dead-letters it (unknown_task).
    """
    app = _app() if app_path is None else _use_app(app_path)
    if app_path is not None and task not in app.tasks:
        known = ", ".join(sorted(app.tasks)[:20]) or "none"
        raise CliError(f"{app_path} has no task {task!r} (its tasks: {known})", EXIT_USAGE)
    spec: dict[str, Any] = {"task": task, "payload": _parse_payload(payload), "tags": tags}
    for name, value in (
        ("queue", queue), ("priority", priority), ("delay", delay), ("idempotency_key", key),
        ("max_attempts", max_attempts),
    ):
        if value is not None:
            spec[name] = value
    if key is not None and count > 1:
        raise CliError("--key names one job: it cannot be combined with --count", EXIT_USAGE)
    job = app._spec(spec)  # validate before touching the database: bad input writes nothing
    _open()
    ids = [app.enqueue(**spec)] if count == 1 else _enqueue_chunks(app, spec, count)
    if as_json:
        _emit_json({"id": ids[0], "ids": ids} if count == 1 else {"ids": ids, "count": len(ids)})
    elif count == 1:
        click.echo(ids[0])
    else:
        click.echo(
            f"enqueued {len(ids)} jobs of {task} on queue {job.queue} "
            f"(ids {min(ids)}..{max(ids)})"
        )


def _enqueue_chunks(app: App, spec: dict[str, Any], count: int) -> list[int]:
    """enqueue_many in transactions of ENQUEUE_CHUNK jobs, with a progress bar on a terminal.
    Input was validated up front; if the database fails midway, says how many were queued."""
    ids: list[int] = []
    with _progress_bar("enqueueing", count) as advance:
        try:
            while len(ids) < count:
                size = min(ENQUEUE_CHUNK, count - len(ids))
                ids += app.enqueue_many([spec] * size)
                advance(len(ids))
        except Exception as exc:
            verdict = _classify(exc)
            if verdict is None or not ids:
                raise
            raise CliError(
                f"{verdict[0]} ({len(ids)} of {count} jobs were enqueued and remain queued)",
                verdict[1],
            ) from exc
    return ids


@contextmanager
def _progress_bar(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """A rich progress bar on a terminal; elsewhere a no-op. Yields `advance(completed)`."""
    if not sys.stdout.isatty():
        yield lambda completed: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = _console()
    progress = Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
        TimeRemainingColumn(), console=console, transient=True, disable=not console.is_terminal,
    )
    with progress:
        bar = progress.add_task(description, total=total)
        yield lambda completed: progress.update(bar, completed=completed)


# -- queues ------------------------------------------------------------------------------------


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


def _configure(name: str, as_json: bool, done: str, **changes: Any) -> None:
    _validate.queue_name(name)
    app = _open()
    existed = any(q.name == name for q in app.queues())
    info = app.configure_queue(name, **changes)
    if as_json:
        _emit_json(info)
        return
    note = "" if existed else " (new queue created)"
    click.echo(f"queue {name} {done}{note}")


@queues.command("pause")
@click.argument("queue")
@json_option
def queues_pause(queue: str, as_json: bool) -> None:
    """Stop claiming jobs of QUEUE (running jobs finish)."""
    _configure(queue, as_json, "paused", paused=True)


@queues.command("resume")
@click.argument("queue")
@json_option
def queues_resume(queue: str, as_json: bool) -> None:
    """Claim jobs of QUEUE again."""
    _configure(queue, as_json, "resumed", paused=False)


@queues.command("activate")
@click.argument("queue")
@json_option
def queues_activate(queue: str, as_json: bool) -> None:
    """Mark QUEUE active (claimable)."""
    _configure(queue, as_json, "activated", active=True)


@queues.command("deactivate")
@click.argument("queue")
@json_option
def queues_deactivate(queue: str, as_json: bool) -> None:
    """Mark QUEUE inactive: no worker claims from it until it is activated."""
    _configure(queue, as_json, "deactivated", active=False)


@queues.command("limit")
@click.argument("queue")
@click.argument("max_workers", metavar="N|none")
@json_option
def queues_limit(queue: str, max_workers: str, as_json: bool) -> None:
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
    _configure(queue, as_json, done, max_workers=limit)


@queues.command("set")
@click.argument("queue")
@click.option("--lease", type=POSITIVE_SECONDS, metavar="SECONDS", help="Default lease.")
@click.option(
    "--timeout", type=Seconds(allow_zero=False, allow_none=True), metavar="SECONDS|none",
    help="Default job timeout; `none` clears it.",
)
@click.option(
    "--rate-limit", "rate_limit", metavar="RATE|none",
    help="At most RATE claims for all workers together, e.g. 10/s, 100/m, 5/2s; `none` lifts it.",
)
@click.option("--rate-burst", "rate_burst", type=int, metavar="N",
              help="With --rate-limit: bursts of up to N after a quiet spell (default: its count).")
@click.option(
    "--aging", type=Seconds(allow_zero=False, allow_none=True), metavar="SECONDS|none",
    help="A waiting job's priority counts one more every SECONDS; `none` lifts it.",
)
@click.option("--aging-cap", "aging_cap", type=int, default=10, show_default=True, metavar="N",
              help="With --aging: the most a job's priority gains by waiting.")
@json_option
@click.pass_context
def queues_set(
    ctx: click.Context, queue: str, lease: float | None, timeout: float | None,
    rate_limit: str | None, rate_burst: int | None, aging: float | None, aging_cap: int,
    as_json: bool,
) -> None:
    """Change QUEUE's default lease, job timeout, rate limit and/or priority aging (at runtime:
    every worker's next claim obeys them)."""
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
    if ctx.get_parameter_source("aging") == ParameterSource.COMMANDLINE:
        changes["aging"] = aging
        changes["aging_cap"] = aging_cap
    if not changes:
        raise CliError("nothing to set: give --lease, --timeout, --rate-limit and/or --aging",
                       EXIT_USAGE)
    parts = []
    if "lease" in changes:
        parts.append(f"lease {lease:g}s")
    if "timeout" in changes:
        parts.append("no timeout" if timeout is None else f"timeout {timeout:g}s")
    if "rate_limit" in changes:
        parts.append("no rate limit" if changes["rate_limit"] is None
                     else f"rate limit {changes['rate_limit']}")
    if "aging" in changes:
        parts.append("no priority aging" if aging is None
                     else f"priority +1 every {aging:g}s waited, at most +{aging_cap}")
    _configure(queue, as_json, "set: " + ", ".join(parts), **changes)


# -- jobs --------------------------------------------------------------------------------------


def _status_filter(table: str, status: str | None) -> str | None:
    """--status for the chosen table: a live status, `succeeded`, or `dead`/a dead reason."""
    if status is None:
        return None
    if table == "live":
        allowed = [s.value for s in LIVE_STATUSES]
        if status in allowed:
            return status
    elif table == "archive":
        allowed = [Status.SUCCEEDED.value]
        if status in allowed:
            return None
    else:
        allowed = [Status.DEAD.value] + [r.value for r in DeadReason]
        if status == Status.DEAD.value:
            return None
        if status in allowed:
            return status
    raise CliError(
        f"--status {status!r} does not apply to --table {table}: use one of {', '.join(allowed)}",
        EXIT_USAGE,
    )


def _list(
    table: Literal["live", "archive", "dead"],
    queue: str | None,
    task: str | None,
    status: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    if queue is not None:
        _validate.queue_name(queue)
    if task is not None:
        _validate.task_name(task)
    app = _open()
    found = app.list_jobs(
        table, queue=queue, task=task, status=status, limit=limit, offset=offset
    )
    if as_json:
        _emit_json(found)
    else:
        _print(_jobs_table(found, table))


def _list_options(fn: F) -> F:
    for option in reversed([
        click.option("--queue", metavar="Q", help="Only this queue."),
        click.option("--task", metavar="TASK", help="Only this task."),
        click.option(
            "--limit", type=click.IntRange(1, 100_000), default=100, show_default=True
        ),
        click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True),
    ]):
        fn = option(fn)
    return fn


@main.group()
def jobs() -> None:
    """Browse and act on jobs: live, archived (succeeded) and dead letters."""


@jobs.command("list")
@click.option(
    "--table", "table", type=click.Choice(["live", "archive", "dead"]), default="live",
    show_default=True, help="live jobs, the archive of succeeded ones, or dead letters.",
)
@_list_options
@click.option(
    "--status", metavar="STATUS",
    help="live: pending|fetched|processing; dead: a dead-letter reason.",
)
@json_option
def jobs_list(
    table: Literal["live", "archive", "dead"],
    queue: str | None,
    task: str | None,
    limit: int,
    offset: int,
    status: str | None,
    as_json: bool,
) -> None:
    """List jobs (live: oldest first; archive and dead: most recent first)."""
    _list(table, queue, task, _status_filter(table, status), limit, offset, as_json)


def _show(job_id: int, as_json: bool, *, dead_only: bool = False) -> None:
    job = _open().get_job(job_id)
    if dead_only and job.status != Status.DEAD:
        raise CliError(
            f"job {job_id} is not a dead letter (it is {job.status.value}): "
            f"see `claimq jobs show {job_id}`"
        )
    progress = _open().get_progress(job_id)
    if as_json:
        _emit_json({**_jsonable(job), "progress": _jsonable(progress)})
    else:
        _print(_job_view(job, progress))


@jobs.command("show")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def jobs_show(job_id: int, as_json: bool) -> None:
    """Everything about job ID, wherever it lives, with its error history."""
    _show(job_id, as_json)


@jobs.command("cancel")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def jobs_cancel(job_id: int, as_json: bool) -> None:
    """Cancel job ID: waiting jobs go to dead letters now, a running job is asked to stop.

    A job that has already finished is left alone (exit 1).
    """
    app = _open()
    outcome = app.cancel(job_id)
    if as_json:
        _emit_json({"id": job_id, "outcome": outcome})
    elif outcome == "cancelled":
        click.echo(f"job {job_id} cancelled (moved to dead letters)")
    elif outcome == "cancel_requested":
        click.echo(f"job {job_id} is running: cancel requested, its worker stops it shortly")
    if outcome == "finished":
        if not as_json:
            status = app.get_job(job_id).status.value
            _say_error(f"job {job_id} has already finished ({status}): nothing changed")
        click.get_current_context().exit(EXIT_FAILED)


def _resurrect(job_id: int, payload: str | None, priority: int | None, as_json: bool) -> None:
    edited = _parse_payload(payload)
    app = _app()
    if edited is not None:
        _validate.payload_json(edited, app.payload_limit)
    _open()
    app.resurrect(job_id, payload=edited, priority=priority)
    if as_json:
        _emit_json(app.get_job(job_id))
    else:
        click.echo(f"job {job_id} is pending again (attempts reset, history kept)")


@jobs.command("retry")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@click.option("--payload", metavar="JSON", help="Replace the payload (JSON object, @FILE, -).")
@click.option("--priority", type=PRIORITY, help="Replace the priority.")
@json_option
def jobs_retry(job_id: int, payload: str | None, priority: int | None, as_json: bool) -> None:
    """Run dead letter ID again, optionally with an edited payload or priority."""
    _resurrect(job_id, payload, priority, as_json)


@jobs.command("priority")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@click.argument("priority", metavar="N", type=PRIORITY)
@json_option
def jobs_priority(job_id: int, priority: int, as_json: bool) -> None:
    """Set the priority of pending job ID to N (higher runs first)."""
    app = _open()
    app.set_priority(job_id, priority)
    if as_json:
        _emit_json(app.get_job(job_id))
    else:
        click.echo(f"job {job_id} now has priority {priority}")


def _purge(
    table: Literal["archive", "dead"],
    older_than: float | None,
    queue: str | None,
    task: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    if queue is not None:
        _validate.queue_name(queue)
    if task is not None:
        _validate.task_name(task)
    what = "the archive" if table == "archive" else "the dead letters"
    scope = ""
    if queue:
        scope += f" of queue {queue}"
    if task:
        scope += f" of task {task}"
    if older_than is not None:
        scope += f" older than {_age(older_than)}"
    if not yes and not sys.stdin.isatty():
        raise CliError(
            f"purging deletes jobs for good: confirm with --yes (purge {what}{scope})",
            EXIT_USAGE,
        )
    app = _open()
    if not yes and not click.confirm(f"Delete every job{scope} in {what}?", default=False):
        _say_error("not confirmed: nothing deleted")
        click.get_current_context().exit(EXIT_FAILED)
    with _spinner(f"purging {what}"):
        count = app.purge(table, older_than=older_than, queue=queue, task=task)
    if as_json:
        _emit_json({"table": table, "purged": count})
    else:
        click.echo(f"purged {count} job(s) from {what}")


def _purge_options(fn: F) -> F:
    for option in reversed([
        click.option(
            "--older-than", type=SECONDS, metavar="SECONDS",
            help="Only jobs that finished at least this long ago.",
        ),
        click.option("--queue", metavar="Q", help="Only this queue."),
        click.option("--task", metavar="TASK", help="Only this task."),
        click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation."),
    ]):
        fn = option(fn)
    return fn


@jobs.command("purge")
@click.option(
    "--table", "table", type=click.Choice(["archive", "dead"]), required=True,
    help="Which finished jobs to delete.",
)
@_purge_options
@json_option
def jobs_purge(
    table: Literal["archive", "dead"],
    older_than: float | None,
    queue: str | None,
    task: str | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete finished jobs from the archive or the dead letters for good."""
    _purge(table, older_than, queue, task, yes, as_json)


# -- dead letters ------------------------------------------------------------------------------


@main.group()
def dead() -> None:
    """Dead letters: jobs that failed for good, were cancelled, or expired."""


@dead.command("list")
@_list_options
@click.option(
    "--reason", type=click.Choice([r.value for r in DeadReason]), help="Only this reason."
)
@json_option
def dead_list(
    queue: str | None,
    task: str | None,
    limit: int,
    offset: int,
    reason: str | None,
    as_json: bool,
) -> None:
    """Dead letters, most recent first."""
    _list("dead", queue, task, reason, limit, offset, as_json)


@dead.command("show")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@json_option
def dead_show(job_id: int, as_json: bool) -> None:
    """Everything about dead letter ID, with its error history."""
    _show(job_id, as_json, dead_only=True)


@dead.command("resurrect")
@click.argument("job_id", metavar="ID", type=JOB_ID)
@click.option("--payload", metavar="JSON", help="Replace the payload (JSON object, @FILE, -).")
@click.option("--priority", type=PRIORITY, help="Replace the priority.")
@json_option
def dead_resurrect(job_id: int, payload: str | None, priority: int | None, as_json: bool) -> None:
    """Move dead letter ID back to pending (attempts reset, history kept)."""
    _resurrect(job_id, payload, priority, as_json)


@dead.command("purge")
@_purge_options
@json_option
def dead_purge(
    older_than: float | None, queue: str | None, task: str | None, yes: bool, as_json: bool
) -> None:
    """Delete dead letters for good."""
    _purge("dead", older_than, queue, task, yes, as_json)


__all__ = ["OPTIONAL_COMMANDS", "CliError", "main"]

# Nouns that live in modules of their own register their commands on `main` when imported (one
# line each, below; keep them last: they import from this module).
from claimq.cli import dashboard as _dashboard  # noqa: E402, F401
from claimq.cli import grant as _grant  # noqa: E402, F401
from claimq.cli import retention as _retention  # noqa: E402,F401
from claimq.cli import schedules as _schedules  # noqa: E402,F401
from claimq.cli import stats, workers  # noqa: E402, F401 - `claimq stats`, `claimq workers`
