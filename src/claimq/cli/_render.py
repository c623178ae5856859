"""What every command shares for output: JSON (--json), rich tables and views (imported only
for human output), time and age formatting, progress displays on a terminal."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

import click

from claimq.backends.base import Edge, Progress, QueueInfo, WorkflowInfo
from claimq.cli._common import _state
from claimq.job import Job, Status
from claimq.stats import QueueStats
from claimq.workflow import workflow_state

if TYPE_CHECKING:  # rich is imported only for human output: --json and errors skip it
    from rich.console import Console, RenderableType
    from rich.table import Table
    from rich.text import Text


def _console() -> Console:
    from rich.console import Console

    state = _state()
    if state.console is None:
        console = Console(highlight=False, soft_wrap=False)
        if not console.is_terminal and "COLUMNS" not in os.environ:
            console = Console(highlight=False, soft_wrap=False, width=200)
        state.console = console
    return state.console


def new_table(title: str | None = None) -> Table:
    """Every table the CLI prints, in its one style: rich's default box with a bold header, the
    title (if any) on the left above it; captions say why a table is empty."""
    from rich.table import Table

    return Table(title=title, title_justify="left", header_style="bold")


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


def _rates(q: QueueInfo) -> object:
    """The queue's rate limit, and its per-key one beside it."""
    if q.key_rate_limit is None:
        return q.rate_limit
    return f"{q.rate_limit or '-'}; {q.key_rate_limit} per key"


def _queues_table(queues: Sequence[QueueInfo]) -> Table:
    table = new_table()
    # state: the words of `claimq stats` and the dashboard (active, paused, inactive, throttled)
    for header in ("queue", "state", "max workers", "lease", "timeout"):
        table.add_column(header)
    table.add_column("live jobs", justify="right")
    table.add_column("rate limit")
    for q in queues:
        table.add_row(
            _cell(q.name), _queue_state(q),
            _cell(q.max_workers if q.max_workers is not None else "unlimited"),
            _cell(_num(q.lease_seconds)), _cell(_num(q.timeout_seconds)),
            _cell(q.pending + q.scheduled + q.fetched + q.processing),
            _cell(_rates(q)),
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
    from rich.text import Text

    table = new_table()
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
        errors = new_table(f"errors ({len(job.errors)})")
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


_STATE_STYLES = {"running": "blue", "blocked": "yellow", "succeeded": "green", "failed": "red"}
_STATUS_ORDER = [s.value for s in Status]


def _counts_text(counts: dict[str, int]) -> str:
    """A workflow's jobs by status, in a job's order of life: `held 2, pending 1, dead 1`."""
    order = sorted(counts, key=lambda s: (_STATUS_ORDER.index(s) if s in _STATUS_ORDER
                                          else len(_STATUS_ORDER), s))
    return ", ".join(f"{status} {counts[status]}" for status in order if counts[status])


def _state_text(state: str) -> Text:
    from rich.text import Text

    return Text(state, style=_STATE_STYLES.get(state, ""))


def _workflows_table(workflows: Sequence[WorkflowInfo], limit: int) -> Table:

    table = new_table()
    table.add_column("id", justify="right")
    for header in ("name", "key", "state", "jobs", "created (UTC)"):
        table.add_column(header)
    for wf in workflows:
        table.add_row(
            _cell(wf.id), _cell(wf.name), _cell(wf.key),
            _state_text(workflow_state(wf.counts)), _cell(_counts_text(wf.counts)),
            _cell(_when(wf.created_at)),
        )
    if not workflows:
        table.caption = "no workflows"
    elif len(workflows) == limit:
        table.caption = f"more may follow: --before {workflows[-1].id}"
    return table


def _waits_for(parents: Sequence[Edge]) -> str:
    """The ids a job waits for, each with its edge's failure policy unless the default."""
    return ", ".join(str(e.parent) + ("" if e.on_failure == "cancel" else f" ({e.on_failure})")
                     for e in parents) or "-"


def _workflow_view(info: WorkflowInfo, state: str, jobs: Sequence[Job],
                   edges: Sequence[Edge]) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="bold")
    fields.add_column()
    rows: list[tuple[str, Any]] = [
        ("name", info.name),
        ("key", info.key),
        ("state", state),
        ("jobs", _counts_text(info.counts) or None),
        ("on failure", info.on_failure),
        ("created (UTC)", _when(info.created_at)),
        ("finished (UTC)", _when(info.finished_at) if info.finished_at else None),
    ]
    for name, value in rows:
        if value is not None:
            fields.add_row(name, _state_text(state) if name == "state" else _cell(value))
    parents: dict[int, list[Edge]] = {}
    for edge in edges:
        parents.setdefault(edge.child, []).append(edge)
    table = new_table(f"jobs ({len(jobs)})")
    table.add_column("id", justify="right")
    for header in ("task", "queue", "status", "attempts", "waits for", "finished (UTC)"):
        table.add_column(header)
    for job in jobs:
        status = Text(job.status.value, style={Status.DEAD: "red", Status.SUCCEEDED: "green",
                                               Status.HELD: "yellow"}.get(job.status, ""))
        if job.reason:
            status.append(f" ({job.reason})")
        table.add_row(
            _cell(job.id), _cell(job.task), _cell(job.queue), status,
            _cell(f"{job.attempts}/{job.max_attempts}"), _cell(_waits_for(parents.get(job.id, []))),
            _cell(_when(job.finished_at) if job.finished_at else None),
        )
    return Group(Text(f"workflow {info.id}", style="bold"), fields, table)


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
