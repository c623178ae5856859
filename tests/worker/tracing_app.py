"""Run by test_tracing.py in a process of its own (the OpenTelemetry SDK's tracer provider is
process-global): sets up an InMemorySpanExporter, enqueues jobs inside a producer's span (and
one outside any span), runs a Worker in this process until they finish, and prints the spans
as one JSON object on stdout."""

from __future__ import annotations

import json
import os
import threading
import time

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from claimq import App, JobContext, Retry, Worker

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

app = App(os.environ["CLAIMQ_DATABASE_URL"])


@app.task(name="tr.flaky")
def flaky(ctx: JobContext) -> None:
    with trace.get_tracer("handler").start_as_current_span("inside the handler"):
        pass
    if ctx.attempt == 1:
        raise Retry(after=0)


@app.task(name="tr.ok")
async def ok() -> None:
    pass


def main() -> None:
    producer = trace.get_tracer("producer")
    with producer.start_as_current_span("a request that enqueues") as request:
        flaky_id = app.enqueue("tr.flaky")
        bulk = app.enqueue_many([{"task": "tr.ok"}] * int(os.environ.get("TRACING_BULK", "3")))
    orphan = app.enqueue("tr.ok")
    wanted = {flaky_id, orphan, *bulk}
    worker = Worker(app, concurrency=10, poll_interval=0.05)
    thread = threading.Thread(target=worker.run, kwargs={"install_signals": False})
    thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = {j.id for j in app.list_jobs("archive", limit=100_000)}
        if wanted <= done:
            break
        time.sleep(0.05)
    worker.stop()
    thread.join(30)
    context = request.get_span_context()
    spans = [
        {"name": s.name, "trace_id": s.context.trace_id, "span_id": s.context.span_id,
         "parent": None if s.parent is None else s.parent.span_id,
         "attributes": dict(s.attributes or {}), "status": s.status.status_code.name}
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps({"request": {"trace_id": context.trace_id, "span_id": context.span_id},
                      "flaky": flaky_id, "bulk": bulk, "orphan": orphan, "spans": spans}))


if __name__ == "__main__":
    main()
