"""Scenario 11: bad input end to end, through real worker processes.

- Refused at the door: oversized payloads, invalid queue and task names, SQL-looking names,
  a worker started on an invalid queue name: a clear InvalidInput, nothing written.
- Stored by another client, past claimq's checks (rows inserted directly): a payload that is a
  JSON array, a scalar, null; arguments the handler does not take; a payload of several
  megabytes. Each bad job is dead-lettered with a reason and a message that says what is wrong; a
  job of a task the worker does not register is handed back, pending, its attempts unspent;
  the good jobs around them flow, and an abandoned job is still recovered by the reaper.
- SQL-looking text in every free-text field (payload keys and values, idempotency key, tags,
  error message, result, worker id) round-trips byte for byte and the tables stay whole.
- SQLite only: JSON columns corrupted by another client (invalid JSON in payload, tags, errors):
  the job is dead-lettered with a diagnostic; the worker, the reaper and the listings go on.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from chaos_harness import (
    ARCHIVE,
    Expect,
    archived,
    check_invariants,
    dead,
    live,
    wait_finished,
)

from claimq import App, InvalidInput

pytestmark = pytest.mark.timeout(120)

OPTIONS = {"concurrency": 4, "lease": 2.0, "poll_interval": 0.1, "grace": 2.0}
SQL = "'; DROP TABLE claimq_jobs; -- \" \\ %s %(x)s ? :name $1 ; DELETE FROM claimq_dead; /*"


def counts(app: App) -> tuple[int, int, int]:
    return len(live(app)), len(archived(app)), len(dead(app))


def insert_raw(app: App, task: str, payload_sql: str, **extra: object) -> int:
    """A job row written by another client, bypassing claimq's checks (payload as SQL text)."""
    if app.backend.kind == "postgresql":
        schema = app.backend.schema  # type: ignore[attr-defined]
        with app.transaction() as conn:
            row = conn.execute(
                f"INSERT INTO {schema}.jobs (queue, task, payload, max_attempts)"
                f" VALUES ('default', %s, {payload_sql}, %s) RETURNING id",
                (task, extra.get("max_attempts", 2)),
            ).fetchone()
            return int(row["id"])
    now = time.time()
    with app.transaction() as conn:
        row = conn.execute(
            "INSERT INTO claimq_jobs (queue, task, payload, max_attempts, run_at, created_at,"
            f" updated_at) VALUES ('default', ?, {payload_sql}, ?, ?, ?, ?) RETURNING id",
            (task, extra.get("max_attempts", 2), now, now, now),
        ).fetchone()
        return int(row[0])


def test_refused_at_the_door(capp: App, spawn) -> None:
    capp.enqueue("chaos.echo", {"warm": 1})  # the database is in use
    before = counts(capp)
    huge = {"blob": "x" * (1024 * 1024 + 1)}
    bad_calls = [
        (lambda: capp.enqueue("chaos.echo", huge), "over the limit"),
        (lambda: capp.enqueue("chaos.echo", {}, queue="bad name"), "queue name"),
        (lambda: capp.enqueue("chaos.echo", {}, queue=""), "queue name"),
        (lambda: capp.enqueue("chaos.echo", {}, queue=SQL), "queue name"),
        (lambda: capp.enqueue(SQL, {}), "task name"),
        (lambda: capp.enqueue("chaos.echo", [1, 2]), "JSON object"),  # type: ignore[arg-type]
        (lambda: capp.enqueue("chaos.echo", {"x": float("nan")}), "JSON"),
        (lambda: capp.enqueue("chaos.echo", {"x": "\x00"}), "NUL"),
        (lambda: capp.enqueue_many([{"task": "chaos.echo"}, {"task": "chaos.echo",
                                                             "queue": "x y"}]), "queue name"),
    ]
    for call, words in bad_calls:
        with pytest.raises(InvalidInput, match=words):
            call()
    assert counts(capp) == before, "a refused call wrote something"
    assert {q.name for q in capp.queues()} == {"default"}

    worker = spawn(capp.url, queues=[SQL], concurrency=1)
    assert worker.wait(30) != 0
    assert "InvalidInput" in worker.log() and "queue name" in worker.log()
    assert counts(capp) == before


