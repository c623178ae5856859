"""The dashboard over HTTP (Starlette's TestClient), on a real SQLite file, PostgreSQL and
MariaDB: who may see and do what, cross-site requests, bulk actions on exactly the previewed
set, the audit table, escaping."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from starlette.testclient import TestClient

from claimq import App, RetryPolicy, Workflow
from claimq.backends.base import AuditEntry, Owned
from claimq.dashboard import create_app
from claimq.errors import InvalidInput
from claimq.job import Status

READ = "read-token-0123456789"
ADMIN = "admin-token-0123456789"


@pytest.fixture
def client(app: App) -> Iterator[TestClient]:
    with TestClient(create_app(app, read_token=READ, admin_token=ADMIN)) as c:
        yield c


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def admin(client: TestClient) -> dict[str, str]:
    """An admin's headers for an action: the token and the CSRF token /api/me gives it."""
    csrf = client.get("/api/me", headers=bearer(ADMIN)).json()["csrf"]
    return {**bearer(ADMIN), "x-claimq-csrf": csrf}


def dead_letters(app: App, n: int, **options: Any) -> list[int]:
    ids = [app.enqueue("t", {"n": i}, **options) for i in range(n)]
    for job_id in ids:
        assert app.cancel(job_id) == "cancelled"
    return ids



def _dashboard_audit(app: App) -> list[AuditEntry]:
    """The audit rows of the dashboard's actions, newest first (not the test's own API calls)."""
    return [e for e in app.backend.list_audit(None, 100) if e.detail["by"]["via"] == "dashboard"]

def test_without_a_token_only_the_empty_page_loads(app: App, client: TestClient) -> None:
    app.enqueue("t", {"secret": "s3cr3t"}, queue="q")
    page = client.get("/")
    assert page.status_code == 200 and "s3cr3t" not in page.text
    assert client.get("/static/app.js").status_code == 200
    for path in ("/api/me", "/api/overview", "/api/events", "/api/jobs", "/api/jobs/1",
                 "/api/audit", "/metrics"):
        assert client.get(path).status_code == 401, path
        assert client.get(path, headers=bearer("wrong-token-0123456789")).status_code == 401
    refused = client.post("/api/queues/q", json={"action": "pause"})
    assert refused.status_code == 401
    assert app.queues()[0].paused is False


def test_the_read_token_sees_but_cannot_act(app: App, client: TestClient) -> None:
    job_id = app.enqueue("t", {"n": 1}, queue="q")
    overview = client.get("/api/overview", headers=bearer(READ)).json()
    assert [(q["name"], q["depth"], q["state"]) for q in overview["queues"]] == [
        ("q", 1, "active")]
    # the terms of `claimq stats` and app.stats()
    assert (overview["queues"][0]["past_lease"], overview["queues"][0]["oldest_due_age"] >= 0) \
        == (0, True)
    assert overview["breakers"] == []
    if app.backend.capabilities.flow_control:  # circuit breakers, with their state
        app.configure_breaker("t", failures=2, queue="q")
        (breaker,) = client.get("/api/overview", headers=bearer(READ)).json()["breakers"]
        assert (breaker["task"], breaker["state"], breaker["failure_limit"]) == ("t", "closed", 2)
    assert client.get(f"/api/jobs/{job_id}", headers=bearer(READ)).json()["payload"] == {"n": 1}
    csrf = client.get("/api/me", headers=bearer(READ)).json()["csrf"]
    headers = {**bearer(READ), "x-claimq-csrf": csrf}
    for path, body in (("/api/queues/q", {"action": "pause"}),
                       (f"/api/jobs/{job_id}/cancel", {}),
                       ("/api/bulk/preview", {"table": "live", "action": "cancel"})):
        response = client.post(path, json=body, headers=headers)
        assert response.status_code == 403, path
    assert app.queues()[0].paused is False
    assert app.get_job(job_id).status == Status.PENDING
    assert _dashboard_audit(app) == []  # the API's own set-up is audited as the API's


