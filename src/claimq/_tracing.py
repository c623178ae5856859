"""OpenTelemetry (the `otel` extra: opentelemetry-api). Imported once: without the package,
`AVAILABLE` is false and every function here returns at its first line.

Enqueue stores the current span's W3C traceparent with the job (jobs.trace_context). The
worker, while a real tracer provider is set (an SDK's; the API's default does nothing), reads
the stored contexts of each claimed batch in one statement and runs each attempt inside a span
that is a child of its enqueuer's: `claimq.job <task>`, with claimq.job.id, claimq.task,
claimq.queue, claimq.attempt and claimq.outcome as attributes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claimq._worker.inflight import InFlight

try:
    from opentelemetry import trace
    from opentelemetry.trace import NoOpTracerProvider, ProxyTracerProvider, SpanKind, StatusCode
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    AVAILABLE = True
    _PROPAGATOR = TraceContextTextMapPropagator()
except ImportError:  # the extra is not installed: no tracing, no cost
    AVAILABLE = False


def current_traceparent() -> str | None:
    """The W3C traceparent of the current span, or None (no span, or no OpenTelemetry)."""
    if not AVAILABLE:
        return None
    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent")


def enabled() -> bool:
    """Whether spans would be recorded: a real tracer provider is set."""
    if not AVAILABLE:
        return False
    return not isinstance(trace.get_tracer_provider(), ProxyTracerProvider | NoOpTracerProvider)


@contextmanager
def attempt_span(flight: InFlight, traceparent: str | None) -> Iterator[Any]:
    """The current span of one attempt, a child of the enqueuer's span when it has one."""
    parent = None if traceparent is None else _PROPAGATOR.extract({"traceparent": traceparent})
    job = flight.job
    tracer = trace.get_tracer("claimq")
    with tracer.start_as_current_span(
        f"claimq.job {job.task}", context=parent, kind=SpanKind.CONSUMER,
        record_exception=False, set_status_on_exception=False,
        attributes={"claimq.job.id": job.id, "claimq.task": job.task, "claimq.queue": job.queue,
                    "claimq.attempt": flight.attempt, "messaging.system": "claimq"},
    ) as span:
        yield span


def set_outcome(span: Any, outcome: str, error: str | None = None) -> None:
    span.set_attribute("claimq.outcome", outcome)
    if error is not None:
        span.set_status(StatusCode.ERROR, error)