def test_bad_rows_from_another_client(capp: App, spawn) -> None:
    good = [capp.enqueue("chaos.work", {"n": i}) for i in range(20)]
    pg = capp.backend.kind == "postgresql"
    cast = "::jsonb" if pg else ""
    bad = {
        insert_raw(capp, "chaos.echo", f"'[1, 2, 3]'{cast}"): ("permanent_error", "list"),
        insert_raw(capp, "chaos.echo", f"'\"just text\"'{cast}"): ("permanent_error", "str"),
        insert_raw(capp, "chaos.echo", f"'null'{cast}"): ("permanent_error", "NoneType"),
        # arguments the handler does not take: no retry can help, dead at once
        insert_raw(capp, "chaos.raise_text", f"'{{\"nope\": 1}}'{cast}"): (
            "permanent_error", "unexpected keyword argument"),
    }
    # A task this worker does not register (another App's): handed back, never spent (issue 24)
    stranger = insert_raw(capp, "chaos.no_such_task", f"'{{}}'{cast}")
    big = {"blob": "y" * (3 * 1024 * 1024), "n": 1}
    big_id = insert_raw(capp, "chaos.echo", ("%s::jsonb" if pg else "?").replace(
        "%s", "'" + json.dumps(big) + "'") if pg else f"'{json.dumps(big)}'")
    # A job its claimer abandoned: the reaper must still recover it among the bad rows.
    [orphan] = capp.claim("gone-away", limit=1, lease=0.5)
    weird = capp.enqueue("chaos.echo", {SQL: SQL, "nested": {"k": [SQL, 1, None]}},
                         idempotency_key=SQL, tags=[SQL[:64], "ok"])
    failing = capp.enqueue("chaos.raise_text", {"text": SQL}, max_attempts=1)
    stored_sql = capp.claim(SQL, limit=0)  # a worker id full of SQL is only a string
    assert stored_sql == []

    worker = spawn(capp.url, **OPTIONS)
    worker.wait_started()
    everything = [*good, *bad, big_id, orphan.id, weird, failing]
    wait_finished(capp, everything, timeout=60)
    worker.wait_log(r"task\.unknown: job \d+: no task 'chaos\.no_such_task'")
    assert worker.alive()
    assert worker.stop() == 0
    s = capp.get_job(stranger)
    assert (s.status, s.attempts, s.errors) == ("pending", 0, ())

    expected = dict.fromkeys([*good, orphan.id, weird], ARCHIVE)
    # The 3 MB payload runs; echoing it back is a result over the App's result_limit (1 MiB):
    # refused, and the job a dead letter that says why (no retry can shrink it).
    expected[big_id] = Expect("dead", "permanent_error")
    expected |= {i: Expect("dead", reason) for i, (reason, _) in bad.items()}
    expected[failing] = Expect("dead", "permanent_error")
    check_invariants(capp, expected, effects_for_archived=False)
    for job_id, (_, words) in bad.items():
        job = capp.get_job(job_id)
        assert words in job.errors[-1]["message"], (job_id, job.errors[-1])
    assert "payload is a list, not a JSON object" in capp.get_job(next(iter(bad))).errors[-1][
        "message"]
    assert "result_limit" in capp.get_job(big_id).errors[-1]["message"], capp.get_job(
        big_id).errors[-1]
    assert any(e["error"] == "LeaseExpired" for e in capp.get_job(orphan.id).errors)

    w = capp.get_job(weird)
    assert w.payload == {SQL: SQL, "nested": {"k": [SQL, 1, None]}}
    assert w.result == {"payload": w.payload, "key": SQL}
    assert (w.idempotency_key, w.tags) == (SQL, (SQL[:64], "ok"))
    f = capp.get_job(failing)
    assert f.errors[-1]["message"] == SQL and f.payload == {"text": SQL}
    assert len(archived(capp)) == len(good) + 1  # the orphan is a good one
    assert [j.id for j in live(capp)] == [stranger]


def test_corrupted_json_columns(tmp_path, spawn) -> None:
    """SQLite stores JSON as text; another client can break it (payload past its CHECK with
    ignore_check_constraints; tags and errors have none). The broken jobs are dead-lettered with
    a diagnostic naming the column; the reaper still recovers an expired job whose history
    column is broken; listings still read every row."""
    import chaos_biz as biz

    from claimq.job import CorruptRow

    url = f"sqlite:///{tmp_path}/corrupt.db"
    app = App(url)
    app.migrate()
    biz.create_tables(app)
    victims = [app.enqueue("chaos.echo", {"v": i}) for i in range(3)]
    [orphan] = app.claim("gone-away", limit=1, lease=0.5)  # victims[0], abandoned
    good = [app.enqueue("chaos.work", {"n": i}) for i in range(20)]
    conn = sqlite3.connect(app.backend.path, isolation_level=None)  # type: ignore[attr-defined]
    conn.execute("PRAGMA ignore_check_constraints = ON")
    broken = {
        victims[1]: ("payload", "{broken"),
        victims[2]: ("tags", "[oops"),
        orphan.id: ("errors", "not json"),
    }
    for job_id, (column, text) in broken.items():
        conn.execute(f"UPDATE claimq_jobs SET {column} = ? WHERE id = ?", (text, job_id))
    conn.close()
    shown = app.get_job(victims[1])  # listings read the row, and say what is wrong with it
    assert isinstance(shown.payload, CorruptRow) and "payload holds '{broken'" in shown.payload

    worker = spawn(url, **OPTIONS)
    worker.wait_started()
    wait_finished(app, [*good, *victims], timeout=60)
    assert worker.alive(), worker.log()[-3000:]
    assert worker.stop() == 0
    dead_ones = [victims[1], victims[2]]
    expected = dict.fromkeys([*good, orphan.id], ARCHIVE)
    expected |= {v: Expect("dead", "permanent_error") for v in dead_ones}
    check_invariants(app, expected, effects_for_archived=False)
    for job_id in dead_ones:
        column, text = broken[job_id]
        job = app.get_job(job_id)
        assert job.errors[-1]["error"] == "BadPayload"
        assert f"{column} holds {text!r}" in job.errors[-1]["message"], job.errors
    # The abandoned job's history was unreadable: the reaper started a fresh one that says so,
    # added its own entry and handed the job back; it then ran like any other.
    job = app.get_job(orphan.id)
    assert [e["error"] for e in job.errors] == ["CorruptColumn", "LeaseExpired"], job.errors
    assert "'not json'" in job.errors[0]["message"]
    assert job.result == {"payload": {"v": 0}, "key": f"claimq-job-{orphan.id}"}
    assert len(dead(app)) == 2 and len(archived(app)) == len(good) + 1
    app.close()