def test_the_admin_token_acts_and_every_action_is_audited(app: App, client: TestClient) -> None:
    job_id = app.enqueue("t", {"n": 1}, queue="q")
    headers = admin(client)
    assert client.post("/api/queues/q", json={"action": "pause"}, headers=headers).json()[
        "state"] == "paused"
    assert app.queues()[0].paused is True
    limited = client.post("/api/queues/q", json={"action": "max_workers", "max_workers": 3},
                          headers=headers)
    assert limited.json()["max_workers"] == 3
    assert client.post(f"/api/jobs/{job_id}/priority", json={"priority": 7},
                       headers=headers).status_code == 200
    assert app.get_job(job_id).priority == 7
    assert client.post(f"/api/jobs/{job_id}/cancel", headers=headers).json()["outcome"] == (
        "cancelled")
    resurrected = client.post(f"/api/jobs/{job_id}/resurrect", json={"payload": {"n": 2}},
                              headers=headers)
    assert resurrected.status_code == 200
    assert app.get_job(job_id).payload == {"n": 2}
    bad = client.post("/api/queues/q", json={"action": "max_workers", "max_workers": -1},
                      headers=headers)
    assert bad.status_code == 400 and "max_workers" in bad.json()["error"]
    entries = client.get("/api/audit", headers=bearer(READ)).json()["entries"]
    assert [(e["action"], e["target"], e["affected"]) for e in entries] == [
        ("resurrect", f"job {job_id}", 1), ("cancel", f"job {job_id}", 1),
        ("priority", f"job {job_id}", 1), ("max_workers", "queue q", 1),
        ("pause", "queue q", 1)]
    assert {e["actor"] for e in entries} == {entries[0]["actor"]}
    assert entries[0]["actor"].startswith("admin-token:")
    assert {(e["detail"]["by"]["via"], e["detail"]["by"]["role"], e["detail"]["by"]["client"])
            for e in entries} == {("dashboard", "admin", "testclient")}
    assert "dashboard admin from testclient" in entries[0]["actor"]
    assert ADMIN not in str(entries)


@pytest.mark.parametrize("extra", [
    {"x-claimq-csrf": ""},  # no CSRF token
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"origin": "https://evil.example"},
])
def test_cross_site_actions_are_refused(app: App, client: TestClient,
                                        extra: dict[str, str]) -> None:
    app.configure_queue("q")
    headers = {**admin(client), **extra}
    response = client.post("/api/queues/q", json={"action": "pause"}, headers=headers)
    assert response.status_code == 403
    assert app.queues()[0].paused is False
    assert _dashboard_audit(app) == []  # the API's own set-up is audited as the API's
    same_site = {**admin(client), "sec-fetch-site": "same-origin", "origin": "http://testserver"}
    assert client.post("/api/queues/q", json={"action": "pause"},
                       headers=same_site).status_code == 200


def test_sign_in_sets_a_strict_http_only_cookie(app: App, client: TestClient) -> None:
    assert client.post("/api/login", json={"token": "nope-nope-nope-nope"}).status_code == 401
    cross = client.post("/api/login", json={"token": ADMIN},
                        headers={"sec-fetch-site": "cross-site"})
    assert cross.status_code == 403 and "set-cookie" not in cross.headers
    signed = client.post("/api/login", json={"token": ADMIN})
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert ADMIN.lower() not in cookie  # the browser keeps a session value, not the token
    assert client.get("/api/me").json()["role"] == "admin"
    app.configure_queue("q")
    without_csrf = client.post("/api/queues/q", json={"action": "pause"})
    assert without_csrf.status_code == 403  # the cookie alone does not act
    with_csrf = client.post("/api/queues/q", json={"action": "pause"},
                            headers={"x-claimq-csrf": signed.json()["csrf"]})
    assert with_csrf.status_code == 200
    client.post("/api/logout", json={})
    client.cookies.clear()
    assert client.get("/api/me").status_code == 401


def test_anonymous_only_on_loopback_and_only_when_allowed(app: App) -> None:
    with pytest.raises(InvalidInput, match="token"):
        create_app(app)
    asgi = create_app(app, allow_anonymous=True)
    with TestClient(asgi, base_url="http://example.com") as remote:  # bound elsewhere
        assert remote.get("/api/me").status_code == 401
    with TestClient(asgi, base_url="http://127.0.0.1:8080", client=("127.0.0.1", 5000)) as local:
        me = local.get("/api/me").json()
        assert (me["role"], me["name"]) == ("admin", "anonymous")
        rebound = local.get("/api/me", headers={"host": "evil.example:8080"})
        assert rebound.status_code == 401  # DNS rebinding: another site's name for 127.0.0.1
    with TestClient(asgi, base_url="http://127.0.0.1:8080", client=("10.1.2.3", 5000)) as lan:
        assert lan.get("/api/me").status_code == 401


