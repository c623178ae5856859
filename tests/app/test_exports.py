"""`Worker` and `JobContext` come from `claimq` itself (issue 12, "Also"), importable first in a
fresh interpreter whichever claimq module is imported before them (no import cycle)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import claimq
import claimq.worker


def test_worker_and_job_context_are_exported() -> None:
    assert claimq.Worker is claimq.worker.Worker
    assert claimq.JobContext is claimq.worker.JobContext
    assert {"Worker", "JobContext"} <= set(claimq.__all__)


@pytest.mark.parametrize("first", ["claimq", "claimq.worker", "claimq.app", "claimq.cli",
                                   "claimq._processes", "claimq.task"])
def test_no_import_cycle(first: str) -> None:
    code = f"import {first}\nfrom claimq import JobContext, Worker\nprint(Worker.__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "Worker", done.stderr
