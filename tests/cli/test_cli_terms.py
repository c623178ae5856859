"""The same words for states across the CLI, the API and the dashboard (issue 28, item 4): a
queue's state is one word (active, paused, inactive, throttled) in `claimq queues list` as in
`claimq stats` and the dashboard, not two yes/no columns; jobs due later are `scheduled`
(the API's QueueInfo.scheduled and Stats' `scheduled`, the dashboard's Scheduled), not `later`."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App


def _rows(out: str) -> dict[str, list[str]]:
    rows = [[cell.strip() for cell in line.strip("│┃").split("│" if "│" in line else "┃")]
            for line in out.splitlines() if line.startswith(("│", "┃"))]
    return {row[0]: row for row in rows}


def test_states_have_the_apis_words(cli: Cli, app: App) -> None:
    app.enqueue("t", queue="mail")
    app.enqueue("t", queue="reports", delay=3600)
    app.pause("reports")
    app.enqueue("t", queue="old")
    app.deactivate("old")
    queues, stats = cli.many(["queues", "list"], ["stats"])
    rows = _rows(queues.ok().out)
    state = rows["queue"].index("state")
    assert "paused" not in rows["queue"] and "active" not in rows["queue"], rows["queue"]
    assert (rows["mail"][state], rows["reports"][state]) == ("active", "paused")
    assert rows["old"][state].startswith("inactive")
    header = _rows(stats.ok().out)["queue"]
    assert "scheduled" in header and "later" not in header, header
    reports = _rows(stats.out)["reports"]
    assert reports[header.index("scheduled")] == "1" and reports[header.index("state")] == "paused"