def test_bulk_acts_on_exactly_the_previewed_set(app: App, client: TestClient) -> None:
    matched = dead_letters(app, 5, queue="bulk", tags=("x",))
    other = dead_letters(app, 2, queue="bulk", tags=("y",))
    headers = admin(client)
    body = {"table": "dead", "action": "resurrect", "filter": {"queue": "bulk", "tag": "x"}}
    preview = client.post("/api/bulk/preview", json=body, headers=headers).json()
    assert (preview["count"], sorted(preview["ids"]), preview["more"]) == (
        5, sorted(matched), False)
    late = dead_letters(app, 1, queue="bulk", tags=("x",))  # matches the filter, after the preview
    tampered = {**body, "ids": preview["ids"] + late, "snapshot": preview["snapshot"]}
    assert client.post("/api/bulk/apply", json=tampered, headers=headers).status_code == 400
    relabelled = {**body, "filter": {"queue": "bulk"}, "ids": preview["ids"],
                  "snapshot": preview["snapshot"]}  # the audit must record the filter shown
    assert client.post("/api/bulk/apply", json=relabelled, headers=headers).status_code == 400
    odd = client.post("/api/bulk/preview", json={**body, "filter": ["queue"]}, headers=headers)
    assert odd.status_code == 400
    applied = client.post("/api/bulk/apply", headers=headers, json={
        **body, "ids": preview["ids"], "snapshot": preview["snapshot"]}).json()
    assert (applied["requested"], applied["affected"], sorted(applied["ids"])) == (
        5, 5, sorted(matched))
    live = {j.id for j in app.list_jobs("live", queue="bulk")}
    assert live == set(matched)
    assert {j.id for j in app.list_jobs("dead", queue="bulk")} == set(other + late)
    [entry] = _dashboard_audit(app)
    assert (entry.action, entry.affected) == ("bulk resurrect", 5)
    assert sorted(entry.detail["ids"]) == sorted(matched)
    assert entry.detail["filter"] == {"queue": "bulk", "tag": "x"}
    again = client.post("/api/bulk/apply", headers=headers, json={
        **body, "ids": preview["ids"], "snapshot": preview["snapshot"]}).json()
    assert again["affected"] == 0  # they are no longer dead letters: nothing else changes


def test_resurrect_refused_when_another_job_holds_the_key(app: App, client: TestClient) -> None:
    """A dead letter whose idempotency key a newer job holds is not resurrected: one action
    answers 409 naming the holder; a bulk resurrect moves the others and reports it."""
    [keyed] = dead_letters(app, 1, queue="bulk", idempotency_key="i", unique="active")
    plain = dead_letters(app, 1, queue="bulk")
    holder = app.enqueue("t", {"n": 9}, queue="bulk", idempotency_key="i", unique="active")
    headers = admin(client)
    one = client.post(f"/api/jobs/{keyed}/resurrect", json={}, headers=headers)
    assert one.status_code == 409 and f"held by job {holder}" in one.json()["error"]
    body = {"table": "dead", "action": "resurrect", "filter": {"queue": "bulk"}}
    preview = client.post("/api/bulk/preview", json=body, headers=headers).json()
    applied = client.post("/api/bulk/apply", headers=headers, json={
        **body, "ids": preview["ids"], "snapshot": preview["snapshot"]}).json()
    assert (applied["requested"], applied["affected"], applied["ids"]) == (2, 1, plain)
    assert [(r["id"], r["key"], r["holder_id"]) for r in applied["refused"]] == [
        (keyed, "i", holder)]
    assert [j.id for j in app.list_jobs("dead", queue="bulk")] == [keyed]
    entry = _dashboard_audit(app)[0]
    assert [r["id"] for r in entry.detail["refused"]] == [keyed]


