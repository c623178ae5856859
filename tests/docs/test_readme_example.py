"""The README's Use example, as a user would take it: saved as myapp.py, imported (nothing is
enqueued), run as a script (it enqueues), and served by a real `claimq worker myapp:app`
process until its due jobs are archived, on each backend the README claims (SQLite,
PostgreSQL, MariaDB). A failure names the README's own line and the unfinished jobs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from docs_runner import Script, environment, run, unfinished_jobs
from polling import archived, live, wait_until, worker_process

from claimq import App

README = Path(__file__).resolve().parents[2] / "README.md"
CLAIMQ = str(Path(sys.executable).with_name("claimq"))
pytestmark = pytest.mark.timeout(120)


def use_example() -> Script:
    """The first python block of the README's `## Use` section."""
    text = README.read_text()
    start = text.index("\n## Use\n") + 1
    section = text[start:].split("\n## ", 1)[0]
    script = Script.of_blocks(README, text[:start] + section, first_only=True)
    assert script.parts and script.parts[0][1] > text.count("\n", 0, start), (
        "the Use section has a python example")
    return script


def test_the_use_example_runs_as_written(tmp_path: Path, db_url: str) -> None:
    example = use_example()
    (tmp_path / "myapp.py").write_text(example.code)
    backend = db_url.split(":", 1)[0].replace("mysql", "mariadb")
    env = environment(db_url)

    def python(*args: str) -> None:
        run(example, list(args), tmp_path, db_url, backend, "myapp.py", timeout=60)

    python("-c", "import myapp")
    if db_url.startswith("sqlite:///"):
        assert not Path(db_url.removeprefix("sqlite:///")).exists(), (
            "importing the module must not touch the database")
    else:
        with App(db_url) as untouched:
            assert untouched.backend.schema_version() == 0, (
                "importing the module must not touch the database")
    python("myapp.py")

    with App(db_url) as app:
        jobs = live(app)
        assert len(jobs) == 3
        for job in jobs:
            assert (job.task, job.queue, job.max_attempts, job.timeout) == (
                "myapp.send_welcome", "mail", 5, 30
            )
        assert sorted(j.payload["user_id"] for j in jobs) == [42, 42, 43]
        delayed = [j for j in jobs if j.idempotency_key == "welcome-42"]
        assert len(delayed) == 1 and delayed[0].priority == 5

        log_path = tmp_path / "worker.log"
        with worker_process(
            [CLAIMQ, "worker", "myapp:app", "--queues", "mail,default", "--concurrency", "20",
             "--processes", "2", "--poll-interval", "0.1"], tmp_path, env, log_path,
        ) as worker:
            due = {j.id for j in jobs} - {delayed[0].id}
            wait_until(lambda: {j.id for j in archived(app)} == due or worker.poll(), 60,
                       "the two due jobs to be archived")
            wait_until(lambda: len(re.findall(r"worker \S+ started:", log_path.read_text()))
                       == 2 or worker.poll() is not None, 60, "both worker processes")
        output = log_path.read_text()
        assert len(re.findall(r"worker \S+ started:", output)) == 2, (
            f"{output}\n{unfinished_jobs(db_url)}")
        assert "welcome mail to user 42" in output and "welcome mail to user 43" in output, (
            f"{output}\n{unfinished_jobs(db_url)}")
        assert [j.id for j in live(app)] == [delayed[0].id]
        assert app.list_jobs("dead") == []
