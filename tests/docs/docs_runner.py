"""Running the documentation's examples as a user would, on each backend the docs claim, with
failures that say where and why: the page's own line numbers in the traceback, and the jobs
that did not finish with their handlers' last errors (a bare `assert` after a drain says
nothing by itself)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from claimq import App

# Every backend the README claims; a page may claim fewer with `<!-- backends: sqlite -->`.
BACKENDS = ("sqlite", "postgresql", "mariadb")
BLOCK = re.compile(r"(?:^(<!-- not run[^\n]*-->)\n)?^```python\n(.*?)^```", re.S | re.M)
CLAIMS = re.compile(r"^<!-- backends: ([a-z, ]+) -->$", re.M)


@dataclass
class Script:
    """Python blocks of one document joined into one script, remembering where each began."""

    source: str  # the document's name, for messages
    parts: list[tuple[int, int, str]] = field(default_factory=list)  # (script line, doc line, code)

    @classmethod
    def of_blocks(cls, path: Path, text: str, *, first_only: bool = False) -> Script:
        script = cls(path.name)
        line = 1
        for match in BLOCK.finditer(text):
            if match.group(1):
                continue  # `<!-- not run: … -->`: its tested version lives elsewhere
            doc_line = text.count("\n", 0, match.start(2)) + 1
            script.parts.append((line, doc_line, match.group(2)))
            line += match.group(2).count("\n") + 2  # the code, then a blank line between
            if first_only:
                break
        return script

    @property
    def code(self) -> str:
        return "\n\n".join(code for _, _, code in self.parts)

    def doc_line(self, script_line: int) -> int | None:
        for start, doc_line, code in reversed(self.parts):
            if start <= script_line < start + code.count("\n") + 1:
                return doc_line + script_line - start
        return None

    def annotate(self, output: str, script_name: str) -> str:
        """`File "x.py", line 12` in tracebacks, followed by the document's own line."""
        def where(match: re.Match[str]) -> str:
            line = self.doc_line(int(match.group(1)))
            return match.group(0) + (f" ({self.source} line {line})" if line else "")

        return re.sub(rf'File "[^"]*{re.escape(script_name)}", line (\d+)', where, output)


def claimed_backends(text: str) -> tuple[str, ...]:
    """The backends a page's examples claim to run on: all of them unless it says fewer."""
    match = CLAIMS.search(text)
    if match is None:
        return BACKENDS
    claimed = tuple(b.strip() for b in match.group(1).split(","))
    assert set(claimed) <= set(BACKENDS), f"unknown backend in {match.group(0)}"
    return claimed


def environment(url: str) -> dict[str, str]:
    """The example's environment: claimq on `url`; on PostgreSQL the example's own tables go to
    the test's schema too (search_path), so that they are dropped with it, not left in the
    shared database for the next run to find."""
    env = {**os.environ, "CLAIMQ_DATABASE_URL": url, "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)
    schema = parse_qs(urlparse(url).query).get("schema")
    if url.startswith("postgresql") and schema:
        env["PGOPTIONS"] = f"-c search_path={schema[0]}"
    return env


def unfinished_jobs(url: str) -> str:
    """The jobs of the database that are not archived, with their last errors: what a failed
    example's handlers did."""
    try:
        with App(url) as app:
            lines = []
            for where in ("live", "dead"):
                for job in app.list_jobs(where, limit=20):  # type: ignore[arg-type]
                    last: dict[str, Any] = job.errors[-1] if job.errors else {}
                    error = f"{last.get('error')}: {last.get('message')}" if last else "no error"
                    lines.append(f"  #{job.id} {job.task} {job.status} "
                                 f"(attempts {job.attempts}): {error}")
    except Exception as exc:  # noqa: BLE001 - a report on a failure must not hide the failure
        return f"(could not read the jobs: {exc!r})"
    return "jobs not archived:\n" + "\n".join(lines) if lines else "no unfinished jobs"


def run(script: Script, args: list[str], cwd: Path, url: str, backend: str,
        script_name: str, timeout: float = 100) -> subprocess.CompletedProcess[str]:
    """Runs `python *args` in `cwd` on `url`; fails the test with the output (traceback lines
    mapped to the document's) and the unfinished jobs when it exits non-zero."""
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=environment(url),
                          timeout=timeout, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(
            f"{script.source}'s example failed on {backend} ({url}), exit {done.returncode}:\n"
            f"{script.annotate(done.stdout, script_name)}\n"
            f"{script.annotate(done.stderr, script_name)}\n{unfinished_jobs(url)}")
    return done
