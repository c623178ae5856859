"""Scenario 4: the response to a completion (or failure) is lost after the database committed it.
The worker must neither lose the outcome nor report it twice: it retries, its guarded write now
matches no row, and it recognises its own earlier write instead of taking it for a lost lease.

- On both backends, a fault hook in the worker process: the first complete/fail write of each job
  commits, then the call raises the backend's transient error (as a dropped connection would).
- On PostgreSQL and MariaDB, a real cut: a TCP proxy between the worker and the server forwards
  the complete statement, lets the server commit it, and closes the connection instead of
  passing the response on (for the completer's own statement, and for the commit of a handler's
  transaction that holds ctx.complete_in()).
"""

from __future__ import annotations

import re
import uuid
from urllib.parse import urlsplit, urlunsplit

import chaos_biz as biz
import pytest
from chaos_harness import ARCHIVE, Expect, check_invariants, drop_schema, wait_finished
from chaos_proxy import CuttingProxy, MySQLCuttingProxy
from dbs import mariadb_database

from claimq import App

pytestmark = pytest.mark.timeout(120)

OPTIONS = {"concurrency": 8, "lease": 2.0, "poll_interval": 0.1, "grace": 2.0}


def test_lost_completion_and_failure_responses(capp: App, spawn, tmp_path) -> None:
    separate = [capp.enqueue("chaos.work", {"n": i, "mode": "separate"}) for i in range(4)]
    flaky = [capp.enqueue("chaos.work", {"n": i, "fail_attempts": 1}) for i in range(2)]
    poison = capp.enqueue("chaos.poison", {}, max_attempts=1)
    worker = spawn(capp.url, env={"CHAOS_LOSE_RESPONSES": "complete,fail"}, **OPTIONS)
    worker.wait_started()
    wait_finished(capp, [*separate, *flaky, poison], timeout=30)
    assert worker.stop() == 0

    lost = re.findall(r"chaos response-lost (\w+) ([\d ]+)", worker.log())
    lost_ids = {(what, int(i)) for what, ids in lost for i in ids.split()}
    # Jobs claimed by a call whose response was lost are lost to this worker as well: it hands
    # them back once it finds them held in its name (no attempt counted), or, when it could not
    # look yet, the reaper gives them back once their lease runs out (that shows in their
    # history). Which of the two happens is a race; both are right.
    orphaned = {i for what, i in lost_ids if what == "claimed"}
    assert {("complete", i) for i in separate} <= lost_ids
    assert {("fail", i) for i in [*flaky, poison] if i not in orphaned} <= lost_ids
    assert any(what == "fail" for what, _ in lost_ids)

    def reaped(job_id: int) -> list[dict[str, object]]:
        return [e for e in capp.get_job(job_id).errors if e["error"] == "LeaseExpired"]

    poison_reaped = bool(reaped(poison))
    expected = dict.fromkeys(separate + flaky, ARCHIVE)
    expected[poison] = Expect("dead", "lease_expired" if poison_reaped else "retries_exhausted")
    check_invariants(capp, expected)
    reaped_ids = set()
    for job_id in expected:
        job = capp.get_job(job_id)
        attempts = [e["attempt"] for e in job.errors]
        assert len(attempts) == len(set(attempts)), f"an outcome was written twice: {job.errors}"
        lapsed = reaped(job_id)
        assert not lapsed or job_id in orphaned, (job_id, orphaned, job.errors)
        reaped_ids |= {job_id} if lapsed else set()
        others = [e["error"] for e in job.errors if e["error"] != "LeaseExpired"]
        if job_id in separate:
            assert others == []  # the completion was neither lost nor repeated
            assert job.attempts == 1 + len(lapsed)
        elif job_id in flaky:
            # Its one failure, unless a lapsed lease took the attempt that would have failed.
            assert others == ["RuntimeError"] or (lapsed and others == []), job.errors
        else:
            assert len(job.errors) == 1

    counters = worker.counters()
    # No write whose response was lost was taken for a lost lease, or counted twice.
    assert counters.get("lease_lost", 0) == 0, counters
    assert "matched no row" not in worker.log()
    assert counters.get("completed") == 6, counters
    assert counters.get("dead", 0) == (0 if poison_reaped else 1), counters
    # Every lost claim that the reaper did not recover, the worker handed back itself.
    assert counters.get("lost_claims_released", 0) >= len(orphaned - reaped_ids), counters