def test_bulk_purge_cancel_and_run_now(app: App, client: TestClient) -> None:
    headers = admin(client)
    dead = dead_letters(app, 3, queue="p")

    def run(table: str, action: str, flt: dict[str, str]) -> dict[str, Any]:
        body = {"table": table, "action": action, "filter": flt}
        preview = client.post("/api/bulk/preview", json=body, headers=headers).json()
        return client.post("/api/bulk/apply", headers=headers, json={
            **body, "ids": preview["ids"], "snapshot": preview["snapshot"]}).json()

    assert run("dead", "purge", {"queue": "p"})["affected"] == 3
    assert app.list_jobs("dead", queue="p") == [] and all(
        _missing(app, i) for i in dead)
    waiting = [app.enqueue("t", queue="c", delay=3600) for _ in range(2)]
    assert sorted(run("live", "run_now", {"queue": "c"})["ids"]) == sorted(waiting)
    assert all(j.run_at is not None and j.run_at <= app.backend.now()
               for j in app.list_jobs("live", queue="c"))
    assert run("live", "cancel", {"queue": "c"})["affected"] == 2
    assert {j.id for j in app.list_jobs("dead", queue="c")} == set(waiting)
    wrong = client.post("/api/bulk/preview", json={"table": "live", "action": "purge"},
                        headers=headers)
    assert wrong.status_code == 400


def _missing(app: App, job_id: int) -> bool:
    from claimq.errors import JobNotFound

    try:
        app.get_job(job_id)
    except JobNotFound:
        return True
    return False


def test_job_browser_filters_and_pages_by_keyset(app: App, client: TestClient) -> None:
    ids = [app.enqueue("t" if i % 2 else "u", {"i": i, "word": "needle" if i < 3 else "hay"},
                       queue="b") for i in range(7)]

    def get(**params: Any) -> dict[str, Any]:
        response = client.get("/api/jobs", params=params, headers=bearer(READ))
        assert response.status_code == 200, response.text
        return response.json()

    first = get(table="live", queue="b", limit=3)
    assert [j["id"] for j in first["jobs"]] == ids[::-1][:3] and first["next"] == ids[4]
    second = get(table="live", queue="b", limit=3, before=first["next"])
    third = get(table="live", queue="b", limit=3, before=second["next"])
    assert [j["id"] for j in second["jobs"] + third["jobs"]] == ids[::-1][3:]
    assert third["next"] is None
    assert [j["id"] for j in get(table="live", text="NEEDLE")["jobs"]] == ids[:3][::-1]
    assert [j["id"] for j in get(table="live", task="t", status="pending")["jobs"]] == ids[
        1::2][::-1]
    bad = client.get("/api/jobs", params={"table": "dead", "status": "nope"},
                     headers=bearer(READ))
    assert bad.status_code == 400


def test_a_script_payload_is_data_never_markup(app: App, client: TestClient) -> None:
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    job_id = app.enqueue("t", {"html": hostile}, queue="x", tags=("<b>t</b>",))
    response = client.get(f"/api/jobs/{job_id}", headers=bearer(READ))
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.json()["payload"] == {"html": hostile}
    assert "script-src 'self'" in client.get("/").headers["content-security-policy"]
    script = client.get("/static/app.js").text
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "document.write" not in script


def test_metrics_and_workers_come_from_claimq(db_url: str) -> None:
    plain = App(db_url)
    plain.migrate()
    try:
        plain.configure_queue("q")
        with TestClient(create_app(plain, read_token=READ)) as c:
            # claimq.metrics (the metrics extra, in dev): app.stats() as Prometheus text
            from prometheus_client.parser import text_string_to_metric_families

            scraped = c.get("/metrics", headers=bearer(READ))
            assert scraped.status_code == 200
            samples = {(s.name, tuple(s.labels.items())): s.value
                       for f in text_string_to_metric_families(scraped.text) for s in f.samples}
            assert samples[("claimq_stats_up", ())] == 1
            assert samples[("claimq_queue_pending", (("queue", "q"),))] == 0
            assert c.get("/api/overview", headers=bearer(READ)).json()["workers"] == []
            # the worker registry (app.workers()), as a real worker writes it
            from claimq.backends.base import WorkerRecord

            plain.backend.register_worker(WorkerRecord("h:1:a", "h", 1, ("q",), 4, "9"))
            (row,) = c.get("/api/overview", headers=bearer(READ)).json()["workers"]
            assert (row["id"], row["host"], row["queues"], row["alive"]) == (
                "h:1:a", "h", ["q"], True)
    finally:
        plain.close()


