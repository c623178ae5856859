"""The dashboard's views of what the CLI shows (issue 28, item 2) over HTTP, on a real SQLite
file, PostgreSQL and MariaDB: schedules with pause, resume and run-now (admin, same-origin,
audited); workers with their queues, state and current jobs; flow control per queue; wait and
run latency per queue and task over a window (on a FakeClock, so every figure is exact); the
retention policies."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from polling import wait_until
from starlette.testclient import TestClient
from test_dashboard_http import ADMIN, READ, _dashboard_audit, admin, bearer, client

from claimq import App, Permanent, Retry, Throttled
from claimq.backends.base import WorkerRecord
from claimq.clock import FakeClock
from claimq.dashboard import create_app

__all__ = ["client"]  # the fixture, shared with test_dashboard_http


def test_schedules_are_listed_as_the_cli_lists_them(app: App, client: TestClient) -> None:
    assert client.get("/api/schedules").status_code == 401
    assert client.get("/api/schedules", headers=bearer(READ)).json() == {"schedules": []}
    app.schedules.add("often", "t", every=90, queue="q")
    app.schedules.add("nightly", "t", cron="0 3 * * *", tz="Europe/Lisbon", paused=True)
    rows = {s["name"]: s for s in
            client.get("/api/schedules", headers=bearer(READ)).json()["schedules"]}
    assert set(rows) == {"often", "nightly"}
    often, nightly = rows["often"], rows["nightly"]
    assert (often["task"], often["queue"], often["every"], often["cron"], often["paused"]) == (
        "t", "q", 90, None, False)
    assert (nightly["cron"], nightly["tz"], nightly["paused"]) == ("0 3 * * *", "Europe/Lisbon",
                                                                   True)
    stored = app.schedules.get("often")
    assert often["next_run_at"] == stored.next_run_at.isoformat()
    assert (often["last_run_at"], often["last_job_id"]) == (None, None)
    assert "payload" not in often


def test_a_tick_shows_as_the_last_run_and_job(app: App, client: TestClient) -> None:
    app.schedules.add("tick", "t", every=1)
    # its first tick falls due within a second: a scheduler pass then enqueues its job
    fired = wait_until(lambda: app.schedules.fire_due().get("tick"), 10, "the first tick")
    (row,) = client.get("/api/schedules", headers=bearer(READ)).json()["schedules"]
    assert row["last_job_id"] == fired[-1]
    assert row["last_run_at"] is not None


def test_pause_resume_and_run_now_are_the_admins_and_audited(app: App,
                                                              client: TestClient) -> None:
    app.schedules.add("often", "t", every=60, queue="q")
    csrf = client.get("/api/me", headers=bearer(READ)).json()["csrf"]
    for action in ("pause", "resume", "run_now"):
        refused = client.post(f"/api/schedules/often/{action}",
                              headers={**bearer(READ), "x-claimq-csrf": csrf})
        assert refused.status_code == 403
        no_csrf = client.post(f"/api/schedules/often/{action}", headers=bearer("x" * 21))
        assert no_csrf.status_code == 401
        cross = client.post(f"/api/schedules/often/{action}",
                            headers={**admin(client), "sec-fetch-site": "cross-site"})
        assert cross.status_code == 403
    assert app.schedules.get("often").paused is False
    assert app.find_jobs("live") == []
    headers = admin(client)
    paused = client.post("/api/schedules/often/pause", headers=headers).json()
    assert (paused["outcome"], paused["schedule"]["paused"]) == ("paused", True)
    assert app.schedules.get("often").paused is True
    resumed = client.post("/api/schedules/often/resume", headers=headers).json()
    assert (resumed["outcome"], resumed["schedule"]["paused"]) == ("resumed", False)
    assert app.schedules.get("often").paused is False
    ran = client.post("/api/schedules/often/run_now", headers=headers).json()
    (job,) = app.find_jobs("live")
    assert ran["job"] == job.id and ran["outcome"] == f"enqueued job {job.id}"
    assert (job.task, job.queue) == ("t", "q")
    entries = _dashboard_audit(app)
    assert [(e.action, e.target, e.affected) for e in entries] == [
        ("schedule run_now", "schedule often", 1), ("schedule resume", "schedule often", 1),
        ("schedule pause", "schedule often", 1)]
    assert entries[0].detail["job"] == job.id
    assert {e.detail["by"]["role"] for e in entries} == {"admin"}


@pytest.mark.parametrize(("name", "action", "status", "error"), [
    ("missing", "pause", 404, "no schedule 'missing'"),
    ("missing", "run_now", 404, "no schedule 'missing'"),
    ("often", "remove", 400, "action must be pause, resume or run_now")])
def test_a_schedule_action_that_cannot_be_done_changes_nothing(
        app: App, client: TestClient, name: str, action: str, status: int, error: str) -> None:
    app.schedules.add("often", "t", every=60)
    response = client.post(f"/api/schedules/{name}/{action}", headers=admin(client))
    assert response.status_code == status
    assert response.json()["error"] == error
    assert [s.name for s in app.schedules.list()] == ["often"]
    assert app.find_jobs("live") == []
    assert _dashboard_audit(app) == []


def test_workers_show_their_state_queues_and_current_jobs(app: App, client: TestClient) -> None:
    assert client.get("/api/workers").status_code == 401
    assert client.get("/api/workers", headers=bearer(READ)).json()["workers"] == []
    app.backend.register_worker(WorkerRecord("h:3:gone", "h", 3, ("q",), 2, "9"))
    wait_until(lambda: app.backend.prune_workers(0.05, 3600)[0], 10, "the reaper's mark")
    app.backend.register_worker(WorkerRecord("h:1:a", "h", 1, ("q", "r"), 4, "9"))
    app.backend.register_worker(WorkerRecord("h:2:b", "h", 2, None, 8, "9"))
    ids = [app.enqueue("t", {"n": i}, queue="q") for i in range(3)]
    claimed = app.backend.claim("h:1:a", ["q"], 2, 30.0, start=True)
    assert len(claimed) == 2
    data = client.get("/api/workers", headers=bearer(READ)).json()
    rows = {w["id"]: w for w in data["workers"]}
    assert {k: (w["state"], w["queues"]) for k, w in rows.items()} == {
        "h:1:a": ("alive", ["q", "r"]), "h:2:b": ("alive", None), "h:3:gone": ("dead", ["q"])}
    a = rows["h:1:a"]
    assert sorted(j["id"] for j in a["jobs"]) == sorted(j.id for j in claimed)
    assert {(j["task"], j["queue"]) for j in a["jobs"]} == {("t", "q")}
    assert all(isinstance(j["elapsed"], float) and j["elapsed"] >= 0 for j in a["jobs"])
    assert rows["h:2:b"]["jobs"] == [] and rows["h:3:gone"]["jobs"] == []
    assert isinstance(a["up_for"], float) and rows["h:3:gone"]["up_for"] is None
    assert (data["unlisted"], data["truncated"]) == ([], False)
    assert set(ids) - {j.id for j in claimed}  # the unclaimed job is nobody's
    # a worker pruned from the registry while its jobs run: they are listed apart
    app.backend.unregister_worker("h:1:a")
    data = client.get("/api/workers", headers=bearer(READ)).json()
    assert sorted(j["id"] for j in data["unlisted"]) == sorted(j.id for j in claimed)
    # the overview's workers say their state too
    overview = client.get("/api/overview", headers=bearer(READ)).json()["workers"]
    assert {w["id"]: w["state"] for w in overview} == {"h:2:b": "alive", "h:3:gone": "dead"}


def test_flow_control_shows_limits_throttles_and_breakers(app: App, client: TestClient) -> None:
    assert client.get("/api/flow").status_code == 401
    app.configure_queue("api", max_workers=3, rate_limit="10/s", rate_burst=20,
                        key_rate_limit="2/m", aging=30, aging_cap=5)
    app.configure_queue("plain")
    app.configure_breaker("call", failures=1, window=60, cooldown=120, queue="api")
    app.configure_breaker("other", failures=4, queue="api")
    # a job with a rate key throttled: that key pauses; a job without one: the whole queue
    app.enqueue("call", {"n": 1}, queue="api", rate_key="c:a")
    app.enqueue("call", {"n": 2}, queue="plain")
    for queue in ("api", "plain"):
        (job,) = app.claim("w", [queue], limit=1, start=True)
        assert app.fail(job, Throttled(after=300), attempt=1) == "retried"
    # a failure of `call` opens its breaker in api
    app.enqueue("call", {"n": 3}, queue="api")
    before = client.get("/api/flow", headers=bearer(READ)).json()
    assert before["flow_control"] is True
    queues = {q["name"]: q for q in before["queues"]}
    api, plain = queues["api"], queues["plain"]
    assert (api["max_workers"], api["rate_limit"]["count"], api["rate_limit"]["period"],
            api["rate_limit"]["burst"]) == (3, 10, 1, 20)
    assert api["rate_limit"]["text"] == "10/s (burst 20)"
    assert api["key_rate_limit"]["text"] == "2/60s"
    assert api["aging"] == {"step": 30, "cap": 5}
    assert api["throttled_until"] is None and plain["throttled_until"] is not None
    assert (plain["rate_limit"], plain["key_rate_limit"], plain["aging"]) == (None, None, None)
    (key,) = before["throttled_keys"]
    assert (key["queue"], key["key"]) == ("api", "c:a")
    assert key["until"] == app.throttled_keys()[0].until.isoformat()
    breakers = {b["task"]: b for b in before["breakers"]}
    assert {t: (b["state"], b["failure_limit"]) for t, b in breakers.items()} == {
        "call": ("closed", 1), "other": ("closed", 4)}
    opened = [j for j in app.claim("w", ["api"], limit=5, start=True) if j.payload["n"] == 3]
    app.fail(opened[0], RuntimeError("down"), attempt=1)
    after = client.get("/api/flow", headers=bearer(READ)).json()
    call = next(b for b in after["breakers"] if b["task"] == "call")
    assert (call["state"], call["failures"], call["cooldown"]) == ("open", 1, 120)
    stored = next(b for b in app.breakers() if b.task == "call")
    assert stored.open_until is not None and call["open_until"] == stored.open_until.isoformat()


def test_limited_jobs_are_listed_counted_and_grouped_by_key(
    clocked: tuple[App, FakeClock, TestClient],
) -> None:
    """Due jobs that flow control holds back are "limited", not "due": on the state bar, in
    their own list (why each waits, its key) and per key on the Flow control tab."""
    app, clock, client = clocked
    for n in range(3):  # account a: one at a time
        app.enqueue("charge", {"n": n}, queue="billing", concurrency_key="acct:a",
                    concurrency_limit=1)
    (charging,) = app.claim("w", ["billing"], limit=1, start=True)
    app.enqueue("call", {"n": 1}, queue="api", rate_key="c:<b>")  # a hostile key
    (called,) = app.claim("w", ["api"], limit=1, start=True)
    assert app.fail(called, Throttled(after=60), attempt=1) == "retried"
    throttled = app.enqueue("call", {"n": 2}, queue="api", rate_key="c:<b>")
    free = app.enqueue("call", {"n": 3}, queue="api", rate_key="c:d")
    states = client.get("/api/overview", headers=bearer(READ)).json()["states"]
    assert (states["limited"], states["due"], states["running"], states["retrying"]) == (
        3, 1, 1, 1)

    def listed(state: str) -> list[dict[str, object]]:
        response = client.get("/api/jobs", params={"table": "live", "state": state},
                              headers=bearer(READ))
        assert response.status_code == 200, response.text
        jobs: list[dict[str, object]] = response.json()["jobs"]
        return jobs

    assert [(j["id"], j["limit_reason"], j["limit_key"]) for j in listed("limited")] == [
        (throttled, "rate_key", "c:<b>"),
        *((j.id, "concurrency", "acct:a") for j in app.find_jobs(queue="billing",
                                                                  status="pending"))]
    assert [j["id"] for j in listed("due")] == [free]
    assert [j["id"] for j in client.get("/api/jobs", params={
        "table": "live", "state": "limited", "queue": "api"},
        headers=bearer(READ)).json()["jobs"]] == [throttled]
    flow = client.get("/api/flow", headers=bearer(READ)).json()
    until = (clock.now() + timedelta(seconds=60)).isoformat()
    assert flow["limited"] == [
        {"queue": "billing", "reason": "concurrency", "key": "acct:a", "waiting": 2,
         "running": 1, "limit": 1, "until": None},
        {"queue": "api", "reason": "rate_key", "key": "c:<b>", "waiting": 1, "running": 0,
         "limit": None, "until": until}]
    app.complete(charging, None)
    clock.advance(60)  # the key's throttle ends: its retry and its job are due
    assert listed("limited") == []
    assert client.get("/api/flow", headers=bearer(READ)).json()["limited"] == []
    states = client.get("/api/overview", headers=bearer(READ)).json()["states"]
    assert (states["limited"], states["due"]) == (0, 5)


@pytest.fixture
def clocked(db_url: str) -> Iterator[tuple[App, FakeClock, TestClient]]:
    """An App on a FakeClock (so waits and runs are exact) and a dashboard on it."""
    clock = FakeClock(start=datetime.now(UTC))
    instance = App(db_url, clock=clock)
    instance.migrate()
    with TestClient(create_app(instance, read_token=READ, admin_token=ADMIN)) as c:
        yield instance, clock, c
    instance.close()


def _run(app: App, clock: FakeClock, queue: str, task: str, wait: float, run: float) -> None:
    """One job that waits `wait` seconds, then runs `run` seconds and completes."""
    job_id = app.enqueue(task, {}, queue=queue)
    clock.advance(wait)
    (job,) = app.claim("w", [queue], limit=1, start=True)
    assert job.id == job_id
    clock.advance(run)
    app.complete(job)


def test_latency_per_queue_and_task_over_the_window_chosen(
        clocked: tuple[App, FakeClock, TestClient]) -> None:
    app, clock, client = clocked
    assert client.get("/api/latency").status_code == 401
    empty = client.get("/api/latency", headers=bearer(READ)).json()
    assert (empty["window"], empty["queues"], empty["tasks"]) == (300, [], [])
    # two hours ago: a job that waited 100 s and ran 50 s (only a 24 h window sees it)
    _run(app, clock, "mail", "send", 100, 50)
    clock.advance(7200)
    # now: waits 1..10 s, runs half of that; one job retried once, then completed
    for i in range(1, 11):
        _run(app, clock, "mail", "send", float(i), i / 2)
    flaky = app.enqueue("t<b>x", {}, queue="other")
    (job,) = app.claim("w", ["other"], limit=1, start=True)
    app.fail(job, Retry(after=0))
    (job,) = app.claim("w", ["other"], limit=1, start=True)
    assert job.id == flaky
    clock.advance(2)
    app.complete(job)

    recent = client.get("/api/latency", headers=bearer(READ)).json()
    assert recent["window"] == 300 and recent["at"] == clock.now().isoformat()
    send = next(t for t in recent["tasks"] if t["name"] == "send")
    # percentile_cont over 1..10: p50 5.5, p95 9.55, p99 9.91 (runs are half of those)
    assert send["wait"]["count"] == 10
    assert (send["wait"]["p50"], send["wait"]["p95"], send["wait"]["p99"]) == pytest.approx(
        (5.5, 9.55, 9.91))
    assert (send["run"]["p50"], send["run"]["p95"], send["run"]["p99"]) == pytest.approx(
        (2.75, 4.775, 4.955))
    assert send["attempts_per_job"] == 1
    hostile = next(t for t in recent["tasks"] if t["name"] == "t<b>x")
    assert hostile["attempts_per_job"] == 2 and hostile["run"]["p50"] == pytest.approx(2)
    queues = {q["name"]: q for q in recent["queues"]}
    assert set(queues) == {"mail", "other"} and queues["mail"]["wait"]["count"] == 10
    # the same figures as app.stats(), which `claimq stats` prints
    stats = app.stats(window=300).task("send")
    assert stats is not None and send["wait"]["p95"] == stats.wait.p95

    day = client.get("/api/latency?window=86400", headers=bearer(READ)).json()
    mail = next(q for q in day["queues"] if q["name"] == "mail")
    assert day["window"] == 86400 and mail["wait"]["count"] == 11
    assert mail["wait"]["p99"] > send["wait"]["p99"]  # the 100 s wait is in
    for bad in ("0", "86401", "soon"):
        answer = client.get(f"/api/latency?window={bad}", headers=bearer(READ))
        assert answer.status_code == 400 and "window" in answer.json()["error"]


def test_retention_policies_as_the_cli_lists_them(app: App, client: TestClient) -> None:
    assert client.get("/api/retention").status_code == 401
    # none stored: the built-in default (archive 14 days, dead letters 30 days)
    (default,) = client.get("/api/retention", headers=bearer(READ)).json()["policies"]
    assert default == {"queue": "*", "archive_age": 14 * 86400, "archive_rows": None,
                       "dead_age": 30 * 86400, "dead_rows": None}
    app.set_retention(archive_age=3600, dead_rows=1000)
    app.set_retention("mail", archive_rows=50, dead_age=7 * 86400)
    app.set_retention("bulk", archive_age=60)
    policies = client.get("/api/retention", headers=bearer(READ)).json()["policies"]
    assert [p["queue"] for p in policies] == ["*", "bulk", "mail"]
    assert policies[0] == {"queue": "*", "archive_age": 3600, "archive_rows": None,
                           "dead_age": None, "dead_rows": 1000}
    assert policies[2] == {"queue": "mail", "archive_age": None, "archive_rows": 50,
                           "dead_age": 7 * 86400, "dead_rows": None}
    assert policies == [dataclasses.asdict(p) for p in app.retention()]


def test_history_counts_finished_jobs_per_bucket_queue_and_task(
        clocked: tuple[App, FakeClock, TestClient]) -> None:
    app, clock, client = clocked
    assert client.get("/api/history").status_code == 401
    start = clock.now()
    _run(app, clock, "qa", "t<b>1", 5, 5)  # finished 10 s after start: bucket 0
    app.enqueue("t2", {}, queue="qa")
    (job,) = app.claim("w", ["qa"], limit=1, start=True)
    clock.advance(10)
    app.fail(job, Permanent("broken"))  # dead 20 s after start: bucket 0
    _run(app, clock, "qb", "t<b>1", 300, 80)  # finished 400 s after start: bucket 1
    clock.advance(3600 - 400)
    found = client.get("/api/history?hours=1&bucket=5", headers=bearer(READ)).json()
    assert (found["hours"], found["bucket"], found["buckets"]) == (1, 300, 12)
    assert (found["start"], found["now"]) == (start.isoformat(), clock.now().isoformat())
    bar = [0] * 12

    def at(*pairs: tuple[int, int]) -> list[int]:
        counts = list(bar)
        for i, n in pairs:
            counts[i] = n
        return counts

    assert found["queues"] == [
        {"name": "qa", "succeeded": at((0, 1)), "dead": at((0, 1))},
        {"name": "qb", "succeeded": at((1, 1)), "dead": bar}]
    assert found["tasks"] == [
        {"name": "t<b>1", "succeeded": at((0, 1), (1, 1)), "dead": bar},
        {"name": "t2", "succeeded": bar, "dead": at((0, 1))}]
    # an hour later, nothing in the last hour; six hours (the default, 5 min bars) still see it
    clock.advance(3600)
    later = client.get("/api/history?hours=1&bucket=5", headers=bearer(READ)).json()
    assert (later["queues"], later["tasks"]) == ([], [])
    default = client.get("/api/history", headers=bearer(READ)).json()
    assert (default["hours"], default["buckets"]) == (6, 72)
    assert [(q["name"], sum(q["succeeded"]), sum(q["dead"])) for q in default["queues"]] == [
        ("qa", 1, 1), ("qb", 1, 0)]
    # bounded: at most a day, in at most 288 bars
    for query in ("hours=25", "hours=0", "hours=1&bucket=7", "hours=24&bucket=1", "bucket=0"):
        answer = client.get(f"/api/history?{query}", headers=bearer(READ))
        assert answer.status_code == 400, query


def test_history_sums_past_the_twenty_busiest(
        clocked: tuple[App, FakeClock, TestClient]) -> None:
    app, clock, client = clocked
    for n in range(22):
        for _ in range(1 + (n == 0)):
            _run(app, clock, f"q{n:02}", "t", 0, 1)
    found = client.get("/api/history?hours=1&bucket=60", headers=bearer(READ)).json()
    names = [q["name"] for q in found["queues"]]
    assert names[0] == "q00" and len(names) == 21 and names[-1] is None
    assert (found["queues"][-1]["others"], found["queues"][-1]["succeeded"]) == (2, [2])
    assert found["tasks"] == [{"name": "t", "succeeded": [23], "dead": [0]}]
