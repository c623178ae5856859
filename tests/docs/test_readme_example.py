"""The README's Use example, as a user would take it: saved as myapp.py, imported (nothing is
enqueued), run as a script (it enqueues), and served by a real `claimq worker myapp:app`
process on SQLite until its due jobs are archived."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from polling import archived, live, wait_until, worker_process

from claimq import App

README = Path(__file__).resolve().parents[2] / "README.md"
CLAIMQ = str(Path(sys.executable).with_name("claimq"))
pytestmark = pytest.mark.timeout(120)


def use_example() -> str:
    """The first python block of the README's `## Use` section."""
    text = README.read_text()
    section = text.split("\n## Use\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the Use section has a python example"
    return match.group(1)


def test_the_use_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "myapp.py").write_text(use_example())
    database = tmp_path / "claimq.db"
    env = {**os.environ, "CLAIMQ_DATABASE_URL": f"sqlite:///{database}", "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)

    def python(*args: str) -> None:
        done = subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, timeout=60,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    python("-c", "import myapp")
    assert not database.exists(), "importing the module must not touch the database"
    python("myapp.py")

    with App(f"sqlite:///{database}") as app:
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
        assert len(re.findall(r"worker \S+ started:", output)) == 2, output
        assert "welcome mail to user 42" in output and "welcome mail to user 43" in output
        assert [j.id for j in live(app)] == [delayed[0].id]
        assert app.list_jobs("dead") == []
