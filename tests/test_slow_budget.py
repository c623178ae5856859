"""The slow-test budget (tests/slow_budget.py) on a small suite of its own, in a pytest run of
its own: the budget is lowered to 0.2 s (`--slow-budget`) so that a 0.3 s test stands for one
over 30 s, with no long sleeps. Side by side (pytest-xdist, as `make test` runs) too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

SUITE = '''
import time


def test_fast():
    pass


def test_slow_without_a_reason():
    time.sleep(0.3)


def test_slow_with_a_reason():
    """Waits out a lease.

    Slow: the lease must run out before the reaper may take the job back.
    """
    time.sleep(0.3)


def test_slow_with_an_empty_reason():
    """Slow:"""
    time.sleep(0.3)


def test_slow_and_failing():
    time.sleep(0.3)
    assert False, "its own failure"
'''


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(TESTS), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "slow_budget", "-p", "no:cacheprovider",
         "-rA", "-o", "addopts=", "test_suite.py", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def _outcomes(output: str) -> dict[str, set[str]]:
    """test name -> the outcomes of its summary lines (PASSED, FAILED, ERROR)."""
    found: dict[str, set[str]] = {}
    for outcome, name in re.findall(r"^(PASSED|FAILED|ERROR) test_suite\.py::(\w+)", output,
                                    re.M):
        found.setdefault(name, set()).add(outcome)
    return found


@pytest.mark.parametrize("side_by_side", [False, True], ids=["serial", "xdist"])
def test_a_slow_test_without_a_reason_fails_the_run(tmp_path: Path, side_by_side: bool) -> None:
    code, output = _run(tmp_path, "--slow-budget", "0.2", "--slow-budget-fixed",
                        *(["-n", "2"] if side_by_side else ["-n", "0"]))
    assert code == 1, output
    assert _outcomes(output) == {
        "test_fast": {"PASSED"},
        "test_slow_without_a_reason": {"PASSED", "ERROR"},  # the call passed, the budget not
        "test_slow_with_a_reason": {"PASSED"},
        "test_slow_with_an_empty_reason": {"PASSED", "ERROR"},
        "test_slow_and_failing": {"FAILED"},  # red already: no second error
    }, output
    assert re.search(r"slow-test budget: the call took 0\.\d s, over 0\.2 s, and the docstring "
                     r"of test_slow_without_a_reason has no 'Slow: <reason>' line", output), output
    assert "2 errors" in output, output


def test_within_the_budget_nothing_is_reported(tmp_path: Path) -> None:
    code, output = _run(tmp_path, "-n", "0")  # the default budget, 30 s
    assert code == 1, output  # test_slow_and_failing's own failure only
    assert "slow-test budget" not in output, output
    assert not re.search(r"^ERROR |\d+ errors?\b", output, re.M), output
    assert _outcomes(output)["test_slow_without_a_reason"] == {"PASSED"}


def test_the_budget_stretches_with_the_load_per_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import slow_budget

    monkeypatch.setattr(slow_budget.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(slow_budget.os, "getloadavg", lambda: (8.0, 1.0, 1.0))
    assert slow_budget.load_factor() == 4.0
    monkeypatch.setattr(slow_budget.os, "getloadavg", lambda: (0.5, 1.0, 1.0))
    assert slow_budget.load_factor() == 1.0
