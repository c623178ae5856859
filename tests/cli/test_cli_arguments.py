"""How the command line reads its arguments (issue 28, item 7): durations with units,
messages that say what a number must be, and --database after the command."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import Cli

from claimq import App


def test_durations_take_units_wherever_seconds_are_taken(cli: Cli, app: App) -> None:
    app.enqueue("t", queue="mail")
    later, lease, timeout, aging, stats, retention = cli.many(
        ["enqueue", "t", "--delay", "1d", "--queue", "later", "--json"],
        ["queues", "set", "mail", "--lease", "5m", "--json"],
        ["queues", "set", "mail", "--timeout", "1h30m", "--json"],
        ["queues", "set", "mail", "--aging", "90s", "--json"],
        ["stats", "--window", "2m", "--json"],
        ["retention", "set", "--archive-age", "2w", "--dead-age", "45", "--json"],
    )
    job = app.get_job(later.json()["id"])
    assert abs((job.run_at - job.created_at).total_seconds() - 86400) < 60
    assert lease.json()["lease_seconds"] == 300
    assert timeout.json()["timeout_seconds"] == 5400
    assert aging.json()["aging"]["step"] == 90
    assert stats.json()["window"] == 120
    assert (retention.json()["archive_age"], retention.json()["dead_age"]) == (1209600, 45)


def test_bad_numbers_say_what_is_wanted(tmp_path: Path) -> None:
    """Not click's `'abc' is not a valid integer range`: the option, what it takes, the value."""
    database = tmp_path / "absent.db"
    cli = Cli(f"sqlite:///{database}", tmp_path)
    count, limit, show, burst, delay, window = cli.many(
        ["enqueue", "t", "--count", "abc"],
        ["jobs", "list", "--limit", "0"],
        ["jobs", "show", "abc"],
        ["queues", "set", "q", "--rate-burst", "many"],
        ["enqueue", "t", "--delay", "soon"],
        ["stats", "--window", "5 minutes"],
    )
    count.usage_error("error: --count must be a whole number from 1 to 10000000, got 'abc'")
    limit.usage_error("error: --limit must be a whole number from 1 to 100000, got 0")
    show.usage_error("error: ID must be a whole number from 1 to")
    burst.usage_error("error: --rate-burst must be a whole number, got 'many'")
    delay.usage_error("error: --delay must be a duration such as 30s, 5m", "got 'soon'")
    window.usage_error("error: --window must be a duration", "got '5 minutes'")
    for result in (count, limit, show, burst, delay, window):
        assert "Invalid value" not in result.err and "integer range" not in result.err
    assert not database.exists()


def test_the_demos_numbers_say_what_is_wanted(tmp_path: Path) -> None:
    """`claimq demo` too: its numbers say what they take (not `'abc' is not a valid integer
    range`), in one line (no click warning about a second --database option)."""
    cli = Cli(None, tmp_path)
    jobs, processes, concurrency = cli.many(["demo", "--jobs", "abc"],
                                            ["demo", "--processes", "0"],
                                            ["demo", "--concurrency", "1.5"])
    jobs.usage_error("error: --jobs must be a whole number from 200 to 90000, got 'abc'")
    processes.usage_error("error: --processes must be a whole number from 1 to 64, got 0")
    concurrency.usage_error("error: --concurrency must be a whole number from 1 to 1000")
    assert not list(tmp_path.glob("*.db"))


def test_database_is_taken_after_the_command_too(app: App, tmp_path: Path) -> None:
    app.enqueue("t", queue="mail")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    cli = Cli(None, cwd)  # no --database before the command
    listed, paused, missing = cli.many(
        ["queues", "list", "--json", "--database", app.url],
        ["queues", "pause", f"--database={app.url}", "mail"],
        ["stats", "--database", f"sqlite:///{cwd}/absent.db"],
    )
    assert [q["name"] for q in listed.json()] == ["mail"]
    assert "queue mail paused" in paused.ok().out
    missing.failed(1, "absent.db")
    assert list(cwd.iterdir()) == [], "the default database ./claimq.db was not used"
