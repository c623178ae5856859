"""OpenTelemetry: the enqueuer's trace context is stored with the job, and the worker's span of
each attempt is its child, across a retry (two attempt spans, one parent), with the job's id,
task, queue, attempt and outcome as attributes; a handler's own spans are children of its
attempt's. The SDK's provider is process-global: the scenario runs in a process of its own
(tracing_app.py) and reports the InMemorySpanExporter's spans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def _scenario(url: str, bulk: int) -> dict[str, Any]:
    env = {**os.environ, "CLAIMQ_DATABASE_URL": url, "TRACING_BULK": str(bulk)}
    done = subprocess.run([sys.executable, str(HERE / "tracing_app.py")], env=env, timeout=90,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
@pytest.mark.parametrize("bulk", [3, 250])  # 250: PostgreSQL enqueues them with COPY
def test_attempt_spans_are_children_of_the_enqueuing_span(db_url: str, bulk: int) -> None:
    from claimq import App

    with App(db_url) as app:
        app.migrate()
    found = _scenario(db_url, bulk)
    request, spans = found["request"], found["spans"]
    attempts = [s for s in spans if s["name"].startswith("claimq.job ")]

    flaky = sorted((s for s in attempts if s["attributes"]["claimq.job.id"] == found["flaky"]),
                   key=lambda s: s["attributes"]["claimq.attempt"])
    assert len(flaky) == 2  # one span per attempt, both children of the enqueuing span
    for span in flaky:
        assert span["name"] == "claimq.job tr.flaky"
        assert (span["trace_id"], span["parent"]) == (request["trace_id"], request["span_id"])
        assert span["attributes"]["claimq.task"] == "tr.flaky"
        assert span["attributes"]["claimq.queue"] == "default"
    first, second = flaky
    assert first["attributes"]["claimq.attempt"] == 1
    assert first["attributes"]["claimq.outcome"] == "retried" and first["status"] == "ERROR"
    assert second["attributes"]["claimq.attempt"] == 2
    assert second["attributes"]["claimq.outcome"] == "succeeded" and second["status"] == "UNSET"

    # the handler's own spans are children of its attempt's span
    inside = [s for s in spans if s["name"] == "inside the handler"]
    assert sorted(s["parent"] for s in inside) == sorted(s["span_id"] for s in flaky)

    bulk_spans = [s for s in attempts if s["attributes"]["claimq.job.id"] in set(found["bulk"])]
    assert len(bulk_spans) == bulk
    assert {(s["trace_id"], s["parent"]) for s in bulk_spans} == {
        (request["trace_id"], request["span_id"])}
    assert all(s["attributes"]["claimq.outcome"] == "succeeded" for s in bulk_spans)

    # enqueued outside any span: its attempt starts a trace of its own
    (orphan,) = [s for s in attempts if s["attributes"]["claimq.job.id"] == found["orphan"]]
    assert orphan["parent"] is None and orphan["trace_id"] != request["trace_id"]


@pytest.mark.parametrize("blocked", [True, False])
def test_without_opentelemetry_nothing_is_traced_and_jobs_still_run(
    tmp_path: Path, blocked: bool
) -> None:
    # blocked: as when the extra is not installed; else installed but unused by the program
    script = """
import sys
if sys.argv[2] == "blocked":
    sys.modules["opentelemetry"] = None
import claimq._tracing as tracing
from claimq import App, Worker
assert not tracing.enabled() and tracing.current_traceparent() is None
app = App(sys.argv[1]); app.migrate()
@app.task(name="t")
def t(): return 1
job = app.enqueue("t")
w = Worker(app, poll_interval=0.05)
import threading, time
th = threading.Thread(target=w.run, kwargs={"install_signals": False}); th.start()
deadline = time.monotonic() + 30
while app.get_job(job).status != "succeeded" and time.monotonic() < deadline:
    time.sleep(0.05)
w.stop(); th.join(20)
assert app.get_job(job).status == "succeeded"
assert app.backend.run_sql("SELECT trace_context FROM claimq_jobs") == []
assert "opentelemetry.trace" not in sys.modules  # claimq never loads it by itself
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script, f"sqlite:///{tmp_path}/t.db",
                           "blocked" if blocked else "installed"],
                          timeout=60, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_workflow_is_one_trace_with_each_job_a_span_under_it(db_url: str) -> None:
    from claimq import App

    with App(db_url) as app:
        app.migrate()
    env = {**os.environ, "CLAIMQ_DATABASE_URL": db_url}
    done = subprocess.run([sys.executable, str(HERE / "tracing_workflow_app.py")], env=env,
                          timeout=90, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["state"] == "succeeded"
    spans = found["spans"]
    [workflow] = [s for s in spans if s["name"] == "claimq.workflow traced"]
    assert workflow["parent"] == found["request"]["span_id"]
    assert {s["trace_id"] for s in spans} == {found["request"]["trace_id"]}, "one trace"
    by_job = {s["attributes"]["claimq.job.id"]: s for s in spans
              if s["name"].startswith("claimq.job ")}
    a_id, b_id = found["jobs"]
    [x_id] = found["spawned"]
    assert set(by_job) == {a_id, b_id, x_id}
    assert by_job[a_id]["parent"] == by_job[b_id]["parent"] == workflow["span_id"]
    assert by_job[x_id]["parent"] == by_job[a_id]["span_id"], "spawned under its spawner"
