"""`claimq demo`: the main job. Example tasks, a few thousand jobs, several worker processes, a
live progress display, and a report that it checks against the database."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import time
from collections import Counter
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from claimq.app import App
from claimq.backends import fresh_url
from claimq.cli._common import Whole
from claimq.errors import Permanent
from claimq.retry import RetryPolicy
from claimq.worker import JobContext, run_worker

DEMO_URL = "sqlite:///claimq-demo.db"
FAST_RETRY = RetryPolicy(base=0.05, factor=2.0, cap=0.5)

app = App(os.environ.get("CLAIMQ_DEMO_DATABASE_URL", DEMO_URL))


# -- the example tasks ---------------------------------------------------------------------------


@app.task(name="demo.resize_image")
def resize_image(n: int) -> dict[str, int]:
    time.sleep(random.uniform(0.001, 0.008))  # a little CPU-ish work, in the thread pool
    return {"image": n, "width": 640}


@app.task(name="demo.send_email", retry=FAST_RETRY, max_attempts=5)
async def send_email(ctx: JobContext, n: int) -> None:
    await asyncio.sleep(random.uniform(0.002, 0.02))
    if n % 5 == 0 and ctx.attempt == 1:
        raise ConnectionError(f"mail server busy for message {n}")  # transient: retried


@app.task(name="demo.generate_report", queue="reports", timeout=30)
async def generate_report(n: int) -> str:
    await asyncio.sleep(random.uniform(0.3, 0.6))
    return f"report-{n}.pdf"


@app.task(name="demo.charge_card", max_attempts=3)
def charge_card(ctx: JobContext, n: int, cents: int) -> None:
    if n % 50 == 0:
        raise Permanent(f"card declined for order {n}")  # retrying cannot help
    # The business write and the job's completion commit in one transaction, keyed by the job's
    # idempotency key: a rerun after a crash cannot charge twice.
    with app.transaction() as conn:
        _execute(conn, "INSERT INTO {t} (charge_key, order_no, cents) VALUES ({p}, {p}, {p})",
                 (ctx.idempotency_key, n, cents))
        ctx.complete_in(conn)


@app.task(name="demo.long_export", queue="reports", max_attempts=1)
async def long_export(ctx: JobContext) -> None:
    for _ in range(600):  # runs until an operator cancels it
        await asyncio.sleep(0.1)


# -- the business table, in the same database as the queue ---------------------------------------


def _execute(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """`sql` in the transaction of `conn`: `{t}` is the business table, `{p}` a parameter."""
    backend = app.backend
    return backend.run_sql(sql.format(t=backend.own_table("demo_charges"),
                                      p=backend.placeholder), params, conn=conn)


# -- the run -------------------------------------------------------------------------------------


def _workers_main(url: str, processes: int, concurrency: int) -> None:
    app.set_url(url)
    run_worker(app, processes=processes, concurrency=concurrency, poll_interval=0.2,
               grace=10.0, app_path="claimq.demo:app")


def _fresh_database(url: str) -> str:
    """A SQLite file emptied; a new schema (PostgreSQL) or database (MySQL) on the server."""
    return fresh_url(url, "claimq_demo", replace=True)


def _p50_p95(seconds: list[float], fmt: str) -> str:
    p50, p95 = (_percentile(seconds, q) * 1000 for q in (0.5, 0.95))
    return f"{p50:,{fmt}} / {p95:,{fmt}} ms"


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


@click.command(name="demo")
@click.option("--database", "url", default=None,
              help=f"Database URL (default {DEMO_URL}, made fresh each run; a PostgreSQL URL "
                   "gets a fresh schema, a MySQL URL a fresh database on its server).")
@click.option("--jobs", "scale", default=3500, show_default=True,
              type=Whole(200, 90_000), help="About how many jobs to enqueue.")
@click.option("--processes", default=3, show_default=True, type=Whole(1, 64))
@click.option("--concurrency", default=16, show_default=True, type=Whole(1, 1000))
@click.pass_context
def command(
    ctx: click.Context, url: str | None, scale: int, processes: int, concurrency: int
) -> None:
    """Run example tasks through several worker processes and check the outcome."""
    console = Console()
    root = ctx.find_root().obj  # `claimq --database URL demo` means that database
    if url is None and getattr(root, "explicit", False):
        url = root.url
    url = _fresh_database(url or DEMO_URL)
    app.set_url(url)
    app.migrate()
    _execute_setup()
    console.print(f"[bold]claimq demo[/] on [cyan]{url}[/]: {processes} worker processes × "
                  f"{concurrency} concurrency")

    images, emails, charges = scale * 4 // 7, scale * 2 // 7, scale // 7
    reports = 20
    specs: list[dict[str, Any]] = (
        [{"task": "demo.resize_image", "payload": {"n": i}} for i in range(images)]
        + [{"task": "demo.send_email", "payload": {"n": i}, "retry": FAST_RETRY,
            "max_attempts": 5} for i in range(emails)]
        + [{"task": "demo.charge_card", "payload": {"n": i, "cents": 100 + i},
            "priority": 10, "max_attempts": 3} for i in range(charges)]
        + [{"task": "demo.generate_report", "payload": {"n": i}, "queue": "reports"}
           for i in range(reports)]
    )
    random.shuffle(specs)
    total = len(specs) + 1
    started = time.monotonic()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as progress:
        bar = progress.add_task("enqueue", total=total)
        for i in range(0, len(specs), 500):
            chunk = specs[i:i + 500]
            app.enqueue_many(chunk)
            progress.advance(bar, len(chunk))
        export_id = app.enqueue("demo.long_export", queue="reports", max_attempts=1)
        progress.advance(bar)

        spawn = multiprocessing.get_context("spawn")
        supervisor = spawn.Process(target=_workers_main, args=(url, processes, concurrency))
        supervisor.start()
        run = progress.add_task("run", total=total)
        cancelled = False
        try:
            while True:
                time.sleep(0.25)
                queues = app.queues()
                finished = sum(q.archived + q.dead for q in queues)
                live = sum(q.pending + q.scheduled + q.fetched + q.processing for q in queues)
                progress.update(run, completed=finished,
                                description=f"run  (running {sum(q.processing for q in queues)})")
                if not cancelled and app.get_job(export_id).status == "processing":
                    cancelled = app.cancel(export_id) == "cancel_requested"
                if live == 0 and finished >= total:
                    break
                if not supervisor.is_alive():
                    raise click.ClickException("the worker supervisor died")
                if time.monotonic() - started > 600:
                    raise click.ClickException("the demo did not finish within 10 minutes")
        finally:
            if supervisor.pid is not None and supervisor.is_alive():
                os.kill(supervisor.pid, 15)
            supervisor.join(timeout=30)
    elapsed = time.monotonic() - started
    ok = _report(console, elapsed, total, images, emails, charges, reports)
    app.close()
    if not ok:
        raise SystemExit(1)


def _execute_setup() -> None:
    with app.transaction() as conn:
        _execute(conn, "CREATE TABLE IF NOT EXISTS {t} (charge_key VARCHAR(255) PRIMARY KEY, "
                       "order_no INTEGER NOT NULL, cents INTEGER NOT NULL)")


def _report(console: Console, elapsed: float, total: int, images: int, emails: int,
            charges: int, reports: int) -> bool:
    archive = app.list_jobs("archive", limit=100_000)
    dead = app.list_jobs("dead", limit=100_000)
    live = app.list_jobs("live", limit=100_000)
    with app.transaction() as conn:
        rows = _execute(conn, "SELECT charge_key FROM {t}")
    charge_keys = [r[0] for r in rows]
    by_task = Counter(j.task for j in archive)
    reasons = Counter((j.task, j.reason) for j in dead)
    retried = [j for j in archive if j.attempts > 1]
    waits = [(j.started_at - j.run_at).total_seconds() for j in archive
             if j.started_at and j.run_at]
    runs = [(j.finished_at - j.started_at).total_seconds() for j in archive
            if j.finished_at and j.started_at]
    declined = len(range(0, charges, 50))

    summary = Table(title="claimq demo: report", show_header=True)
    summary.add_column("measure")
    summary.add_column("value", justify="right")
    summary.add_row("jobs enqueued", str(total))
    summary.add_row("done (archive)", str(len(archive)))
    summary.add_row("retried, then done", str(len(retried)))
    summary.add_row("dead letters", ", ".join(f"{r}: {n}" for (_, r), n in sorted(reasons.items()))
                    or "0")
    summary.add_row("throughput", f"{(len(archive) + len(dead)) / elapsed:,.0f} jobs/s")
    summary.add_row("wait (due → start) p50 / p95", _p50_p95(waits, ".0f"))
    summary.add_row("run time p50 / p95", _p50_p95(runs, ".1f"))
    summary.add_row("wall time", f"{elapsed:,.1f} s")
    console.print(summary)

    checks = [
        ("every job accounted for (archive + dead = enqueued, none live)",
         len(archive) + len(dead) == total and not live),
        ("no job in both archive and dead letters",
         not ({j.id for j in archive} & {j.id for j in dead})),
        (f"images done: {by_task['demo.resize_image']}/{images}",
         by_task["demo.resize_image"] == images),
        (f"emails done: {by_task['demo.send_email']}/{emails}, "
         f"{len(range(0, emails, 5))} after one transient failure",
         by_task["demo.send_email"] == emails
         and sum(1 for j in retried if j.task == "demo.send_email") == len(range(0, emails, 5))),
        (f"reports done: {by_task['demo.generate_report']}/{reports}",
         by_task["demo.generate_report"] == reports),
        (f"cards charged once each: {len(charge_keys)} charges for "
         f"{by_task['demo.charge_card']} completed jobs",
         len(charge_keys) == len(set(charge_keys)) == by_task["demo.charge_card"]
         == charges - declined),
        (f"declined cards dead-lettered as permanent: {declined}",
         reasons[("demo.charge_card", "permanent_error")] == declined),
        ("the long export was cancelled while running",
         reasons[("demo.long_export", "cancelled")] == 1),
        ("attempt history kept on retried jobs",
         all(len(j.errors) == j.attempts - 1 for j in retried)),
    ]
    for text, passed in checks:
        console.print(("[green]✓[/] " if passed else "[red]✗[/] ") + text)
    ok = all(p for _, p in checks)
    console.print("[bold green]all checks passed[/]" if ok else "[bold red]some checks failed[/]")
    return ok


if __name__ == "__main__":
    command()
