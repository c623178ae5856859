"""The dashboard's workflow pages over HTTP (Starlette's TestClient), on a real SQLite file,
PostgreSQL and MariaDB: the list, one workflow's jobs, edges and graph layout, and the admin's
cancel and retry (same-origin, audited)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from claimq import App, DeadReason, Permanent, Status, Workflow, call
from claimq.backends.base import Edge
from claimq.dashboard import _data, create_app
from claimq.workflow import WorkflowHandle

READ = "read-token-0123456789"
ADMIN = "admin-token-0123456789"


@pytest.fixture
def wf_app(app: App) -> App:
    assert app.backend.capabilities.workflows, app.backend.kind
    return app


@pytest.fixture
def client(wf_app: App) -> Iterator[TestClient]:
    with TestClient(create_app(wf_app, read_token=READ, admin_token=ADMIN)) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def admin(client: TestClient) -> dict[str, str]:
    csrf = client.get("/api/me", headers=bearer(ADMIN)).json()["csrf"]
    return {**bearer(ADMIN), "x-claimq-csrf": csrf}


def get(client: TestClient, path: str, **params: Any) -> dict[str, Any]:
    response = client.get(path, params=params, headers=bearer(READ))
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def run_one(app: App, queue: str, *, fail: bool = False) -> int:
    (job,) = app.claim("test-worker", [queue], limit=1)
    attempt = app.start(job)
    if fail:
        assert app.fail(job, Permanent("boom"), attempt=attempt, worker_id="test-worker") == "dead"
    else:
        app.complete(job, {"id": job.id})
    return job.id


def failed_pipeline(app: App, queue: str) -> tuple[WorkflowHandle, list[int]]:
    """extract -> transform (fails for good) -> load (cancelled), and report after transform
    whatever happens to it."""
    wf = Workflow("etl", key=f"etl-{queue}")
    extract = wf.add("extract", queue=queue)
    transform = wf.add("transform", after=[extract], queue=queue)
    load = wf.add("load", after=[transform], queue=queue)
    report = wf.add("report", after=[(transform, "run")], queue=queue)
    handle = app.enqueue_workflow(wf)
    run_one(app, queue)
    run_one(app, queue, fail=True)
    return handle, [handle.job_id(s) for s in (extract, transform, load, report)]


def test_workflow_pages_list_and_show_a_workflow(wf_app: App, client: TestClient) -> None:
    app = wf_app
    failed, (extract, transform, load, report) = failed_pipeline(app, "qa")
    fan = Workflow("fan")
    split = fan.add("split", queue="qb")
    parts = [fan.add("part", {"i": i}, after=[split], queue="qb") for i in range(3)]
    fan.add("join", after=parts, queue="qb")
    running = app.enqueue_workflow(fan)

    assert client.get("/api/workflows").status_code == 401
    assert client.get(f"/api/workflows/{failed.id}").status_code == 401
    assert get(client, "/api/me")["workflows"] is True
    listed = get(client, "/api/workflows")
    assert listed["next"] is None
    rows = {w["id"]: w for w in listed["workflows"]}
    assert list(rows) == [running.id, failed.id]
    assert (rows[failed.id]["name"], rows[failed.id]["key"], rows[failed.id]["state"]) == (
        "etl", "etl-qa", "running")
    assert rows[failed.id]["counts"] == {"succeeded": 1, "dead": 2, "pending": 1}
    assert (rows[running.id]["state"], rows[running.id]["counts"]) == (
        "running", {"pending": 1, "held": 4})
    first = get(client, "/api/workflows", limit=1)
    assert [w["id"] for w in first["workflows"]] == [running.id] and first["next"] == running.id
    second = get(client, "/api/workflows", limit=1, before=first["next"])
    assert [w["id"] for w in second["workflows"]] == [failed.id] and second["next"] is None

    detail = get(client, f"/api/workflows/{failed.id}")
    assert detail["workflow"]["state"] == "running" and detail["graph"] is True
    assert detail["jobs_total"] == 4
    jobs = {j["id"]: j for j in detail["jobs"]}
    assert [(jobs[i]["task"], jobs[i]["status"], jobs[i]["reason"], jobs[i]["waits_for"])
            for i in (extract, transform, load, report)] == [
        ("extract", "succeeded", None, []),
        ("transform", "dead", "permanent_error", [extract]),
        ("load", "dead", "dependency_failed", [transform]),
        ("report", "pending", None, [transform]),
    ]
    assert [jobs[i]["layer"] for i in (extract, transform, load, report)] == [0, 1, 2, 2]
    assert {(e["parent"], e["child"], e["on_failure"], e["resolved"])
            for e in detail["edges"]} == {
        (extract, transform, "cancel", True), (transform, load, "cancel", True),
        (transform, report, "run", True)}

    graph = get(client, f"/api/workflows/{running.id}")
    place = {j["task"] + str(j["id"]): (j["layer"], j["row"]) for j in graph["jobs"]}
    ids = running.job_ids
    assert place[f"split{ids[0]}"] == (0, 0)
    assert sorted(place[f"part{i}"] for i in ids[1:4]) == [(1, 0), (1, 1), (1, 2)]
    assert place[f"join{ids[4]}"] == (2, 0)
    assert next(j for j in graph["jobs"] if j["task"] == "join")["waits_for"] == ids[1:4]

    missing = client.get("/api/workflows/987654", headers=bearer(READ))
    assert missing.status_code == 404 and "no workflow 987654" in missing.json()["error"]
    assert client.get("/api/workflows/zero", headers=bearer(READ)).status_code == 400
    assert client.get("/api/workflows", params={"limit": 0},
                      headers=bearer(READ)).status_code == 400


def test_a_big_workflow_lists_its_first_jobs_and_draws_no_graph(
    wf_app: App, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_data, "WORKFLOW_JOBS", 3)
    monkeypatch.setattr(_data, "GRAPH_JOBS", 4)
    wf = Workflow("big")
    wf.chain(*[call("step", {"i": i}, queue="big") for i in range(5)])
    handle = wf_app.enqueue_workflow(wf)
    detail = get(client, f"/api/workflows/{handle.id}")
    assert (detail["jobs_total"], detail["graph"], detail["graph_limit"]) == (5, False, 4)
    assert [j["id"] for j in detail["jobs"]] == handle.job_ids[:3]
    assert all("layer" not in j for j in detail["jobs"])
    assert [(e["parent"], e["child"]) for e in detail["edges"]] == list(
        zip(handle.job_ids[:2], handle.job_ids[1:3], strict=True))


def test_workflow_actions_need_the_admin_and_are_audited(wf_app: App,
                                                         client: TestClient) -> None:
    app = wf_app
    failed, (extract, transform, load, report) = failed_pipeline(app, "qr")
    wf = Workflow("to-cancel")
    first = wf.add("a", queue="qc")
    wf.add("b", after=[first], queue="qc")
    doomed = app.enqueue_workflow(wf)

    csrf = client.get("/api/me", headers=bearer(READ)).json()["csrf"]
    reader = {**bearer(READ), "x-claimq-csrf": csrf}
    for action in ("cancel", "retry"):
        assert client.post(f"/api/workflows/{doomed.id}/{action}",
                           headers=reader).status_code == 403
        cross = {**admin(client), "sec-fetch-site": "cross-site"}
        assert client.post(f"/api/workflows/{doomed.id}/{action}",
                           headers=cross).status_code == 403
        no_csrf = client.post(f"/api/workflows/{doomed.id}/{action}", headers=bearer(ADMIN))
        assert no_csrf.status_code == 403
    assert doomed.status().counts == {"pending": 1, "held": 1}

    headers = admin(client)
    cancelled = client.post(f"/api/workflows/{doomed.id}/cancel", headers=headers).json()
    assert (cancelled["affected"], cancelled["outcome"]) == (2, "2 job(s) cancelled")
    assert {(j.status, j.reason) for j in doomed.jobs()} == {(Status.DEAD, DeadReason.CANCELLED)}
    again = client.post(f"/api/workflows/{doomed.id}/cancel", headers=headers).json()
    assert again["affected"] == 0

    retried = client.post(f"/api/workflows/{failed.id}/retry", headers=headers).json()
    assert (retried["affected"], retried["resurrected"]) == (1, [transform])
    assert app.get_job(transform).status == Status.PENDING
    assert app.get_job(load).status == Status.HELD
    assert get(client, f"/api/workflows/{failed.id}")["workflow"]["state"] == "running"

    assert client.post(f"/api/workflows/{failed.id}/purge", headers=headers).status_code == 400
    assert client.post("/api/workflows/987654/cancel", headers=headers).status_code == 404
    entries = [(e.action, e.target, e.affected) for e in app.backend.list_audit(None, 10)]
    assert entries == [("retry", f"workflow {failed.id}", 1),
                       ("cancel", f"workflow {doomed.id}", 0),
                       ("cancel", f"workflow {doomed.id}", 2)]
    latest = app.backend.list_audit(None, 1)[0]
    assert latest.detail["resurrected"] == [transform]
    assert latest.actor.startswith("admin-token:") and latest.detail["by"]["role"] == "admin"


def test_the_graph_layout_puts_each_job_after_what_it_waits_for() -> None:
    def edges(*pairs: tuple[int, int]) -> list[Edge]:
        return [Edge(p, c, "cancel", False) for p, c in pairs]

    # a diamond, plus a job spawned later (a higher id) that an older one waits for
    place = _data.graph_layout([1, 2, 3, 4, 9], edges((1, 2), (1, 3), (2, 4), (3, 4), (1, 9),
                                                      (9, 4)))
    assert place == {1: (0, 0), 2: (1, 0), 3: (1, 1), 9: (1, 2), 4: (2, 0)}
    # two chains side by side keep their rows
    assert _data.graph_layout([1, 2, 3, 4], edges((1, 3), (2, 4))) == {
        1: (0, 0), 2: (0, 1), 3: (1, 0), 4: (1, 1)}
    # rows follow the parents' rows: fewer crossings
    assert _data.graph_layout([1, 2, 3, 4], edges((2, 3), (1, 4))) == {
        1: (0, 0), 2: (0, 1), 4: (1, 0), 3: (1, 1)}
    # a cycle (never written by claimq) does not hang the page: it goes last
    assert _data.graph_layout([1, 2, 3], edges((1, 2), (3, 2), (2, 3))) == {
        1: (0, 0), 3: (1, 0), 2: (1, 1)}
    assert _data.graph_layout([], []) == {}


def test_the_workflows_tab_is_hidden_without_workflows(app: App) -> None:
    with TestClient(create_app(app, read_token=READ)) as c:
        me = c.get("/api/me", headers=bearer(READ)).json()
        assert me["workflows"] is app.backend.capabilities.workflows
        if not app.backend.capabilities.workflows:
            assert c.get("/api/workflows", headers=bearer(READ)).status_code == 404
