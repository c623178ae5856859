"""Issue 24, defects 1-3 (MariaDB): an idempotent enqueue that meets its key's holder, and a
debounce that meets a claim of the holder between its statements."""

from __future__ import annotations

import pytest

from claimq import App


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_refused_enqueue_leaves_the_holders_keys(app: App) -> None:
    """Defect 1: the refused job's concurrency key must not replace the running holder's."""
    holder = app.enqueue("t", {}, queue="q", idempotency_key="k", concurrency_key="a",
                         concurrency_limit=1)
    [running] = app.claim("w", limit=1, start=True)
    assert running.id == holder
    refused = app.enqueue("t", {}, queue="q", idempotency_key="k", concurrency_key="b",
                          concurrency_limit=1, sequence_key="s", rate_key="r")
    assert refused == holder
    app.enqueue("t", {}, queue="q", concurrency_key="a", concurrency_limit=1)
    assert app.claim("w", limit=5) == [], "key 'a' runs its limit: its holder still holds it"
    app.complete(running)
    assert len(app.claim("w", limit=5)) == 1