def _cut_completions(app: App, proxied: str, proxy: CuttingProxy, spawn, mode: str) -> None:
    """Three jobs run by one worker through `proxy`, which cuts each one's completion after its
    commit: each is archived once, on its first attempt, its effect written once."""
    app.migrate()
    biz.create_tables(app)
    ids = [app.enqueue("chaos.work", {"n": i, "mode": mode}) for i in range(3)]
    proxy.arm(len(ids))
    worker = spawn(proxied, **{**OPTIONS, "concurrency": 1})
    worker.wait_started()
    wait_finished(app, ids, timeout=40)
    assert worker.stop() == 0
    assert proxy.cuts == len(ids), (proxy.cuts, proxy.connections)

    check_invariants(app, dict.fromkeys(ids, ARCHIVE))
    for job_id in ids:
        job = app.get_job(job_id)
        assert (job.attempts, job.errors) == (1, ()), job.errors
    assert len(biz.effects(app)) == len(ids)
    runs = biz.runs(app)
    assert len(runs) == len(ids)
    counters = worker.counters()
    assert counters.get("lease_lost", 0) == 0, counters
    if mode == "separate":
        # The completer retried through a new connection and recognised its own commit.
        assert counters.get("completed") == len(ids), counters
        assert "matched no row" not in worker.log()
    else:
        # The handler's commit went through but its answer was cut: the handler saw an
        # error; the worker must not turn that into a failure of an archived job.
        assert counters.get("retried", 0) == 0 and counters.get("dead", 0) == 0, counters


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["separate", "atomic"])
def test_connection_cut_after_the_completion_commits(
    pg_base_url: str, tmp_path, spawn, mode: str
) -> None:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    app = App(f"{pg_base_url}?schema={schema}")
    port = int(re.search(r":(\d+)/", pg_base_url).group(1))  # type: ignore[union-attr]
    # Only a completion sends the handler's result (the statement text is the claim's too): in
    # its array-literal parameter, {"n":…,"attempt":1,"worker":…} has its quotes escaped.
    proxy = CuttingProxy(port, marker=b'\\"attempt\\":1,\\"worker\\":')
    try:
        proxied = (
            f"postgresql://postgres@127.0.0.1:{proxy.port}/{pg_base_url.rsplit('/', 1)[1]}"
            f"?schema={schema}&sslmode=disable&gssencmode=disable"
        )
        _cut_completions(app, proxied, proxy, spawn, mode)
    finally:
        proxy.close()
        app.close()
        drop_schema(pg_base_url, schema)


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["separate", "atomic"])
def test_connection_cut_after_the_completion_commits_on_mariadb(
    mariadb_server: str, spawn, mode: str
) -> None:
    with mariadb_database(mariadb_server) as url:
        parsed = urlsplit(url)
        app = App(url)
        # Only a completion writes the archive (the worker's completer, or ctx.complete_in in
        # the handler's own transaction); the cut follows that transaction's COMMIT.
        proxy = MySQLCuttingProxy(parsed.port or 3306, marker=b"INSERT INTO claimq_archive")
        try:
            login = parsed.netloc.rsplit("@", 1)[0]
            proxied = urlunsplit(parsed._replace(netloc=f"{login}@127.0.0.1:{proxy.port}"))
            _cut_completions(app, proxied, proxy, spawn, mode)
        finally:
            proxy.close()
            app.close()
