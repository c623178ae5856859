"""Real worker processes for the worker tests: start, signal, read their logs, wait on the
database. Every wait has a timeout; every process is killed (by its own process group id) when
the test ends, whatever happened."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, TypeVar

from polling import ALL, archived, dead, finished_ids, live, wait_until  # noqa: F401 - the tests import them from here

from claimq import App

HERE = Path(__file__).resolve().parent
T = TypeVar("T")


def wait_finished(app: App, ids: list[int] | set[int], timeout: float = 20.0) -> None:
    wanted = set(ids)
    wait_until(lambda: wanted <= finished_ids(app), timeout,
               f"jobs {sorted(wanted)} to reach archive or dead letters")


class WorkerProcess:
    """One `python -c "import worker_testapp; worker_testapp.main()"` process."""

    def __init__(self, url: str, log_path: Path, **options: Any) -> None:
        self.url = url
        self.log_path = log_path
        env = {
            **os.environ,
            "CLAIMQ_DATABASE_URL": url,
            "CLAIMQ_TEST_WORKER": json.dumps(options),
            "PYTHONPATH": os.pathsep.join(
                [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
            "PYTHONUNBUFFERED": "1",
        }
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in kill()/wait()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import worker_testapp; worker_testapp.main()"],
            cwd=HERE,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: cleanup reaches its children too
        )
        self.pid = self.proc.pid

    # -- log -----------------------------------------------------------------------------------

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_log(self, pattern: str, timeout: float = 15.0, count: int = 1) -> list[re.Match[str]]:
        """Wait until `pattern` (a regex) matched `count` times in the log; returns the matches."""
        rx = re.compile(pattern)

        def found() -> list[re.Match[str]] | None:
            matches = list(rx.finditer(self.log()))
            if len(matches) >= count:
                return matches
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"worker exited ({self.proc.returncode}) before logging {pattern!r}:\n"
                    + self.log()[-4000:]
                )
            return None

        return wait_until(found, timeout, f"log line {pattern!r} x{count}")

    def worker_ids(self) -> list[str]:
        return re.findall(r"worker (\S+) started:", self.log())

    def wait_started(self, timeout: float = 20.0) -> str:
        """Wait for the worker's start line; returns its worker id."""
        return self.wait_log(r"worker (\S+) started:", timeout)[0].group(1)

    def wait_handler(self, job_id: int, what: str = "handler-start", timeout: float = 15.0) -> None:
        self.wait_log(rf"{what} {job_id} ", timeout)

    def counters(self) -> dict[str, int]:
        """The counters of the worker's final `worker <id> stopped: {...}` line."""
        lines = re.findall(r"worker \S+ stopped: (\{.*\})", self.log())
        assert lines, "the worker logged no final counters line:\n" + self.log()[-4000:]
        return ast.literal_eval(lines[-1])  # type: ignore[no-any-return]

    # -- process -------------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.proc.poll() is None

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"worker did not exit within {timeout}s:\n" + self.log()[-4000:]
            ) from None
        self._log.close()
        return rc

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait for the exit code."""
        self.signal(signal.SIGTERM)
        return self.wait(timeout)

    def kill(self) -> None:
        """Kill the process and its whole process group (children of a supervisor too)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self._log.close()


