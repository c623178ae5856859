"""claimq enqueue checks a job once (issue 25, part 2 item 3): by the rule App.enqueue_many
applies (claimq._specs.job_spec), before the database is touched; the job it checked is the
job it writes. A bad job gets one `error: …` line, exit 2, and nothing is written, on a
migrated database too (test_cli_bad_input.py covers an absent one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Cli
from click.testing import CliRunner

from claimq import App, _validate
from claimq.cli import main

APP_MODULE = """
from claimq import App

app = App("sqlite:///never-used.db")  # the tests give --database


@app.task(name="myapp.send_welcome", queue="mail")
def send_welcome(user_id: int) -> None:
    pass
"""

# (arguments, a fragment of the one error line): each passes click's own option checks and
# fails the job's rule.
BAD_JOBS: list[tuple[list[str], str]] = [
    (["enqueue", "t", "--payload", '{"n": 1e400}'], "1e400 at ['n'] is too large"),
    (["enqueue", "t", "--payload", '{"n": 1e400}', "--count", "5"], "is too large"),
    (["enqueue", "t", "--tag", "x" * 65], "each tag must be a string of 1 to 64"),
    (["enqueue", "t", "--queue", "no spaces", "--count", "3"], "queue name"),
    (["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--payload", '{"uid": 1}'],
     "uid"),
    (["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--count", "4"], "user_id"),
]


def _all_jobs(app: App) -> list[int]:
    return [j.id for j in (*app.list_jobs("live"), *app.list_jobs("archive"),
                           *app.list_jobs("dead"))]


def test_a_bad_job_gets_one_error_and_nothing_is_written(cli: Cli, app: App) -> None:
    (cli.cwd / "myapp.py").write_text(APP_MODULE)
    results = cli.many(*(args for args, _ in BAD_JOBS))
    for result, (_, fragment) in zip(results, BAD_JOBS, strict=True):
        result.usage_error(fragment)  # exit 2, exactly one `error: ` line, nothing on stdout
    assert _all_jobs(app) == []
    assert app.queues() == []


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The task name of every job checked (every path to a NewJob goes through new_job)."""
    seen: list[str] = []
    real = _validate.new_job

    def counting(**options: Any) -> _validate.NewJob:
        seen.append(options["task"])
        return real(**options)

    monkeypatch.setattr(_validate, "new_job", counting)
    return seen


def test_each_command_checks_its_job_once(tmp_path: Path, checks: list[str]) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    with App(url) as app:
        app.migrate()
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(main, ["--database", url, "enqueue", *args])

    one = run("t", "--payload", '{"a": 1}')
    assert one.exit_code == 0, one.output
    assert checks == ["t"]
    many = run("t", "--count", "2500", "--json")  # three transactions of up to 1000
    assert many.exit_code == 0, many.output
    assert checks == ["t", "t"]
    bad = run("t", "--payload", '{"n": 1e400}')
    assert bad.exit_code == 2 and "is too large" in bad.output
    assert checks == ["t", "t", "t"]
    with App(url) as app:
        jobs = app.list_jobs(limit=10_000)
        assert len(jobs) == 2501
        assert {(j.task, j.queue) for j in jobs} == {("t", "default")}
        assert sum(j.payload == {"a": 1} for j in jobs) == 1
