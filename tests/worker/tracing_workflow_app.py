"""Run by test_tracing.py in a process of its own: a workflow enqueued inside a request's span
(a -> b, where a spawns x that b also waits for), run by a Worker in this process; prints the
spans and the jobs' ids as one JSON object."""

from __future__ import annotations

import json
import os
import threading

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from claimq import App, JobContext, Worker, Workflow

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

app = App(os.environ["CLAIMQ_DATABASE_URL"])
spawned: list[int] = []


@app.task(name="wf.a")
def a(ctx: JobContext) -> None:
    spawned.extend(ctx.spawn(x.step()))


@app.task(name="wf.x")
def x() -> None:
    pass


@app.task(name="wf.b")
def b() -> None:
    pass


def main() -> None:
    with trace.get_tracer("producer").start_as_current_span("a request") as request:
        wf = Workflow("traced")
        wf.add(b, after=[wf.add(a)])
        handle = app.enqueue_workflow(wf)
    worker = Worker(app, concurrency=4, poll_interval=0.05)
    thread = threading.Thread(target=worker.run, kwargs={"install_signals": False})
    thread.start()
    try:
        status = handle.wait(timeout=60)
    finally:
        worker.stop()
        thread.join(30)
    context = request.get_span_context()
    spans = [
        {"name": s.name, "trace_id": s.context.trace_id, "span_id": s.context.span_id,
         "parent": None if s.parent is None else s.parent.span_id,
         "attributes": dict(s.attributes or {})}
        for s in exporter.get_finished_spans()
    ]
    print(json.dumps({"request": {"trace_id": context.trace_id, "span_id": context.span_id},
                      "state": status.state, "jobs": handle.job_ids, "spawned": spawned,
                      "spans": spans}))


if __name__ == "__main__":
    main()
