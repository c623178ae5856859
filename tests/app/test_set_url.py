"""App.set_url: the one way to point an App at another database."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimq import App
from claimq.errors import InvalidInput


def test_set_url_closes_the_old_database_and_opens_the_new_one(
    db_url: str, tmp_path: Path
) -> None:
    app = App(db_url)
    app.migrate()
    other = f"sqlite:///{tmp_path}/other.db"
    try:
        first = app.enqueue("t", queue="here")
        old = app.backend
        app.set_url(other)
        assert app.url == other
        assert app._backend is None  # closed, nothing open until the next call
        app.migrate()
        assert app.backend is not old
        assert app.list_jobs("live") == []  # the other database: empty
        second = app.enqueue("t", queue="there")
        app.set_url(db_url)
        assert [j.id for j in app.list_jobs("live")] == [first]
        assert app.get_job(first).queue == "here"
        app.set_url(other)
        assert [(j.id, j.queue) for j in app.list_jobs("live")] == [(second, "there")]
    finally:
        app.close()


def test_set_url_waits_for_results_on_the_new_database(db_url: str, tmp_path: Path) -> None:
    """The result waiter of the old database is closed with it; the next wait opens one on the
    new database."""
    app = App(f"sqlite:///{tmp_path}/first.db")
    app.migrate()
    try:
        with pytest.raises(TimeoutError):
            app.result(app.enqueue("t"), timeout=0.05)
        assert app._waiter is not None
        app.set_url(db_url)
        assert app._waiter is None
        app.migrate()
        job = app.enqueue("t")
        with pytest.raises(TimeoutError):
            app.result(job, timeout=0.05)
        assert app._waiter is not None and app.get_job(job).status == "pending"
    finally:
        app.close()


def test_set_url_refuses_what_is_not_a_url_string() -> None:
    app = App("sqlite:///unused.db")
    with pytest.raises(InvalidInput, match="URL string"):
        app.set_url(None)  # type: ignore[arg-type]
    assert app.url == "sqlite:///unused.db"
