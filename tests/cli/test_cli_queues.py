"""claimq queues list | pause | resume | limit | activate | deactivate | set."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App


def test_queue_commands(cli: Cli, app: App) -> None:
    for name in ("pause-me", "limit-me", "deactivate-me", "set-me"):
        app.enqueue("t", queue=name)
    app.pause("resume-me")
    app.configure_queue("unlimit-me", max_workers=5)
    app.deactivate("activate-me")
    app.configure_queue("clear-me", lease=45, timeout=90)

    listed = {q["name"]: q for q in cli("queues", "list", "--json").json()}
    assert set(listed) == {
        "pause-me", "limit-me", "deactivate-me", "set-me", "resume-me", "unlimit-me",
        "activate-me", "clear-me",
    }
    assert listed["pause-me"]["pending"] == 1 and listed["resume-me"]["paused"] is True
    assert listed["clear-me"]["lease_seconds"] == 45 and listed["clear-me"]["timeout_seconds"] == 90

    results = cli.many(
        ["queues", "pause", "pause-me"],
        ["queues", "resume", "resume-me", "--json"],
        ["queues", "limit", "limit-me", "3", "--json"],
        ["queues", "limit", "unlimit-me", "none"],
        ["queues", "deactivate", "deactivate-me"],
        ["queues", "activate", "activate-me"],
        ["queues", "set", "set-me", "--lease", "60", "--timeout", "30", "--json"],
        ["queues", "set", "clear-me", "--timeout", "none"],
        ["queues", "pause", "brand-new", "--create"],
        ["queues", "set", "rated", "--rate-limit", "10/s", "--rate-burst", "3", "--json",
         "--create"],
        ["queues", "set", "unrated", "--rate-limit", "5/m", "--create"],
        ["queues", "set", "bad-rate", "--rate-limit", "fast", "--create"],
        ["queues", "set", "bad-burst", "--rate-burst", "3"],
        ["queues", "set", "aged", "--aging", "30", "--aging-cap", "4", "--json", "--create"],
        ["queues", "set", "per-key", "--key-rate-limit", "2/s", "--key-rate-burst", "4",
         "--create"],
        ["queues", "set", "bad-key-burst", "--key-rate-burst", "4"],
    )
    (pause, resume, limit, unlimit, deactivate, activate, set_, clear, new, rated, _,
     bad_rate, bad_burst, aged, per_key, bad_key_burst) = results
    unrated = cli("queues", "set", "unrated", "--rate-limit", "none")
    assert "queue pause-me paused" in pause.ok().out
    assert resume.json()["paused"] is False
    assert limit.json()["max_workers"] == 3
    assert "no worker limit" in unlimit.ok().out
    assert "deactivated" in deactivate.ok().out and "activated" in activate.ok().out
    assert (set_.json()["lease_seconds"], set_.json()["timeout_seconds"]) == (60, 30)
    assert "no timeout" in clear.ok().out
    assert "new queue created" in new.ok().out
    assert rated.json()["rate_limit"] == {"count": 10, "period": 1.0, "burst": 3}
    assert "no rate limit" in unrated.ok().out
    assert bad_rate.code != 0 and "rate_limit must look like" in bad_rate.err
    assert bad_burst.code != 0 and "--rate-burst goes with a --rate-limit" in bad_burst.err
    assert aged.json()["aging"] == {"step": 30.0, "cap": 4}
    assert "rate limit 2/s per key" in per_key.ok().out
    assert bad_key_burst.code != 0 and "--key-rate-burst goes with" in bad_key_burst.err
    assert "no priority aging" in cli("queues", "set", "aged", "--aging", "none").ok().out

    state = {q.name: q for q in app.queues()}
    assert state["pause-me"].paused and not state["resume-me"].paused
    assert state["limit-me"].max_workers == 3 and state["unlimit-me"].max_workers is None
    assert not state["deactivate-me"].active and state["activate-me"].active
    assert (state["set-me"].lease_seconds, state["set-me"].timeout_seconds) == (60, 30)
    assert (state["clear-me"].lease_seconds, state["clear-me"].timeout_seconds) == (45, None)
    assert state["brand-new"].paused

    rows = {}
    for line in cli("queues", "list").ok().out.splitlines():
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        if line.startswith("│"):
            rows[cells[0]] = cells
    # queue │ state │ max workers │ lease │ timeout │ live jobs │ rate limit
    assert rows["pause-me"] == ["pause-me", "paused", "unlimited", "30s", "-", "1", "-"]
    assert rows["rated"][6] == "10/s (burst 3)" and rows["unrated"][6] == "-"
    assert rows["per-key"][6] == "-; 2/s (burst 4) per key"
    assert rows["deactivate-me"][1] == "inactive" and rows["activate-me"][1] == "active"
    assert rows["limit-me"][2] == "3" and rows["unlimit-me"][2] == "unlimited"
    assert rows["set-me"][3:5] == ["60s", "30s"]


def test_breaker_command_and_stats(cli: Cli, app: App) -> None:
    app.enqueue("call", {}, queue="api")
    on = cli("queues", "breaker", "api", "call", "--failures", "1", "--window", "30",
             "--cooldown", "600")
    changed, bad, neither = cli.many(  # at once: the last two change nothing
        ["queues", "breaker", "api", "call", "--failures", "2", "--json"],
        ["queues", "breaker", "api", "call", "--failures", "0"],
        ["queues", "breaker", "api", "call"],
    )
    assert "opens its breaker after 1 failure(s) within 30s, for 600s (now closed)" in on.ok().out
    assert changed.json()["failure_limit"] == 2 and changed.json()["state"] == "closed"
    assert changed.json()["cooldown"] == 30, "a setting not given takes its default"
    assert bad.code != 0 and neither.code != 0 and "--failures N" in neither.err
    for _ in range(2):
        job = app.claim("w", ["api"], limit=1, start=True)[0]
        app.fail(job, RuntimeError("down"), attempt=1)
        app.run_now([job.id])  # due again at once
    stats = cli("stats", "--json").json()
    assert [(b["task"], b["state"]) for b in stats["breakers"]] == [("call", "open")]
    shown = cli("stats").ok().out
    assert "circuit breakers" in shown and "open" in shown
    off = cli("queues", "breaker", "api", "call", "--off")
    assert "has no circuit breaker" in off.ok().out and app.breakers() == []


def test_queue_commands_refuse_an_unknown_queue(cli: Cli, app: App) -> None:
    """`claimq queues pause typo` is an error naming the queues there are, and creates nothing
    (issue 28); --create sets up a queue before its first job."""
    app.enqueue("t", queue="mail")
    app.enqueue("t", queue="reports")
    refused = cli.many(
        ["queues", "pause", "typo"], ["queues", "resume", "typo"],
        ["queues", "activate", "typo"], ["queues", "deactivate", "typo", "--json"],
        ["queues", "limit", "typo", "3"], ["queues", "set", "typo", "--lease", "60"],
        ["queues", "breaker", "typo", "t", "--failures", "3"],
    )
    for result in refused:
        result.failed(1, "no queue 'typo'; queues: mail, reports", "--create")
    assert [q.name for q in app.queues()] == ["mail", "reports"]
    assert app.breakers() == []
    assert "queue typo paused (new queue created)" in cli(
        "queues", "pause", "typo", "--create").ok().out
    assert "queue typo resumed" in cli("queues", "resume", "typo").ok().out
