"""Helpers for the CLI tests: they run the real `claimq` executable in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claimq import App, Job, Permanent

_NEXT_TO_PYTHON = Path(sys.executable).with_name("claimq")
CLAIMQ = str(_NEXT_TO_PYTHON) if _NEXT_TO_PYTHON.exists() else shutil.which("claimq") or "claimq"
TIMEOUT = 30
PARALLEL = 6


@dataclass
class Result:
    args: Sequence[str]
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self
        return json.loads(self.out)

    def ok(self) -> Result:
        assert self.code == 0, self
        return self

    def usage_error(self, *fragments: str) -> Result:
        """Bad input: exit 2, one line on stderr starting with `error: `, nothing on stdout."""
        return self.failed(2, *fragments)

    def failed(self, code: int, *fragments: str) -> Result:
        assert self.code == code, self
        assert self.err.startswith("error: "), self
        assert self.err.count("\n") == 1, self
        assert self.out == "", self
        for fragment in fragments:
            assert fragment in self.err, (fragment, self)
        return self


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAIMQ_DATABASE_URL"}
    env.update({"NO_COLOR": "1", "TERM": "dumb", "PYTHONUNBUFFERED": "1"})
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


class Cli:
    """Runs `claimq --database URL …` in a scratch working directory."""

    def __init__(self, url: str | None, cwd: Path) -> None:
        self.url = url
        self.cwd = cwd

    def argv(self, args: Sequence[str]) -> list[str]:
        prefix = [] if self.url is None else ["--database", self.url]
        return [CLAIMQ, *prefix, *args]

    def __call__(self, *args: str, input: str | None = None, **env: str) -> Result:
        stdin = None if input is not None else subprocess.DEVNULL
        proc = subprocess.run(
            self.argv(args), capture_output=True, text=True, timeout=TIMEOUT, cwd=self.cwd,
            env=cli_env(**env), input=input, stdin=stdin,
        )
        return Result(args, proc.returncode, proc.stdout, proc.stderr)

    def many(self, *commands: Sequence[str], stdin: dict[int, str] | None = None) -> list[Result]:
        """Independent invocations, a few at a time (start-up dominates their cost);
        `stdin` maps a command's index to the text it reads."""
        stdin = stdin or {}

        def one(i: int) -> Result:
            return self(*commands[i], input=stdin.get(i))

        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            return list(pool.map(one, range(len(commands))))

    def popen(self, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen(
            self.argv(args), text=True, cwd=self.cwd, env=kwargs.pop("env", cli_env()), **kwargs
        )


def archived(app: App, task: str, queue: str, result: Any = None) -> int:
    """A job that ran and succeeded (now in the archive)."""
    job_id = app.enqueue(task, {"q": queue}, queue=queue)
    job = _claim_one(app, queue, job_id)
    app.start(job)
    app.complete(job, result)
    return job_id


def dead_permanent(app: App, task: str, queue: str, message: str = "boom") -> int:
    """A job whose one attempt raised Permanent (now a dead letter with one error entry)."""
    job_id = app.enqueue(task, {"q": queue}, queue=queue)
    job = _claim_one(app, queue, job_id)
    attempt = app.start(job)
    assert app.fail(job, Permanent(message), attempt=attempt, worker_id="test-worker") == "dead"
    return job_id


def _claim_one(app: App, queue: str, job_id: int) -> Job:
    claimed = app.claim("test-worker", [queue], limit=1)
    assert [j.id for j in claimed] == [job_id], "use a queue of its own for each such job"
    return claimed[0]
