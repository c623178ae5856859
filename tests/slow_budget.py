"""The slow-test budget (issue 25), a pytest plugin that tests/conftest.py takes in: a test whose
call phase runs longer than the budget (30 s; `--slow-budget SECONDS`) says why in its own
docstring, on a line that starts with `Slow:` and gives the reason. A passing test over budget
without one is an error at its teardown, so the run fails and names the test, its time and the
rule (with pytest-xdist too: the error travels with the test's reports). `--durations=25`
shows where the suite's time goes; this keeps a test from quietly joining the slow ones.

Only the call phase counts (fixtures' set-up and teardown are the fixtures' business), and
only a passing call (a failing test is already red). The budget is for an unloaded machine: when
the load average per core is above 1 at the test's end (side by side, or a busy CI host), the
budget grows by that factor, so that load alone never turns a test red; `--slow-budget-fixed`
turns that off."""

from __future__ import annotations

import inspect
import os
from collections.abc import Generator

import pytest
from _pytest.reports import TestReport

BUDGET = 30.0
_CALL_SECONDS = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow-budget", type=float, default=BUDGET, metavar="SECONDS",
        help=f"a passing test whose call takes longer needs a 'Slow: <reason>' line in its "
             f"docstring, else it errors at teardown (default {BUDGET:.0f})")
    parser.addoption(
        "--slow-budget-fixed", action="store_true",
        help="do not stretch the slow-test budget by the load average per core")


def load_factor() -> float:
    """How much busier than one runnable process per core the machine was lately (at least 1)."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def slow_reason(item: pytest.Item) -> str | None:
    """The reason given on a `Slow:` line of the test function's docstring, if any."""
    function = getattr(item, "function", None)
    doc = inspect.getdoc(function) if function is not None else None
    for line in (doc or "").splitlines():
        text = line.strip()
        if text.startswith("Slow:") and text[len("Slow:"):].strip():
            return text[len("Slow:"):].strip()
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    report = yield
    if report.when == "call" and report.passed:
        item.stash[_CALL_SECONDS] = report.duration
    elif report.when == "teardown" and report.passed:
        seconds = item.stash.get(_CALL_SECONDS, 0.0)
        budget: float = item.config.getoption("slow_budget")
        if not item.config.getoption("slow_budget_fixed"):
            budget *= load_factor()
        if seconds > budget and slow_reason(item) is None:
            report.outcome = "failed"
            report.longrepr = (
                f"slow-test budget: the call took {seconds:.1f} s, over {budget:.1f} s, and the "
                f"docstring of {getattr(item, 'originalname', item.name)} has no 'Slow: <reason>' "
                "line (say why it needs the time, or make it faster)")
    return report
