"""claimq enqueue and claimq stats (plus the terminal-only progress bar and live view)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta

import pytest
from cli_helpers import TIMEOUT, Cli, archived, cli_env, dead_permanent

from claimq import App, Status
from claimq.clock import FakeClock


def test_enqueue(cli: Cli, app: App) -> None:
    (cli.cwd / "payload.json").write_text('{"from": "file"}')
    before = datetime.now(UTC)
    full = cli(
        "enqueue", "send_email", "--payload", '{"to": "a@example.com", "n": 1}',
        "--queue", "emails", "--priority", "5", "--delay", "3600", "--key", "order-1",
        "--max-attempts", "3", "--tag", "x", "--tag", "y", "--json",
    ).json()
    job = app.get_job(full["id"])
    assert full["ids"] == [job.id]
    assert job.task == "send_email" and job.queue == "emails" and job.status == Status.PENDING
    assert job.payload == {"to": "a@example.com", "n": 1}
    assert job.priority == 5 and job.max_attempts == 3 and job.tags == ("x", "y")
    assert job.idempotency_key == "order-1"
    assert job.run_at is not None
    assert before + timedelta(seconds=3590) < job.run_at < before + timedelta(seconds=3700)

    same_key, plain, from_file, from_stdin, bulk_result, human = cli.many(
        ["enqueue", "send_email", "--key", "order-1", "--queue", "emails"],
        ["enqueue", "cleanup"],
        ["enqueue", "cleanup", "--payload", "@payload.json"],
        ["enqueue", "cleanup", "--payload", "-"],
        ["enqueue", "work", "--count", "2500", "--queue", "bulk", "--json"],
        ["enqueue", "work", "--count", "3", "--queue", "small"],
        stdin={3: '{"from": "stdin"}'},
    )
    assert same_key.ok().out == f"{job.id}\n"  # an idempotency key still held: same job
    plain_job = app.get_job(int(plain.ok().out))
    assert plain_job.queue == "default" and plain_job.payload == {} and plain_job.priority == 0
    assert app.get_job(int(from_file.ok().out)).payload == {"from": "file"}
    assert app.get_job(int(from_stdin.ok().out)).payload == {"from": "stdin"}

    bulk = bulk_result.json()
    assert bulk["count"] == 2500 and len(set(bulk["ids"])) == 2500
    depth = {q.name: q.pending for q in app.queues()}
    assert depth["bulk"] == 2500 and depth["small"] == 3
    assert "enqueued 3 jobs" in human.ok().out



def test_stats(cli: Cli, app: App) -> None:
    for n in range(3):
        app.enqueue("send", {"n": n}, queue="emails")
    app.enqueue("send", queue="emails", delay=3600)
    app.enqueue("report", queue="reports")
    app.pause("reports")
    app.configure_queue("emails", max_workers=4)

    as_json, human = cli.many(["stats", "--json"], ["stats"])
    found = as_json.json()
    assert found["window"] == 300
    data = {q["name"]: q for q in found["queues"]}
    assert set(data) == {"emails", "reports"}
    emails, reports = data["emails"], data["reports"]
    assert (emails["pending"], emails["scheduled"], emails["max_workers"]) == (3, 1, 4)
    assert emails["paused"] is False and emails["active"] is True
    assert emails["oldest_due_age"] >= 0 and emails["dead_by_reason"] == {}
    assert emails["wait"] == {"count": 0, "p50": None, "p95": None, "p99": None}
    assert reports["paused"] is True and reports["pending"] == 1
    tasks = {t["name"]: t for t in found["tasks"]}
    assert tasks["send"]["pending"] == 3 and tasks["report"]["pending"] == 1

    for word in ("emails", "reports", "paused", "active", "due", "scheduled", "oldest due",
                 "tasks", "send", "nothing finished in the last 5m00s"):
        assert word in human.ok().out

    watch = cli.popen("stats", "--watch", "--interval", "0.2", "--json")
    try:
        assert watch.stdout is not None
        first = json.loads(watch.stdout.readline())
        second = json.loads(watch.stdout.readline())
        assert [q["name"] for q in first["queues"]] == ["emails", "reports"]
        assert datetime.fromisoformat(second["at"]) >= datetime.fromisoformat(first["at"])
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=TIMEOUT)
        assert watch.returncode == 0, err
    finally:
        watch.kill()


def test_stats_fits_100_columns(cli: Cli, app: App) -> None:
    """Every line of `claimq stats` fits 100 columns, with figures of every kind (issue 28: it
    took ~190), on a console that would allow 200."""
    for queue in ("emails", "a-rather-long-queue-name-for-reports"):
        archived(app, "send_weekly_newsletter", queue)
        dead_permanent(app, "send_weekly_newsletter", queue + "-x")
        app.enqueue("send_weekly_newsletter", queue=queue, delay=3600)
        app.enqueue("send_weekly_newsletter", queue=queue)
    app.configure_queue("emails", max_workers=4)
    app.configure_breaker("send_weekly_newsletter", failures=3, queue="emails")
    out = cli("stats").ok().out
    for word in ("emails", "a-rather-long-queue", "send_weekly_newsletter", "done/min",
                 "wait p50/p95/p99", "permanent_error", "circuit breakers"):
        assert word in out, word
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 100, out


def test_stats_rates_are_over_the_time_they_measure(cli: Cli, app: App) -> None:
    """Jobs that all finished within seconds of a new database's start: done/min over those
    seconds, not over the whole 5-minute window; once something finished before the window,
    over the window."""
    for n in range(6):
        archived(app, "send", f"q{n}")
    fresh = cli("stats", "--json").json()
    assert fresh["window"] == 300 and 0 < fresh["measured"] < 60, fresh["measured"]
    done = sum(q["completed_per_minute"] for q in fresh["queues"])
    assert done == pytest.approx(6 * 60 / fresh["measured"])
    assert "rates over" in cli("stats").ok().out

    past = App(app.url, clock=FakeClock(datetime.now(UTC) - timedelta(minutes=20)))
    archived(past, "send", "old")
    past.close()
    covered = cli("stats", "--json").json()
    assert covered["measured"] == 300
    assert sum(q["completed_per_minute"] for q in covered["queues"]) == pytest.approx(6 / 5)


def _run_in_pty(cli: Cli, *args: str, stop_when: str | None = None) -> tuple[int, str]:
    """Runs claimq with stdout on a pseudo-terminal; with `stop_when`, sends Ctrl-C (SIGINT)
    once that text has appeared."""
    master, slave = pty.openpty()
    env = cli_env(TERM="xterm-256color", COLUMNS="160")
    env.pop("NO_COLOR")
    proc = cli.popen(*args, stdout=slave, stderr=subprocess.STDOUT, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT
    interrupted = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            text = b"".join(chunks).decode(errors="replace")
            if stop_when and not interrupted and stop_when in text:
                proc.send_signal(signal.SIGINT)
                interrupted = True
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=TIMEOUT)
    finally:
        proc.kill()
        os.close(master)
    return code, b"".join(chunks).decode(errors="replace")


def test_terminal_progress_and_live_stats(cli: Cli, app: App) -> None:
    code, out = _run_in_pty(cli, "enqueue", "work", "--count", "3000", "--queue", "tty")
    assert code == 0, out
    assert "enqueueing" in out  # the rich progress bar was drawn
    assert "enqueued 3000 jobs" in out
    (queue,) = app.queues()
    assert queue.pending == 3000

    code, out = _run_in_pty(cli, "stats", "--watch", "--interval", "0.2", stop_when="3000")
    assert code == 0, out
    assert "tty" in out and "3000" in out
