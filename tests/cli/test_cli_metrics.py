"""Metrics that add up, scraped over HTTP from real `claimq worker` processes: two workers on
one database export the cluster's queue and task gauges exactly once between them (the one
holding the metrics lease), their per-task attempt histograms sum to the jobs they ran, and a
worker's /metrics is on 127.0.0.1 and refuses a scrape without its bearer token by default."""

from __future__ import annotations

import re
import signal
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
from cli_helpers import Cli
from polling import archived, dead, wait_until
from prometheus_client.parser import text_string_to_metric_families
from test_cli_operating import OPS_APP
from test_cli_worker import WorkerCli

from claimq import App

pytestmark = pytest.mark.timeout(150)

TOKEN = "metrics-token-0123456789abcdef"
Sample = tuple[str, tuple[tuple[str, str], ...]]
# The gauges of app.stats(): the cluster's, not a process's.
CLUSTER = re.compile(r"claimq_(queue|task)_(pending|scheduled|running|past_lease|oldest_due_age"
                     r"_seconds|completed_per_minute|failed_per_minute|attempts_per_job|dead|"
                     r"wait_seconds|run_seconds|paused|active|max_workers)$|claimq_stats_up$")


@pytest.fixture
def start(cli: Cli) -> Iterator[Callable[..., WorkerCli]]:
    (cli.cwd / "opsapp.py").write_text(OPS_APP)
    started: list[WorkerCli] = []

    def run(*args: str, **env: str) -> WorkerCli:
        started.append(WorkerCli(cli, list(args), **env))
        return started[-1]

    yield run
    for worker in started:
        worker.close()
        print(f"--- {worker.log_path.name} ---\n{worker.log()[-6000:]}")


def _port(worker: WorkerCli) -> int:
    worker.wait_log(r"metrics on http://127\.0\.0\.1:\d+/metrics")
    (port,) = {int(p) for p in re.findall(r"metrics on http://127\.0\.0\.1:(\d+)/metrics",
                                          worker.log())}
    return port