def test_mounted_under_a_path_of_another_app(app: App) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    app.configure_queue("m")
    outer = Starlette(routes=[Mount("/ops/claimq", app=create_app(app, admin_token=ADMIN))])
    with TestClient(outer) as c:
        assert c.get("/ops/claimq", follow_redirects=False).status_code in (307, 308)
        assert "static/app.js" in c.get("/ops/claimq/").text
        assert c.get("/ops/claimq/static/chart.min.js").status_code == 200
        signed = c.post("/ops/claimq/api/login", json={"token": ADMIN})
        assert "path=/ops/claimq/" in signed.headers["set-cookie"].lower()
        assert c.get("/ops/claimq/api/me").json()["role"] == "admin"
        paused = c.post("/ops/claimq/api/queues/m", json={"action": "pause"},
                        headers={"x-claimq-csrf": signed.json()["csrf"]})
        assert paused.json()["state"] == "paused"


def test_a_waiting_job_runs_now_and_a_finished_one_is_left(app: App, client: TestClient) -> None:
    waiting = app.enqueue("t", queue="w", delay=3600)
    headers = admin(client)
    assert client.post(f"/api/jobs/{waiting}/run_now", headers=headers).json()["affected"] == 1
    assert app.find_jobs("live", queue="w")[0].run_at <= app.backend.now()
    again = client.post(f"/api/jobs/{waiting}/run_now", headers=headers).json()
    assert again["affected"] == 0
    assert client.post("/api/jobs/987654/cancel", headers=headers).status_code == 404
    entries = _dashboard_audit(app)
    assert [(e.action, e.affected) for e in entries] == [("run_now", 0), ("run_now", 1)]


def test_the_inspector_shows_history_timings_and_worker(app: App, client: TestClient) -> None:
    job_id = app.enqueue("t", {"n": 1}, queue="i", max_attempts=2)
    [job] = app.claim("inspector-worker", ["i"], start=True)
    assert app.fail(job, RuntimeError("first try"), retry=RetryPolicy(base=0, jitter=0)) == (
        "retried")
    [job] = app.claim("inspector-worker", ["i"], start=True)
    app.complete(job, {"done": True})
    detail = client.get(f"/api/jobs/{job_id}", headers=bearer(READ)).json()
    assert (detail["status"], detail["result"], detail["worker_id"]) == (
        "succeeded", {"done": True}, "inspector-worker")
    [error] = detail["errors"]
    assert (error["error"], error["message"], error["attempt"]) == ("RuntimeError", "first try", 1)
    assert "traceback" in error and "claim_token" not in detail
    assert set(detail["timings"]) == {"waited", "ran", "total"}
    assert all(v is not None and v >= 0 for v in detail["timings"].values())


def test_the_page_explains_queue_switches_and_asks_a_limit_in_a_form(
    app: App, client: TestClient
) -> None:
    """Issue 28: Pause vs Deactivate explained; "Limit…" an in-page form (no native prompt(),
    no inline script under the CSP), which sets the limit through the CSRF-checked API."""
    page = client.get("/").text
    help_line = page[page.index('id="queue-help"'):]
    help_line = help_line[:help_line.index("</p>")]
    assert "Pause" in help_line and "Deactivate" in help_line and "separate switch" in help_line
    assert 'id="limit-form"' in page and 'id="limit-value"' in page
    assert all(' src="' in tag for tag in page.split("<script")[1:])  # no inline script
    assert "prompt(" not in client.get("/static/app.js").text
    app.configure_queue("q")
    body = {"action": "max_workers", "max_workers": 3}
    assert client.post("/api/queues/q", json=body, headers=bearer(ADMIN)).status_code == 403
    assert app.queues()[0].max_workers is None
    assert client.post("/api/queues/q", json=body, headers=admin(client)).status_code == 200
    assert app.queues()[0].max_workers == 3


