"""OpenTelemetry (the `otel` extra: opentelemetry-api). claimq never imports it itself: until the
program has imported `opentelemetry.trace` there can be no current span and no tracer provider,
so every function here returns at its first line (one dict lookup) and nothing is loaded. Once
the program uses OpenTelemetry, claimq takes the API it loaded (once).

Enqueue stores the current span's W3C traceparent with the job (jobs.trace_context). The
worker, while a real tracer provider is set (an SDK's; the API's default does nothing), reads
the stored contexts of each claimed batch in one statement and runs each attempt inside a span
that is a child of its enqueuer's: `claimq.job <task>`, with claimq.job.id, claimq.task,
claimq.queue, claimq.attempt and claimq.outcome as attributes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claimq._worker.inflight import InFlight

_API: SimpleNamespace | None = None


def _api() -> SimpleNamespace | None:
    """The OpenTelemetry API, once the program has imported it; None before."""
    global _API
    if _API is None:
        if sys.modules.get("opentelemetry.trace") is None:
            return None
        from opentelemetry import trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        _API = SimpleNamespace(
            trace=trace, propagator=TraceContextTextMapPropagator(),
            idle=(trace.ProxyTracerProvider, trace.NoOpTracerProvider),
        )
    return _API


def current_traceparent() -> str | None:
    """The W3C traceparent of the current span, or None (no span, or no OpenTelemetry)."""
    api = _api()
    if api is None or not api.trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    api.propagator.inject(carrier)
    return carrier.get("traceparent")


def enabled() -> bool:
    """Whether spans would be recorded: a real tracer provider is set."""
    api = _api()
    return api is not None and not isinstance(api.trace.get_tracer_provider(), api.idle)


@contextmanager
def workflow_span(name: str) -> Iterator[str | None]:
    """While a real tracer provider is set: a span `claimq.workflow <name>` (a child of the
    current one, if any) that each of the workflow's jobs takes as its parent, so that the
    workflow is one trace with every job a span under it. Yields its traceparent (None when
    not tracing)."""
    api = _api()
    if api is None or not enabled():
        yield current_traceparent()
        return
    with api.trace.get_tracer("claimq").start_as_current_span(
        f"claimq.workflow {name}", kind=api.trace.SpanKind.PRODUCER,
        attributes={"claimq.workflow.name": name, "messaging.system": "claimq"},
    ):
        yield current_traceparent()


@contextmanager
def attempt_span(flight: InFlight, traceparent: str | None) -> Iterator[Any]:
    """The current span of one attempt, a child of the enqueuer's span when it has one (call
    only while enabled())."""
    api = _api()
    assert api is not None
    parent = None if traceparent is None else api.propagator.extract(
        {"traceparent": traceparent})
    job = flight.job
    with api.trace.get_tracer("claimq").start_as_current_span(
        f"claimq.job {job.task}", context=parent, kind=api.trace.SpanKind.CONSUMER,
        record_exception=False, set_status_on_exception=False,
        attributes={"claimq.job.id": job.id, "claimq.task": job.task, "claimq.queue": job.queue,
                    "claimq.attempt": flight.attempt, "messaging.system": "claimq"},
    ) as span:
        yield span


def set_outcome(span: Any, outcome: str, error: str | None = None) -> None:
    span.set_attribute("claimq.outcome", outcome)
    if error is not None:
        api = _api()
        assert api is not None
        span.set_status(api.trace.StatusCode.ERROR, error)
