"""Setup errors reach the operator as one `error: …` line naming the cause, exit 1, whatever
layer finds them (the CLI's checks, or the App's errors: SchemaMissing, DatabaseMissing,
DatabaseUnavailable, DatabaseError), and nothing is created (issue 12, defect 10's CLI side)."""

from __future__ import annotations

import uuid
from pathlib import Path

from cli_helpers import Cli


def test_a_sqlite_database_in_a_missing_directory_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "no-such-dir"
    cli = Cli(f"sqlite:///{folder}/claimq.db", tmp_path)
    for result in cli.many(["migrate"], ["stats"], ["enqueue", "t"], ["jobs", "list"]):
        result.failed(1, str(folder))
    assert not folder.exists()


def test_a_postgres_database_that_does_not_exist_is_named(pg_base_url: str,
                                                         tmp_path: Path) -> None:
    name = f"claimq_absent_{uuid.uuid4().hex[:8]}"
    cli = Cli(pg_base_url.rsplit("/", 1)[0] + f"/{name}", tmp_path)
    for result in cli.many(["migrate"], ["stats"], ["enqueue", "t"]):
        result.failed(1, name)


def test_an_unmigrated_database_says_run_migrate(cli: Cli) -> None:
    for result in cli.many(["stats"], ["enqueue", "t"], ["queues", "list"],
                           ["dead", "list"], ["jobs", "show", "1"]):
        result.failed(1, "claimq migrate")
