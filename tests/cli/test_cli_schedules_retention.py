"""claimq schedules … and claimq retention …: periodic schedules and retention policies from
the command line."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App


def test_schedules_lifecycle(cli: Cli, app: App) -> None:
    added = cli("schedules", "add", "nightly", "app.report", "--cron", "30 2 * * *",
                "--tz", "Europe/Lisbon", "--payload", '{"x": 1}', "--queue", "reports",
                "--json").json()
    assert (added["cron"], added["tz"], added["payload"], added["queue"]) == (
        "30 2 * * *", "Europe/Lisbon", {"x": 1}, "reports")
    assert "tick added" in cli("schedules", "add", "tick", "app.tick", "--every", "90").ok().out
    listed, human = cli.many(["schedules", "list", "--json"], ["schedules", "list"])
    assert [s["name"] for s in listed.json()] == ["nightly", "tick"]
    assert "every 90s" in human.ok().out and "Europe/Lisbon" in human.out

    changed = cli("schedules", "change", "nightly", "--every", "60", "--missed", "all",
                  "--json").json()
    assert changed["cron"] is None and changed["every"] == 60 and changed["missed"] == "all"
    assert app.schedules.get("nightly").every == 60  # the database, not the CLI, holds it
    assert cli("schedules", "pause", "tick", "--json").json()["paused"] is True
    assert cli("schedules", "resume", "tick", "--json").json()["paused"] is False
    ran = cli("schedules", "run-now", "nightly", "--json").json()
    job = app.get_job(ran["id"])
    assert (job.task, job.queue, job.payload, job.tags) == (
        "app.report", "reports", {"x": 1}, ("schedule:nightly",))
    assert cli("schedules", "remove", "tick", "--json").json() == {"removed": "tick"}
    assert [s.name for s in app.schedules.list()] == ["nightly"]


def test_schedules_bad_input(cli: Cli, app: App) -> None:
    cli("schedules", "add", "ok", "t", "--every", "60").ok()
    bad_cron, both, neither, bad_tz, dup, nothing, missing, bad_every = cli.many(
        ["schedules", "add", "x", "t", "--cron", "nope"],
        ["schedules", "add", "x", "t", "--cron", "* * * * *", "--every", "5"],
        ["schedules", "add", "x", "t"],
        ["schedules", "add", "x", "t", "--cron", "* * * * *", "--tz", "Nowhere/Land"],
        ["schedules", "add", "ok", "t", "--every", "60"],
        ["schedules", "change", "ok"],
        ["schedules", "pause", "missing"],
        ["schedules", "add", "x", "t", "--every", "-3"],
    )
    bad_cron.usage_error("bad cron expression")
    both.usage_error("exactly one")
    neither.usage_error("exactly one")
    bad_tz.usage_error("unknown time zone")
    dup.usage_error("exists already")
    nothing.usage_error("nothing to change")
    missing.failed(1, "no schedule 'missing'")
    bad_every.usage_error("--every")
    assert [s.name for s in app.schedules.list()] == ["ok"]


def test_retention_commands(cli: Cli, app: App) -> None:
    assert cli("retention", "set", "--archive-age", "3600", "--dead-rows", "5",
               "--json").json() == {"queue": "*", "archive_age": 3600.0, "archive_rows": None,
                                    "dead_age": 30 * 86400.0, "dead_rows": 5}
    cli("retention", "set", "--queue", "emails", "--archive-rows", "100").ok()
    listed, human, pruned = cli.many(["retention", "list", "--json"], ["retention", "list"],
                                     ["retention", "prune", "--json"])
    assert [p["queue"] for p in listed.json()] == ["*", "emails"]
    assert "1h00m" in human.ok().out
    assert pruned.json() == {"pruned": {"archive": 0, "dead": 0, "idempotency_keys": 0,
                                        "progress": 0, "rate_keys": 0, "audit": 0,
                                        "archive_partitions": 0}}
    assert "cleared" in cli("retention", "clear", "--queue", "emails").ok().out
    cli("retention", "clear", "--queue", "emails").failed(1, "no retention policy")
    cli("retention", "set", "--archive-rows", "-1").usage_error("--archive-rows")
    assert [p.queue for p in app.retention()] == ["*"]


def test_retention_set_keeps_the_limits_it_is_not_given(cli: Cli, app: App) -> None:
    """Issue 24 (newcomer): `retention set --archive-age N` silently lifted the default's
    30-day dead-letter limit. Setting one limit keeps the others in force; --lift removes one."""
    cli("retention", "set", "--archive-age", "3600").ok()
    (default,) = app.retention()
    assert (default.archive_age, default.dead_age) == (3600.0, 30 * 86400.0)
    cli("retention", "set", "--dead-rows", "5").ok()
    (default,) = app.retention()
    assert (default.archive_age, default.dead_age, default.dead_rows) == (3600.0, 30 * 86400.0, 5)
    # a queue's first policy starts from the default in force, then keeps its own
    cli("retention", "set", "--queue", "emails", "--archive-rows", "100").ok()
    cli("retention", "set", "--queue", "emails", "--lift", "dead-age").ok()
    emails = app.retention()[1]
    assert (emails.queue, emails.archive_age, emails.archive_rows, emails.dead_age,
            emails.dead_rows) == ("emails", 3600.0, 100, None, 5)
    cli("retention", "set", "--lift", "archive-age", "--archive-age", "60").usage_error(
        "both set and lifted")
    cli("retention", "set").usage_error("give a limit")
    assert app.retention()[0].archive_age == 3600.0
