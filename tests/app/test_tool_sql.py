"""What a backend tells tools (the benchmark, the demo, the CLI) so that none of them spells a
dialect: its tables' names, its placeholder, SQL for seconds between two times, ANALYZE, the
caller's statements inside app.transaction(), the check of a place on disk, throwaway
databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimq import App
from claimq.backends import fresh_url, open_backend
from claimq.clock import FakeClock
from claimq.errors import DatabaseMissing, InvalidInput, SchemaMissing


def test_claimqs_tables_by_name_with_the_drivers_placeholder(app: App, clock: FakeClock) -> None:
    b = app.backend
    job = app.enqueue("t", delay=10)
    mark = b.placeholder
    assert b.run_sql(f"SELECT id FROM {b.table('jobs')} WHERE id = {mark}", (job,)) == [(job,)]
    for name in ("archive", "dead", "queues"):
        assert isinstance(b.run_sql(f"SELECT count(*) FROM {b.table(name)}"), list)
    ((seconds,),) = b.run_sql(
        f"SELECT {b.seconds_between('run_at', 'created_at')} FROM {b.table('jobs')}"
        f" WHERE id = {mark}", (job,))
    assert float(seconds) == pytest.approx(10.0, abs=0.01)
    b.analyze()  # the planner's statistics: nothing to see but that it runs
    assert b.run_sql(f"SELECT id FROM {b.table('jobs')}") == [(job,)]


def test_the_callers_table_and_statements_in_its_transaction(app: App) -> None:
    b = app.backend
    table, mark = b.own_table("tool_notes"), b.placeholder
    b.run_sql(f"CREATE TABLE {table} (note VARCHAR(50) NOT NULL)")
    with app.transaction() as conn:
        b.run_sql(f"INSERT INTO {table} (note) VALUES ({mark})", ("kept",), conn=conn)
        assert b.run_sql(f"SELECT note FROM {table}", conn=conn) == [("kept",)]
    with pytest.raises(RuntimeError), app.transaction() as conn:
        b.run_sql(f"INSERT INTO {table} (note) VALUES ({mark})", ("undone",), conn=conn)
        raise RuntimeError("roll back")
    assert b.run_sql(f"SELECT note FROM {table}") == [("kept",)]
    with pytest.raises(InvalidInput, match="conn must be"):
        b.run_sql(f"SELECT note FROM {table}", conn=object())


def test_check_location_refuses_a_missing_sqlite_file_or_directory(tmp_path: Path) -> None:
    missing_dir = open_backend(f"sqlite:///{tmp_path}/nowhere/q.db")
    for missing_ok in (True, False):
        with pytest.raises(DatabaseMissing, match="the directory of database .* does not exist"):
            missing_dir.check_location(missing_ok=missing_ok)
    missing_file = open_backend(f"sqlite:///{tmp_path}/q.db")
    missing_file.check_location(missing_ok=True)  # migrate makes it
    with pytest.raises(DatabaseMissing, match="run `claimq migrate` first"):
        missing_file.check_location(missing_ok=False)
    assert not (tmp_path / "q.db").exists()  # nothing was created
    open_backend("sqlite:///:memory:").check_location(missing_ok=False)


def test_check_location_passes_a_database_that_is_there(app: App) -> None:
    app.backend.check_location(missing_ok=False)


def test_a_throwaway_database_is_made_beside_and_dropped(db_url: str) -> None:
    url = fresh_url(db_url, "tool")
    assert url != db_url
    app = App(url)
    try:
        app.migrate()
        app.enqueue("t")
        assert len(app.list_jobs("live")) == 1
    finally:
        app.close()
    open_backend(url).drop_all()
    after = App(url)
    try:
        with pytest.raises((SchemaMissing, DatabaseMissing)):
            after.backend.check_location(missing_ok=False)
            after.backend.check_schema()
    finally:
        after.close()
    if url.startswith("sqlite"):
        open_backend(url).drop_all()  # check_schema's connection made an empty file


def test_a_sqlite_file_replaced_in_place(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/demo.db"
    app = App(url)
    try:
        app.migrate()
        app.enqueue("t")
    finally:
        app.close()
    assert fresh_url(url, "demo", replace=True) == url
    assert not (tmp_path / "demo.db").exists()
    with App(url) as again:
        again.migrate()
        assert again.list_jobs("live") == []
