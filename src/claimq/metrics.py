"""Prometheus metrics (the `metrics` extra: `pip install 'claimq[metrics]'`).

Two kinds, so that sums over scraped targets add up:

- **The cluster's gauges**, read from `app.stats()` at a scrape: per queue and per task, the
  depths, the oldest due job's age, jobs past their lease, dead letters by reason, completions
  and failures per minute, latency quantiles and attempts per job, `claimq_stats_up`, and
  workflows by state (`claimq_workflows{state=...}`, the newest WORKFLOW_SCAN of them; never a
  series per workflow: their ids are unbounded). They describe the database, so exactly one
  place exports them: among worker processes, the one holding the database's `metrics` lease
  (claimq._worker.exporter; `claimq_worker_exports_stats` says which, 1 on it and 0 on the
  others); `metrics_app(app)` and the other label-free paths (no `worker=`) always do, so
  scrape those *instead of* the workers' gauges, not as well.
- **A worker process's own counters** (`worker=`): claimed, succeeded, retried, dead-lettered,
  lease lost, loop restarts, its claim round-trip histogram, and per task, queue and outcome
  (`succeeded`, `retried`, `dead`: each attempt whose outcome was written counts in exactly
  one; a failed attempt is `retried` or `dead`) the attempts `claimq_task_attempts_total` and
  the handler's seconds `claimq_task_duration_seconds` (a histogram). Sum them over workers.

Serve them with:

- `claimq worker APP --metrics-port 9108`: each worker process, on 127.0.0.1 and behind a
  bearer token (`--metrics-token` or CLAIMQ_METRICS_TOKEN) unless told otherwise
  (`--metrics-host ADDR`, `--metrics-no-token`): see `serve()`;
- `metrics_app(app)`: an ASGI app to mount (`Mount("/metrics", metrics_app(app))`), behind
  your app's own authentication;
- `metrics_wsgi_app(app)` for WSGI servers, or `metrics_text(app)` for the exposition text.

`docs/grafana/claimq.json` is a Grafana dashboard over these names.
"""

from __future__ import annotations

import hmac
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from socketserver import ThreadingMixIn
from typing import TYPE_CHECKING, Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from claimq.errors import ClaimqError
from claimq.stats import DEFAULT_WINDOW, Latency, TaskStats
from claimq.workflow import WorkflowState, workflow_state

try:
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import (
        CounterMetricFamily,
        GaugeMetricFamily,
        HistogramMetricFamily,
        Metric,
    )
    from prometheus_client.registry import Collector
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ClaimqError(
        "Prometheus metrics need the metrics extra: pip install 'claimq[metrics]'"
    ) from exc

if TYPE_CHECKING:
    from claimq._worker.inflight import Counters
    from claimq._worker.service import Supervisor
    from claimq.app import App


class WorkerState(Protocol):
    """What of a claimq.Worker the metrics read: its counters and its loops' restarts."""

    @property
    def counters(self) -> Counters: ...
    @property
    def supervisor(self) -> Supervisor | None: ...
    @property
    def exports_stats(self) -> bool:
        """Whether this worker exports the cluster's gauges now (holds the metrics lease)."""
        ...


# The worker's counters (claimq._worker.inflight.Counters) by metric name.
_WORKER_COUNTERS = (
    ("claimed", "claimed", "Jobs this worker claimed."),
    ("succeeded", "completed", "Jobs this worker completed."),
    ("retried", "retried", "Failed attempts this worker sent back for a retry."),
    ("dead_lettered", "dead", "Jobs this worker moved to dead letters."),
    ("lease_lost", "lease_lost", "Claims this worker gave up: their lease was lost."),
    ("claimed_ahead", "claimed_ahead",
     "Slots this worker's claims asked for beyond its free ones (claiming ahead)."),
)

_FIGURES: tuple[tuple[str, str, Callable[[TaskStats], float | None]], ...] = (
    ("pending", "Jobs due now, waiting for a worker.", lambda s: s.pending),
    ("scheduled", "Jobs due later.", lambda s: s.scheduled),
    ("running", "Jobs fetched or processing.", lambda s: s.running),
    ("held", "Workflow jobs held: waiting for their dependencies, never claimed.",
     lambda s: s.held),
    ("past_lease", "Running jobs whose lease ran out.", lambda s: s.past_lease),
    ("oldest_due_age_seconds", "Seconds the oldest due job has waited (0: none due).",
     lambda s: s.oldest_due_age or 0.0),
    ("completed_per_minute", "Jobs archived per minute over the stats window.",
     lambda s: s.completed_per_minute),
    ("failed_per_minute", "Jobs dead-lettered per minute over the stats window (cancels left "
     "out).", lambda s: s.failed_per_minute),
    ("attempts_per_job", "Mean attempts of the jobs that finished in the stats window.",
     lambda s: s.attempts_per_job),
)