def test_times_reach_the_page_with_their_zone(app: App, client: TestClient) -> None:
    """The page shows every time in UTC ("… UTC"): it can because the API's carry an offset."""
    job_id = app.enqueue("t", {"n": 1}, queue="z")
    detail = client.get(f"/api/jobs/{job_id}", headers=bearer(READ)).json()
    created = datetime.fromisoformat(detail["created_at"])
    assert created.utcoffset() is not None
    assert created == app.get_job(job_id).created_at


def test_jobs_are_listed_and_counted_by_state(app: App, client: TestClient) -> None:
    """Running, due, scheduled, retrying, held, dead, succeeded: a retrying or delayed job is
    not listed (or counted) as due like a new one."""
    due = app.enqueue("t", {"n": 1}, queue="s")
    scheduled = app.enqueue("t", {"n": 2}, queue="s", delay=3600)
    retrying = app.enqueue("t", {"n": 3}, queue="r")
    [job] = app.claim("state-worker", ["r"], start=True)
    assert app.fail(job, RuntimeError("later"), retry=RetryPolicy(base=3600, jitter=0)) == (
        "retried")
    retried_due = app.enqueue("t", {"n": 4}, queue="r")  # retried at once: due again
    [job] = app.claim("state-worker", ["r"], start=True)
    assert app.fail(job, RuntimeError("now"), retry=RetryPolicy(base=0, jitter=0)) == "retried"
    running = app.enqueue("t", {"n": 5}, queue="g")
    [claimed] = app.claim("state-worker", ["g"], start=True)
    assert app.backend.set_progress(Owned(claimed.id, claimed.claim_token or ""), 0.25, "a quarter")
    flow = Workflow("states")
    first = flow.add("t", {"n": 6}, queue="h", delay=3600)
    flow.add("t", {"n": 7}, queue="h", after=[first])
    handle = app.enqueue_workflow(flow)
    held = handle.job_ids[1]
    succeeded = app.enqueue("t", {"n": 8}, queue="d")
    [job] = app.claim("state-worker", ["d"], start=True)
    app.complete(job, None)
    dead = dead_letters(app, 1, queue="d")

    def listed(state: str) -> list[int]:
        response = client.get("/api/jobs", params={"table": "live", "state": state},
                              headers=bearer(READ))
        assert response.status_code == 200, response.text
        return [j["id"] for j in response.json()["jobs"]]

    assert listed("due") == [retried_due, due]
    assert listed("scheduled") == [handle.job_ids[0], scheduled]
    assert listed("retrying") == [retrying]
    assert listed("running") == [running]
    assert listed("held") == [held]
    states = client.get("/api/overview", headers=bearer(READ)).json()["states"]
    assert states == {"running": 1, "due": 2, "limited": 0, "scheduled": 2, "retrying": 1,
                      "held": 1, "dead": 1, "succeeded": 1}
    [row] = client.get("/api/jobs", params={"table": "live", "state": "retrying"},
                       headers=bearer(READ)).json()["jobs"]
    assert (row["attempts"], row["last_error"]) == (1, "RuntimeError: later")
    assert 0 < -row["elapsed"] <= 3600  # its next try is ahead, within the hour
    [row] = client.get("/api/jobs", params={"table": "live", "state": "running"},
                       headers=bearer(READ)).json()["jobs"]
    assert (row["worker_id"], row["progress"]) == (
        "state-worker", {"fraction": 0.25, "note": "a quarter"})
    assert row["elapsed"] >= 0
    # the state narrows the other filters, and a bulk action previews what the list shows
    assert [j["id"] for j in client.get("/api/jobs", params={"table": "live", "state": "due",
            "queue": "s"}, headers=bearer(READ)).json()["jobs"]] == [due]
    preview = client.post("/api/bulk/preview", headers=admin(client), json={
        "table": "live", "action": "run_now", "filter": {"state": "retrying"}}).json()
    assert preview["ids"] == [retrying]
    for params in ({"table": "dead", "state": "due"}, {"table": "live", "state": "pending"}):
        bad = client.get("/api/jobs", params=params, headers=bearer(READ))
        assert bad.status_code == 400 and "state" in bad.json()["error"]
    assert {j.id for j in app.find_jobs("archive")} == {succeeded}
    assert [j.id for j in app.find_jobs("dead")] == dead
