"""Least-privilege PostgreSQL roles (`claimq grant ROLE --as KIND`), with real roles: a producer
enqueues and can do nothing else, a real `claimq worker` process runs jobs as the worker role,
the dashboard's read-only mode runs as the reader role, which cannot change a job, and its admin
mode acts as the admin role."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgroles import CLAIMQ, Roles, least_privilege
from polling import wait_until
from starlette.testclient import TestClient

from claimq import App
from claimq.dashboard import create_app
from claimq.errors import DatabaseError, InvalidInput, PermissionDenied

pytestmark = pytest.mark.postgres
HERE = Path(__file__).parent
KINDS = ("reader", "producer", "worker", "admin")
TOKEN = "roles-token-0123456789"


class Setup:
    def __init__(self, roles: Roles) -> None:
        self.roles = roles
        self.owner_url = roles.owner_url
        self.apps: list[App] = []

    def url(self, kind: str) -> str:
        return self.roles.url(kind)

    def app(self, kind: str) -> App:
        self.apps.append(App(self.url(kind)))
        return self.apps[-1]


@pytest.fixture
def setup(pg_base_url: str) -> Iterator[Setup]:
    with least_privilege(pg_base_url, {kind: [kind] for kind in KINDS}) as roles:
        s = Setup(roles)
        yield s
        for app in s.apps:
            app.close()


def refused(call: object, *args: object, **kwargs: object) -> None:
    with pytest.raises(DatabaseError, match="permission denied"):
        call(*args, **kwargs)  # type: ignore[operator]


def assert_pruner_stops_itself(app: App, caplog: pytest.LogCaptureFixture) -> None:
    from claimq._worker import pruner as pruner_module
    from claimq._worker.inflight import Counters

    async def run() -> None:
        service = pruner_module.Pruner(app, None, Counters(), stopping=asyncio.Event())  # type: ignore[arg-type]
        await asyncio.wait_for(service.run(), 30)

    old = pruner_module.PRUNE_EVERY
    pruner_module.PRUNE_EVERY = 0.0
    try:
        with caplog.at_level(logging.WARNING, "claimq.worker"):
            asyncio.run(run())
    finally:
        pruner_module.PRUNE_EVERY = old
    assert any("retention.off" in r.getMessage() for r in caplog.records), caplog.text


def test_each_role_can_do_its_part_and_nothing_more(setup: Setup, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    producer, reader, admin = setup.app("producer"), setup.app("reader"), setup.app("admin")
    ids = [producer.enqueue("ok", {"n": n}, queue="roles") for n in (1, 2, 3)]
    ids += producer.enqueue_many([{"task": "ok", "payload": {"n": 0}, "queue": "roles"},
                                  {"task": "ok", "payload": {"n": -1}, "queue": "roles"},
                                  {"task": "ok", "payload": {"n": 4, "fail_first": True},
                                   "queue": "roles"}])
    # flow control too: a concurrency key marks the queue keyed, and a debounce updates the
    # pending holder (the worker role then claims the keyed queue by claim_flow.sql)
    keyed = producer.enqueue("ok", {"n": 5}, queue="roles", idempotency_key="k-1",
                             concurrency_key="c", concurrency_limit=1)
    assert producer.enqueue("ok", {"n": 5}, queue="roles", idempotency_key="k-1") == keyed
    assert producer.enqueue("ok", {"n": 5}, queue="roles", idempotency_key="k-1",
                            on_conflict="replace", delay=0) == keyed
    assert [q.keyed for q in reader.queues() if q.name == "roles"] == [True]
    refused(producer.claim, "thief", ["roles"], 1)
    refused(producer.cancel, ids[0])
    refused(producer.purge, "dead")
    refused(reader.enqueue, "ok", {"n": 9}, queue="roles")
    refused(reader.cancel, ids[0])
    refused(reader.pause, "roles")
    refused(reader.claim, "thief", ["roles"], 1)

    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAIMQ_")}
    env.update({"CLAIMQ_DATABASE_URL": setup.url("worker"), "PYTHONPATH": str(HERE)})
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [CLAIMQ, "worker", "roles_app:app", "--queues", "roles", "--concurrency", "4",
             "--poll-interval", "0.1", "--grace", "2"], env=env, cwd=HERE,
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            def drained() -> bool:
                assert worker.poll() is None, log.read_text()
                return not reader.list_jobs("live") and len(
                    reader.list_jobs("archive")) + len(reader.list_jobs("dead")) == 8
            wait_until(drained, 60, "the worker role to run every job")
            # the worker role keeps its registry row; the reader reads it and the stats
            (row,) = wait_until(reader.workers, 30, "the worker's registry row")
            assert row.alive and row.queues == ("roles",) and row.concurrency == 4
            roles_stats = reader.stats().queue("roles")
            assert roles_stats is not None and roles_stats.dead_by_reason == {
                "permanent_error": 1}
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(30)
    text = log.read_text()
    assert "permission denied" not in text, text
    [dead] = reader.list_jobs("dead")
    assert dead.id == ids[4] and dead.reason == "permanent_error"
    assert reader.get_job(ids[5]).attempts == 2  # retried once, as the worker role
    refused(setup.app("worker").purge, "dead")
    refused(setup.app("worker").resurrect, dead.id)
    # Retention needs DELETE on finished jobs: an operator's right. A worker's pruner says so
    # once and stops (it neither fails the worker nor restarts forever).
    with pytest.raises(PermissionDenied):
        setup.app("worker").prune()
    assert admin.prune() is not None
    assert_pruner_stops_itself(setup.app("worker"), caplog)

    # The dashboard: read-only as the reader role, acting as the admin role.
    with TestClient(create_app(reader, read_token=TOKEN)) as c:
        headers = {"authorization": f"Bearer {TOKEN}"}
        assert c.get("/api/overview", headers=headers).json()["queues"][0]["name"] == "roles"
        assert len(c.get("/api/jobs", params={"table": "archive"},
                         headers=headers).json()["jobs"]) == 7
        assert c.get(f"/api/jobs/{dead.id}", headers=headers).json()["reason"] == (
            "permanent_error")
    with TestClient(create_app(admin, admin_token=TOKEN)) as c:
        headers = {"authorization": f"Bearer {TOKEN}"}
        headers["x-claimq-csrf"] = c.get("/api/me", headers=headers).json()["csrf"]
        assert c.post("/api/queues/roles", json={"action": "pause"},
                      headers=headers).status_code == 200
        body = {"table": "archive", "action": "purge", "filter": {"queue": "roles"}}
        preview = c.post("/api/bulk/preview", json=body, headers=headers).json()
        applied = c.post("/api/bulk/apply", headers=headers, json={
            **body, "ids": preview["ids"], "snapshot": preview["snapshot"]}).json()
        assert applied["affected"] == 7
        assert c.post(f"/api/jobs/{dead.id}/resurrect", json={"payload": {"n": 6}},
                      headers=headers).status_code == 200
    assert [e.action for e in reader.backend.list_audit(None, 10)] == [
        "resurrect", "bulk purge", "pause", "prune"]  # the operator's prune() above, too
    refused(reader.backend.record_audit, "reader", "forged", "-", "{}", 0)


def test_sqlite_has_no_roles(tmp_path: Path) -> None:
    with App(f"sqlite:///{tmp_path}/x.db") as app:
        app.migrate()
        with pytest.raises(InvalidInput, match="no database roles"):
            app.grant("anyone", "reader")
        with pytest.raises(InvalidInput, match="kind"):
            app.grant("anyone", "superuser")  # type: ignore[arg-type]


def test_the_admin_role_is_named_in_the_audit_and_a_role_without_it_still_acts(
        setup: Setup, caplog: pytest.LogCaptureFixture) -> None:
    """The database user the App acts as is the audit's `db user`; a worker role, which may
    cancel but not write the audit table, cancels all the same and a warning says the action
    went unrecorded."""
    admin = setup.app("admin")
    admin.configure_queue("audited")
    (entry,) = [e for e in admin.backend.list_audit(None, 10) if e.target == "queue audited"]
    admin_user = setup.url("admin").split("://")[1].split("@")[0].split(":")[0]
    assert entry.detail["by"]["db_user"] == admin_user
    assert entry.actor.endswith(f", db user {admin_user}")
    job_id = admin.enqueue("t", queue="audited")
    worker = setup.app("worker")
    with caplog.at_level(logging.WARNING, logger="claimq.audit"):
        assert worker.cancel(job_id) == "cancelled"
    assert "audit.refused: cancel on job" in caplog.text
    assert [e.target for e in admin.backend.list_audit(None, 10)] == ["queue audited"]