WORKFLOW_SCAN = 1000  # a scrape counts the newest this many workflows (a page of 500 at a time)
_WORKFLOW_PAGE = 500
_WORKFLOW_STATES: tuple[WorkflowState, ...] = ("running", "blocked", "succeeded", "failed")


class ClaimqCollector(Collector):
    """A prometheus_client collector: app.stats() (and a worker's counters) at each scrape."""

    def __init__(self, app: App, *, worker: WorkerState | None = None,
                 window: float = DEFAULT_WINDOW) -> None:
        self.app = app
        self.worker = worker
        self.window = window

    def collect(self) -> Iterator[Metric]:
        worker = self.worker
        if worker is None:
            yield from self._stats()
            return
        exporting = worker.exports_stats
        flag = GaugeMetricFamily(
            "claimq_worker_exports_stats",
            "1 on the one worker that exports the cluster's queue and task gauges (it holds "
            "the metrics lease), 0 on the others.")
        flag.add_metric([], 1.0 if exporting else 0.0)
        yield flag
        if exporting:
            yield from self._stats()
        yield from _worker_metrics(worker)

    def _stats(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("claimq_stats_up", "1 when the last stats reading succeeded.")
        try:
            stats = self.app.stats(self.window)
        except ClaimqError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        for kind, rows in (("queue", stats.queues), ("task", stats.tasks)):
            for name, doc, value in _FIGURES:
                family = GaugeMetricFamily(f"claimq_{kind}_{name}", doc, labels=[kind])
                for row in rows:
                    number = value(row)
                    if number is not None:
                        family.add_metric([row.name], float(number))
                yield family
            dead = GaugeMetricFamily(f"claimq_{kind}_dead", "Dead letters held, by reason.",
                                     labels=[kind, "reason"])
            for row in rows:
                for reason, count in row.dead_by_reason.items():
                    dead.add_metric([row.name, reason], count)
            yield dead
            for which, doc in (("wait", "due to start"), ("run", "start to finish")):
                family = GaugeMetricFamily(
                    f"claimq_{kind}_{which}_seconds",
                    f"Seconds from {doc} of the jobs completed in the stats window, by quantile.",
                    labels=[kind, "quantile"])
                for row in rows:
                    latency: Latency = getattr(row, which)
                    for quantile, v in (("0.5", latency.p50), ("0.95", latency.p95),
                                        ("0.99", latency.p99)):
                        if v is not None:
                            family.add_metric([row.name, quantile], v)
                yield family
        for flag in ("paused", "active"):
            family = GaugeMetricFamily(f"claimq_queue_{flag}", f"1 when the queue is {flag}.",
                                       labels=["queue"])
            for q in stats.queues:
                family.add_metric([q.name], 1.0 if getattr(q, flag) else 0.0)
            yield family
        limit = GaugeMetricFamily("claimq_queue_max_workers",
                                  "The queue's limit of jobs running at once (unset: none).",
                                  labels=["queue"])
        for q in stats.queues:
            if q.max_workers is not None:
                limit.add_metric([q.name], q.max_workers)
        yield limit
        yield from self._workflows()

    def _workflows(self) -> Iterator[Metric]:
        """Workflows by state (workflow_state: running, blocked, succeeded, failed): every state
        always, 0 when none; nothing on a backend without workflows or when the read fails."""
        backend = self.app.backend
        if not backend.capabilities.workflows:
            return
        counts = dict.fromkeys(_WORKFLOW_STATES, 0)
        before: int | None = None
        seen = 0
        try:
            while seen < WORKFLOW_SCAN:
                page = backend.list_workflows(min(_WORKFLOW_PAGE, WORKFLOW_SCAN - seen), before)
                for info in page:
                    counts[workflow_state(info.counts)] += 1
                seen += len(page)
                if len(page) < _WORKFLOW_PAGE:
                    break
                before = page[-1].id
        except ClaimqError:
            return
        family = GaugeMetricFamily(
            "claimq_workflows",
            f"Workflows by state (of the newest {WORKFLOW_SCAN}): running, blocked (only jobs "
            "waiting on a dead dependency left), succeeded, failed (until retention prunes "
            "their jobs).", labels=["state"])
        for state, count in counts.items():
            family.add_metric([state], count)
        yield family


def _worker_metrics(worker: WorkerState) -> Iterator[Metric]:
    counters = worker.counters
    for name, key, doc in _WORKER_COUNTERS:
        family = CounterMetricFamily(f"claimq_worker_{name}", doc)
        family.add_metric([], counters.get(key))
        yield family
    restarts = CounterMetricFamily("claimq_worker_loop_restarts",
                                   "Restarts of the worker's loops after a failure.")
    supervisor = worker.supervisor
    restarts.add_metric([], sum(supervisor.restarts.values()) if supervisor else 0)
    yield restarts
    histogram = HistogramMetricFamily(
        "claimq_worker_claim_round_trip_seconds",
        "Seconds of each round trip that claimed jobs (with the outcomes written in it).")
    buckets, total = counters.claim_histogram()
    histogram.add_metric([], buckets, total)
    yield histogram
    attempts = CounterMetricFamily(
        "claimq_task_attempts", "Attempts this worker ran, by how they ended once written "
        "(succeeded, retried, dead).", labels=["task", "queue", "outcome"])
    durations = HistogramMetricFamily(
        "claimq_task_duration_seconds", "Seconds each attempt's handler ran, by how it ended.",
        labels=["task", "queue", "outcome"])
    for labels, run_buckets, seconds in counters.run_histograms():
        attempts.add_metric(list(labels), run_buckets[-1][1])
        durations.add_metric(list(labels), run_buckets, seconds)
    yield attempts
    yield durations


def metric_names(families: Iterable[Metric]) -> set[str]:
    """The sample names these families expose (a counter's `_total`, a histogram's `_bucket`,
    `_count` and `_sum`), whether they hold samples now or not."""
    names = set()
    for family in families:
        if family.type == "counter":
            names.add(family.name + "_total")
        elif family.type == "histogram":
            names.update(family.name + suffix for suffix in ("_bucket", "_count", "_sum"))
        else:
            names.add(family.name)
    return names


def collector(app: App, *, worker: WorkerState | None = None,
              window: float = DEFAULT_WINDOW) -> ClaimqCollector:
    """A collector to register in a prometheus_client registry of your own."""
    return ClaimqCollector(app, worker=worker, window=window)


def registry(app: App, *, worker: WorkerState | None = None,
             window: float = DEFAULT_WINDOW) -> CollectorRegistry:
    """A registry holding claimq's collector alone."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(collector(app, worker=worker, window=window))
    return reg


def metrics_text(app: App, *, worker: WorkerState | None = None,
                 window: float = DEFAULT_WINDOW) -> bytes:
    """The Prometheus text exposition of claimq's metrics, read now."""
    return generate_latest(registry(app, worker=worker, window=window))


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a scrape in progress never holds a stopping worker


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


def _bearer(app: Any, token: str) -> Any:
    """`app` behind `Authorization: Bearer <token>` (401 otherwise, compared in constant time)."""
    expected = f"Bearer {token}".encode()

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        sent = environ.get("HTTP_AUTHORIZATION", "").strip().encode()
        if not hmac.compare_digest(sent, expected):
            start_response("401 Unauthorized", [
                ("Content-Type", "text/plain; charset=utf-8"),
                ("WWW-Authenticate", 'Bearer realm="claimq metrics"')])
            return [b"claimq metrics need Authorization: Bearer <token>\n"]
        return app(environ, start_response)

    return guarded


def serve(collected: CollectorRegistry, host: str, port: int, token: str | None) -> Any:
    """Serves `collected` at any path on host:port (a daemon thread; `server_port` is the port,
    `shutdown()` and `server_close()` stop it), behind `token` unless it is None. A worker
    calls it with its options: host 127.0.0.1 and a token unless told otherwise."""
    from prometheus_client import make_wsgi_app

    wsgi = make_wsgi_app(collected)
    if token is not None:
        wsgi = _bearer(wsgi, token)
    family, _, _, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]

    class Server(_Server):
        address_family = family

    server = make_server(str(address[0]), port, wsgi, Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="claimq-metrics", daemon=True).start()
    return server


def metrics_app(app: App, *, window: float = DEFAULT_WINDOW) -> Any:
    """An ASGI app serving claimq's metrics (mount it at /metrics in Starlette or FastAPI)."""
    from prometheus_client import make_asgi_app

    return make_asgi_app(registry(app, window=window))


def metrics_wsgi_app(app: App, *, window: float = DEFAULT_WINDOW) -> Any:
    """A WSGI app serving claimq's metrics."""
    from prometheus_client import make_wsgi_app

    return make_wsgi_app(registry(app, window=window))


__all__ = [
    "ClaimqCollector", "collector", "metric_names", "metrics_app", "metrics_text",
    "metrics_wsgi_app", "registry", "serve",
]
