"""claimq workers: the registry's rows, as a table and as JSON."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App
from claimq.backends.base import WorkerRecord


def test_workers_lists_the_registry(cli: Cli, app: App) -> None:
    empty_json, empty = cli.many(["workers", "--json"], ["workers"])
    assert empty_json.json() == []
    assert "no worker has registered" in empty.ok().out

    app.backend.register_worker(WorkerRecord("host-a:12:abc", "host-a", 12, ("mail",), 4, "9.9"))
    app.backend.register_worker(WorkerRecord("host-b:34:def", "host-b", 34, None, 8, "9.9"))
    app.backend.prune_workers(dead_after=3600, forget_after=7200)
    as_json, human = cli.many(["workers", "--json"], ["workers"])
    rows = {w["id"]: w for w in as_json.json()}
    assert set(rows) == {"host-a:12:abc", "host-b:34:def"}
    a = rows["host-a:12:abc"]
    assert (a["host"], a["pid"], a["queues"], a["concurrency"], a["version"]) == (
        "host-a", 12, ["mail"], 4, "9.9")
    assert a["alive"] is True and a["in_flight"] == 0 and a["dead_at"] is None
    assert rows["host-b:34:def"]["queues"] is None
    out = human.ok().out
    for word in ("2 alive", "host-a", "mail", "alive", "*"):
        assert word in out
