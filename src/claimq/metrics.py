"""Prometheus metrics (the `metrics` extra: `pip install 'claimq[metrics]'`).

`collector(app)` reads `app.stats()` at every scrape: per queue and per task, the depths, the
oldest due job's age, jobs past their lease, dead letters by reason, completions and failures
per minute, latency quantiles and attempts per job. With `worker=` it adds that worker's own
counters (claimed, succeeded, retried, dead-lettered, lease lost, loop restarts) and its claim
round-trip histogram. Serve them with:

- `claimq worker APP --metrics-port 9108` (each worker process: its counters and the stats);
- `metrics_app(app)`: an ASGI app to mount (`Mount("/metrics", metrics_app(app))`);
- `metrics_wsgi_app(app)` for WSGI servers, or `metrics_text(app)` for the exposition text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from claimq.errors import ClaimqError
from claimq.stats import DEFAULT_WINDOW, Latency, TaskStats

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


class ClaimqCollector(Collector):
    """A prometheus_client collector: app.stats() (and a worker's counters) at each scrape."""

    def __init__(self, app: App, *, worker: WorkerState | None = None,
                 window: float = DEFAULT_WINDOW) -> None:
        self.app = app
        self.worker = worker
        self.window = window

    def collect(self) -> Iterator[Metric]:
        yield from self._stats()
        if self.worker is not None:
            yield from _worker_metrics(self.worker)

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


def metrics_app(app: App, *, window: float = DEFAULT_WINDOW) -> Any:
    """An ASGI app serving claimq's metrics (mount it at /metrics in Starlette or FastAPI)."""
    from prometheus_client import make_asgi_app

    return make_asgi_app(registry(app, window=window))


def metrics_wsgi_app(app: App, *, window: float = DEFAULT_WINDOW) -> Any:
    """A WSGI app serving claimq's metrics."""
    from prometheus_client import make_wsgi_app

    return make_wsgi_app(registry(app, window=window))


__all__ = [
    "ClaimqCollector", "collector", "metrics_app", "metrics_text", "metrics_wsgi_app", "registry",
]
