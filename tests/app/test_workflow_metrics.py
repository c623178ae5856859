"""claimq.metrics counts workflows by state (claimq_workflows{state}), never one series per
workflow, on a real SQLite file and PostgreSQL."""

from __future__ import annotations

import pytest

from claimq import App, Permanent, Workflow
from claimq import metrics as claimq_metrics

STATES = ("running", "blocked", "succeeded", "failed")


def finish(app: App, queue: str, *, fail: bool = False) -> None:
    (job,) = app.claim("test-worker", [queue], limit=1)
    attempt = app.start(job)
    if fail:
        assert app.fail(job, Permanent("boom"), attempt=attempt, worker_id="test-worker") == "dead"
    else:
        app.complete(job, None)


def two_steps(app: App, queue: str, on_failure: str = "cancel") -> None:
    wf = Workflow(queue, on_failure=on_failure)  # type: ignore[arg-type]
    first = wf.add("first", queue=queue)
    wf.add("second", after=[first], queue=queue)
    app.enqueue_workflow(wf)


def held_gauge(app: App) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {s.labels["queue"]: s.value
            for f in text_string_to_metric_families(claimq_metrics.metrics_text(app).decode())
            for s in f.samples if s.name == "claimq_queue_held"}


def workflow_gauge(app: App) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    found: dict[str, float] = {}
    for family in text_string_to_metric_families(claimq_metrics.metrics_text(app).decode()):
        for sample in family.samples:
            if sample.name == "claimq_workflows":
                assert set(sample.labels) == {"state"}  # no workflow id, no name: bounded
                found[sample.labels["state"]] = sample.value
    return found


def test_workflows_by_state_gauge(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    assert workflow_gauge(app) == dict.fromkeys(STATES, 0.0)  # every state, even at 0

    two_steps(app, "running-a")
    two_steps(app, "running-b")
    finish(app, "running-b")  # its second step is due: still running
    two_steps(app, "blocked", on_failure="wait")
    finish(app, "blocked", fail=True)  # the second waits for an operator
    two_steps(app, "succeeded")
    finish(app, "succeeded")
    finish(app, "succeeded")
    two_steps(app, "failed")
    finish(app, "failed", fail=True)  # the second is cancelled with it
    assert workflow_gauge(app) == {"running": 2.0, "blocked": 1.0, "succeeded": 1.0,
                                   "failed": 1.0}

    # the newest WORKFLOW_SCAN, read page by page
    monkeypatch.setattr(claimq_metrics, "_WORKFLOW_PAGE", 2)
    monkeypatch.setattr(claimq_metrics, "WORKFLOW_SCAN", 3)
    assert workflow_gauge(app) == {"running": 0.0, "blocked": 1.0, "succeeded": 1.0,
                                   "failed": 1.0}
    monkeypatch.setattr(claimq_metrics, "WORKFLOW_SCAN", 1000)
    assert sum(workflow_gauge(app).values()) == 5


def test_held_jobs_per_queue(app: App) -> None:
    two_steps(app, "waits")
    two_steps(app, "runs")
    finish(app, "runs")
    assert held_gauge(app) == {"waits": 1.0, "runs": 0.0}


def test_no_workflow_gauge_without_workflows_or_when_the_read_fails(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    from claimq.errors import DatabaseUnavailable

    def broken(limit: int, before: int | None = None) -> list[object]:
        raise DatabaseUnavailable("down for the test")

    monkeypatch.setattr(app.backend, "list_workflows", broken, raising=False)
    assert workflow_gauge(app) == {}
    text = claimq_metrics.metrics_text(app).decode()
    assert "claimq_stats_up 1.0" in text  # the rest of the scrape stands
