"""claimq workers: the registry's rows, as a table and as JSON."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from cli_helpers import Cli

from claimq import App
from claimq.backends.base import WorkerRecord
from claimq.clock import FakeClock


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
    for word in ("2 alive", "host-a", "mail", "alive"):
        assert word in out
    # human values (issue 28): "all" for every queue, ages rather than stamps or raw floats
    b = next(line for line in out.splitlines() if "host-b:34:def" in line)
    cells = [cell.strip() for cell in b.strip("│").split("│")]
    # worker │ state │ host │ pid │ queues │ version │ up for │ last seen │ in flight │ concurrency
    assert cells[4] == "all" and cells[8:] == ["0", "8"], cells
    assert re.fullmatch(r"\d+\.\ds", cells[6]) and re.fullmatch(r"\d+\.\ds ago", cells[7]), cells
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\.\d{3,}", out), out


def test_a_hard_stopped_worker_is_not_shown_alive(cli: Cli, app: App) -> None:
    """A worker killed with SIGKILL leaves its row as it was: alive, 3 jobs in flight. Once its
    row is older than the liveness window it shows as silent, without jobs in flight, even
    though no reaper marked it dead (no other worker runs) (issue 28)."""
    past = App(app.url, clock=FakeClock(datetime.now(UTC) - timedelta(seconds=90)))
    past.backend.register_worker(
        WorkerRecord("host-k:66:kil", "host-k", 66, ("mail",), 4, "9.9", in_flight=3))
    past.close()
    app.backend.register_worker(WorkerRecord("host-a:12:abc", "host-a", 12, None, 4, "9.9"))
    as_json, human = cli.many(["workers", "--json"], ["workers"])
    rows = {w["id"]: w for w in as_json.json()}
    killed = rows["host-k:66:kil"]
    assert killed["alive"] is False and killed["dead_at"] is None
    assert 80 < killed["silent_for"] < 600
    assert rows["host-a:12:abc"]["alive"] is True
    rows = {cells[0]: cells for cells in (
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in human.ok().out.splitlines() if line.startswith("│"))}
    # worker │ state │ host │ pid │ queues │ version │ up for │ last seen │ in flight │ concurrency
    assert rows["host-k:66:kil"][1] == "silent" and rows["host-k:66:kil"][8:] == ["-", "4"]
    assert rows["host-a:12:abc"][1] == "alive"
    assert "1 alive, 1 gone" in human.out
    assert "They last reported 3 job(s) in flight: once past their leases these are not running" \
        in " ".join(human.out.split())
