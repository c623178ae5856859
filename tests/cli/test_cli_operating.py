"""`claimq worker --log-format json --metrics-port 0` as a real process: every log line is one
JSON object with stable event names and the job's fields (a handler's own lines too, sync and
async), and the worker's /metrics, scraped over HTTP and parsed with prometheus_client's text
parser, shows its counters, its claim round-trip histogram and the stats."""

from __future__ import annotations

import json
import re
import signal
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cli_helpers import Cli
from polling import archived, dead, wait_until
from prometheus_client.parser import text_string_to_metric_families
from test_cli_worker import WorkerCli

from claimq import App

pytestmark = pytest.mark.timeout(120)

OPS_APP = """
import logging

from claimq import App, Permanent, Retry

log = logging.getLogger("opsapp")
app = App("sqlite:///never-used.db")  # the tests give --database


@app.task(name="ops.async")
async def async_ok(n: int) -> int:
    log.info("handler says hi %s", n)
    return n


@app.task(name="ops.sync")
def sync_ok(ctx, n: int) -> int:
    log.info("sync handler says hi %s", n)
    return n


@app.task(name="ops.retry_once")
def retry_once(ctx) -> None:
    if ctx.attempt == 1:
        raise Retry(after=0)


@app.task(name="ops.dead")
def always_dead() -> None:
    raise Permanent("never works")
"""


@pytest.fixture
def start(cli: Cli) -> Iterator[Callable[..., WorkerCli]]:
    (cli.cwd / "opsapp.py").write_text(OPS_APP)
    started: list[WorkerCli] = []

    def run(*args: str) -> WorkerCli:
        started.append(WorkerCli(cli, list(args)))
        return started[-1]

    yield run
    for worker in started:
        worker.close()
        print(f"--- {worker.log_path.name} ---\n{worker.log()[-6000:]}")


def _lines(worker: WorkerCli) -> list[dict[str, Any]]:
    return [json.loads(line) for line in worker.log().splitlines() if line.strip()]


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_json_logs_and_metrics_of_a_real_worker(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    ok = [app.enqueue("ops.async", {"n": 1}), app.enqueue("ops.sync", {"n": 2}, queue="side")]
    retried = app.enqueue("ops.retry_once")
    buried = app.enqueue("ops.dead")
    worker = start("opsapp:app", "--log-format", "json", "--metrics-port", "0",
                   "--metrics-no-token", "--poll-interval", "0.1")
    wait_until(lambda: len(archived(app)) == 3 and len(dead(app)) == 1, 40, "every job done")

    worker.wait_log(r'"event": "worker.metrics"')
    (port,) = {int(m) for m in re.findall(r"metrics on http://127\.0\.0\.1:(\d+)/metrics",
                                          worker.log())}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        samples = _samples(response.read().decode())

    assert samples[("claimq_worker_succeeded_total", ())] == 3
    assert samples[("claimq_worker_claimed_total", ())] == 5  # 4 jobs, one of them twice
    assert samples[("claimq_worker_retried_total", ())] == 1
    assert samples[("claimq_worker_dead_lettered_total", ())] == 1
    assert samples[("claimq_worker_lease_lost_total", ())] == 0
    assert samples[("claimq_worker_loop_restarts_total", ())] == 0
    trips = samples[("claimq_worker_claim_round_trip_seconds_count", ())]
    assert trips >= 1 and samples[("claimq_worker_claim_round_trip_seconds_sum", ())] > 0
    assert samples[("claimq_worker_claim_round_trip_seconds_bucket", (("le", "+Inf"),))] == trips
    assert samples[("claimq_stats_up", ())] == 1
    assert samples[("claimq_queue_pending", (("queue", "default"),))] == 0
    assert samples[("claimq_queue_active", (("queue", "side"),))] == 1
    assert samples[("claimq_queue_dead", (("queue", "default"), ("reason", "permanent_error")))] \
        == 1
    # one job over the time measured: the new database's first seconds, not the 5-minute window
    assert samples[("claimq_task_completed_per_minute", (("task", "ops.sync"),))] > 1 / 5
    assert samples[("claimq_task_attempts_per_job", (("task", "ops.retry_once"),))] == 2
    assert ("claimq_queue_run_seconds", (("quantile", "0.5"), ("queue", "default"))) in samples

    worker.signal(signal.SIGTERM)
    assert worker.wait(20) == 0
    lines = _lines(worker)  # every line is one JSON object
    events = [line.get("event") for line in lines]
    for name in ("worker.started", "worker.metrics", "worker.stopped"):
        assert events.count(name) == 1, name
    (started,) = [line for line in lines if line.get("event") == "worker.started"]
    assert started["level"] == "INFO" and started["logger"] == "claimq.worker"
    assert started["worker_id"] in started["message"]

    def only(event: str) -> dict[str, Any]:
        (line,) = [line for line in lines if line.get("event") == event]
        return line

    fields = ("job_id", "task", "queue", "attempt")
    assert tuple(only("job.retried")[f] for f in fields) == (
        retried, "ops.retry_once", "default", 1)
    assert tuple(only("job.dead")[f] for f in fields) == (buried, "ops.dead", "default", 1)
    failed = [line for line in lines if line.get("event") == "job.failed"]
    assert sorted(line["job_id"] for line in failed) == sorted([retried, buried])

    # The handlers' own lines carry their job's fields (async on the loop, sync in a thread).
    (hi,) = [line for line in lines if line["message"] == "handler says hi 1"]
    (sync_hi,) = [line for line in lines if line["message"] == "sync handler says hi 2"]
    assert (hi["logger"], hi["job_id"], hi["task"], hi["queue"], hi["attempt"]) == (
        "opsapp", ok[0], "ops.async", "default", 1)
    assert (sync_hi["job_id"], sync_hi["task"], sync_hi["queue"], sync_hi["attempt"]) == (
        ok[1], "ops.sync", "side", 1)
    # The worker's own lines outside any job carry no job fields.
    assert "job_id" not in started


def _two_free_ports() -> int:
    """A port p with p and p + 1 free now (bound and released)."""
    import socket

    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return int(port)
    raise AssertionError("no two consecutive free ports")


def test_each_worker_process_serves_metrics_on_its_own_port(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    port = _two_free_ports()
    supervisor = start("opsapp:app", "--processes", "2", "--metrics-port", str(port),
                       "--metrics-no-token", "--poll-interval", "0.1")
    supervisor.wait_log(r"metrics on http://127\.0\.0\.1:\d+/metrics", count=2)
    assert sorted(int(p) for p in re.findall(r"metrics on http://127\.0\.0\.1:(\d+)/metrics",
                                             supervisor.log())) == [port, port + 1]
    for p in (port, port + 1):
        with urllib.request.urlopen(f"http://127.0.0.1:{p}/metrics", timeout=10) as response:
            assert ("claimq_worker_exports_stats", ()) in _samples(response.read().decode())
    wait_until(lambda: len(app.workers()) == 2, 20, "both processes in the registry")
    supervisor.signal(signal.SIGTERM)
    assert supervisor.wait(30) == 0
    assert app.workers() == []  # both stopped cleanly
