"""The flow control MariaDB/MySQL does not have yet (per-key rate limits; the rest of flow
control it has, see tests/app/test_flow_*.py): each is refused with InvalidInput and writes
nothing, from enqueue_many's other jobs too."""

from __future__ import annotations

from typing import Any

import pytest

from claimq import App
from claimq.errors import InvalidInput

pytestmark = pytest.mark.parametrize("db_url", ["mariadb"], indirect=True)

NEEDS = "needs PostgreSQL or SQLite"


def _live(app: App) -> list[int]:
    return [j.id for j in app.list_jobs("live")]


@pytest.mark.parametrize("options", [
    {"rate_key": "customer:1"},
])
def test_unbuilt_flow_options_are_refused_and_write_nothing(app: App,
                                                            options: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match=NEEDS):
        app.enqueue("t", {"n": 1}, queue="q", **options)
    with pytest.raises(InvalidInput, match=NEEDS):
        app.enqueue_many([{"task": "t", "queue": "q"}, {"task": "t", "queue": "q", **options}])
    assert _live(app) == []


def test_a_per_key_rate_limit_is_refused(app: App) -> None:
    assert app.throttled_keys() == [] and app.stats().throttled_keys == []
    app.enqueue("t", {}, queue="api")
    with pytest.raises(InvalidInput, match=NEEDS):
        app.configure_queue("api", key_rate_limit="10/s")
    assert app.configure_queue("api", rate_limit="10/s").rate_limit is not None  # it has these
