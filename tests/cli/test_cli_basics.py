"""claimq: help, the database option, migrate, and what the worker checks before it starts."""

from __future__ import annotations

import os
from pathlib import Path

from cli_helpers import Cli

from claimq import App
from claimq.backends._sqlfiles import load_migrations


def test_help_database_option_and_connection_errors(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/claimq.db"
    App(url).migrate()
    cli = Cli(url, tmp_path)
    help_, version, sub_help, bad_url, no_server, via_option = cli.many(
        ["--help"],
        ["--version"],
        ["jobs", "--help"],
        ["--database", "oracle://localhost/x", "stats"],
        ["--database", "postgresql://postgres@127.0.0.1:1/x", "stats"],
        ["jobs", "list", "--json"],
    )
    for word in ("Exit codes", "bad input", "not found", "migrate", "enqueue", "worker", "dead"):
        assert word in help_.ok().out
    assert "claimq" in version.ok().out
    for word in ("list", "show", "cancel", "purge", "priority"):
        assert word in sub_help.ok().out
    assert "retry " not in sub_help.out  # resurrecting a dead letter is `claimq dead resurrect`
    bad_url.usage_error("unsupported database URL")
    no_server.failed(1, "cannot connect")
    assert via_option.json() == []

    # $CLAIMQ_DATABASE_URL when --database is absent; else ./claimq.db, never created by a read
    env_cli = Cli(None, tmp_path)
    assert env_cli("queues", "list", "--json", CLAIMQ_DATABASE_URL=url).json() == []
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    Cli(None, cwd)("stats").failed(1, "claimq.db does not exist", "claimq migrate")
    assert not (cwd / "claimq.db").exists()


def test_migrate_and_unmigrated_database(cli: Cli, db_url: str) -> None:
    stats, enqueue, jobs = cli.many(["stats"], ["enqueue", "send"], ["jobs", "list"])
    for result in (stats, enqueue, jobs):
        result.failed(1, "claimq migrate")
    if db_url.startswith("sqlite"):
        assert not os.path.exists(db_url.removeprefix("sqlite:///")), "nothing half-done"

    package = "claimq.backends." + ("sqlite" if db_url.startswith("sqlite") else "postgres")
    every = [version for version, _, _ in load_migrations(package)]
    first = cli("migrate", "--json").json()
    assert first["applied"] == every and first["version"] == every[-1]
    assert "up to date" in cli("migrate").ok().out
    with App(db_url) as app:
        assert app.queues() == []
        assert app.backend.schema_version() == every[-1]


def test_worker_checks_its_database_before_starting(cli: Cli, db_url: str, tmp_path: Path) -> None:
    """--database overrides the App's own URL; a database that is not migrated stops the
    worker before it starts (its bad-input paths are in test_cli_bad_input.py)."""
    own = f"sqlite:///{tmp_path}/own.db"
    App(own).migrate()
    (cli.cwd / "mytasks.py").write_text(f"from claimq import App\napp = App({own!r})\n")
    result = cli("worker", "mytasks:app", "--concurrency", "2")
    result.failed(1, "claimq migrate")
    if db_url.startswith("sqlite"):
        assert db_url.removeprefix("sqlite:///") in result.err
    else:
        assert db_url.rsplit("schema=", 1)[1] in result.err