def _scrape(port: int, token: str | None = TOKEN) -> list[tuple[str, dict[str, str], float]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
    return [(s.name, s.labels, s.value) for family in text_string_to_metric_families(text)
            for s in family.samples]


def test_two_workers_export_the_queue_gauges_once_and_their_histograms_sum_to_the_jobs(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    jobs = 30
    for i in range(jobs):
        task = ("ops.async", "ops.sync", "ops.retry_once", "ops.dead")[i % 4]
        app.enqueue(task, {"n": i} if task in ("ops.async", "ops.sync") else {},
                    queue=("default", "side")[i % 2])
    retried = sum(1 for i in range(jobs) if i % 4 == 2)  # each retries once, then succeeds
    buried = sum(1 for i in range(jobs) if i % 4 == 3)
    workers = [start("opsapp:app", "--metrics-port", "0", "--poll-interval", "0.1",
                     "--concurrency", "2", CLAIMQ_METRICS_TOKEN=TOKEN) for _ in range(2)]
    ports = [_port(w) for w in workers]
    wait_until(lambda: len(archived(app)) == jobs - buried and len(dead(app)) == buried, 60,
               "every job done")

    def gauges() -> Counter[Sample]:
        seen: Counter[Sample] = Counter()
        for port in ports:
            for name, labels, _ in _scrape(port):
                if CLUSTER.match(name):
                    seen[(name, tuple(sorted(labels.items())))] += 1
        return seen

    def exporters() -> float:
        return sum(v for p in ports for n, _, v in _scrape(p) if n == "claimq_worker_exports_stats")

    wait_until(lambda: exporters() == 1, 30, "one worker exporting the cluster's gauges")
    for _ in range(3):  # scrape after scrape: each series once across both workers
        seen = gauges()
        assert seen, "no queue gauges at all"
        assert {k: n for k, n in seen.items() if n != 1} == {}
        assert seen[("claimq_stats_up", ())] == 1
        assert seen[("claimq_queue_pending", (("queue", "default"),))] == 1
        assert seen[("claimq_queue_pending", (("queue", "side"),))] == 1
        assert seen[("claimq_task_pending", (("task", "ops.dead"),))] == 1
        assert exporters() == 1

    # Per task, queue and outcome, summed over both workers: the jobs and attempts they ran.
    counts: Counter[tuple[str, str, str]] = Counter()
    attempts: Counter[tuple[str, str, str]] = Counter()
    totals: Counter[str] = Counter()
    for port in ports:
        for name, labels, value in _scrape(port):
            if name == "claimq_task_duration_seconds_count":
                counts[(labels["task"], labels["queue"], labels["outcome"])] += int(value)
            elif name == "claimq_task_attempts_total":
                attempts[(labels["task"], labels["queue"], labels["outcome"])] += int(value)
            elif name.startswith("claimq_worker_") and name.endswith("_total"):
                totals[name] += int(value)
    assert counts == attempts
    by_outcome: Counter[str] = Counter()
    for (_, _, outcome), n in counts.items():
        by_outcome[outcome] += n
    assert by_outcome == {"succeeded": jobs - buried, "retried": retried, "dead": buried}
    assert by_outcome["succeeded"] + by_outcome["dead"] == jobs  # jobs run, each once
    assert sum(by_outcome.values()) == totals["claimq_worker_claimed_total"]  # attempts
    assert by_outcome["succeeded"] == totals["claimq_worker_succeeded_total"]
    assert by_outcome["retried"] == totals["claimq_worker_retried_total"]
    assert by_outcome["dead"] == totals["claimq_worker_dead_lettered_total"]
    per_task: Counter[str] = Counter()
    for (task, _, outcome), n in counts.items():
        if outcome != "retried":
            per_task[task] += n
    assert per_task == Counter(job.task for job in app.list_jobs("archive", limit=1000)) + \
        Counter(job.task for job in app.list_jobs("dead", limit=1000))
    assert counts[("ops.retry_once", "default", "retried")] + \
        counts[("ops.retry_once", "side", "retried")] == retried

    # The exporter stops cleanly: the other worker takes the gauges over at its next turn.
    holder = next(i for i, p in enumerate(ports) if any(
        n == "claimq_worker_exports_stats" and v == 1 for n, _, v in _scrape(p)))
    workers[holder].signal(signal.SIGTERM)
    assert workers[holder].wait(30) == 0
    other = ports[1 - holder]
    wait_until(lambda: any(n == "claimq_worker_exports_stats" and v == 1
                           for n, _, v in _scrape(other)), 30, "the other worker exporting")
    assert any(n == "claimq_stats_up" for n, _, _ in _scrape(other))


def test_a_workers_metrics_are_on_loopback_behind_the_token_by_default(
    app: App, cli: Cli, start: Callable[..., WorkerCli]
) -> None:
    # No token and no --metrics-no-token: refused before anything starts (no open port).
    (cli.cwd / "opsapp.py").write_text(OPS_APP)
    refused = cli("worker", "opsapp:app", "--metrics-port", "0")
    refused.usage_error("metrics need a bearer token", "--metrics-no-token")
    cli("worker", "opsapp:app", "--metrics-port", "0", "--metrics-token", "short").usage_error(
        "at least 16 characters")

    worker = start("opsapp:app", "--metrics-port", "0", "--poll-interval", "0.1",
                   CLAIMQ_METRICS_TOKEN=TOKEN)
    port = _port(worker)  # the log line names 127.0.0.1: the default address
    assert "WITHOUT a token" not in worker.log()
    for sent in (None, "wrong-token-0123456789abcdef", TOKEN + "x", ""):
        with pytest.raises(urllib.error.HTTPError) as refusal:
            _scrape(port, sent)
        assert refusal.value.code == 401
        assert refusal.value.headers["WWW-Authenticate"].startswith("Bearer")
        assert b"claimq_" not in refusal.value.read()
    assert any(name == "claimq_worker_exports_stats" for name, _, _ in _scrape(port))
    worker.signal(signal.SIGTERM)
    assert worker.wait(30) == 0


def test_no_token_is_a_choice_the_worker_says_out_loud(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    worker = start("opsapp:app", "--metrics-port", "0", "--metrics-no-token",
                   "--poll-interval", "0.1")
    port = _port(worker)
    assert "WITHOUT a token" in worker.log()
    assert any(name == "claimq_worker_exports_stats" for name, _, _ in _scrape(port, None))
    worker.signal(signal.SIGTERM)
    assert worker.wait(30) == 0
