"""One claim's lifecycle (Flight): the edges it may take, and an illegal one is an error here
(the tests run with inflight.STRICT set)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from claimq import App
from claimq._worker import inflight
from claimq._worker.inflight import Counters, Flight, IllegalTransition, InFlight, Registry
from claimq.backends.base import Owned
from claimq.job import Job


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Job]:
    app = App(f"sqlite:///{tmp_path / 'q.db'}")
    app.migrate()
    try:
        app.enqueue("t.flight", {})
        [claimed] = app.claim("w", limit=1, start=True)
        yield claimed
    finally:
        app.close()


def _flight(job: Job) -> InFlight:
    return InFlight(job, Owned(job.id, job.claim_token or ""), job.attempts, 30.0,
                    time.monotonic() + 30.0)


def _illegal() -> list[str]:
    seen, inflight.ILLEGAL[:] = list(inflight.ILLEGAL), []
    return seen


def test_a_claim_runs_finishes_and_is_forgotten(job: Job) -> None:
    flight = _flight(job)
    assert flight.state is Flight.WAITING
    assert (flight.running, flight.finished, flight.lost) == (False, False, False)
    flight.launch()
    assert flight.state is Flight.RUNNING and flight.running and not flight.finished
    flight.finish()
    assert flight.state is Flight.FINISHED and flight.finished and not flight.running
    flight.forget()
    assert flight.state is Flight.FINISHED


@pytest.mark.parametrize(("before", "lost"), [
    (Flight.WAITING, Flight.GIVEN_UP),
    (Flight.RUNNING, Flight.ABANDONED),
    (Flight.FINISHED, Flight.DROPPED),
])
def test_losing_a_claim_keeps_its_step_and_happens_once(job: Job, before: Flight,
                                                        lost: Flight) -> None:
    flight = _flight(job)
    flight.state = before
    assert flight.lose() is True
    assert flight.state is lost and flight.lost
    assert (flight.running, flight.finished) == (before.running, before.finished)
    assert flight.lose() is False  # lost already: nothing changes
    assert flight.state is lost


def test_a_lost_claim_ends_dropped(job: Job) -> None:
    abandoned = _flight(job)
    abandoned.launch()
    abandoned.lose()
    abandoned.finish()  # its thread returned at last
    assert abandoned.state is Flight.DROPPED
    given_up = _flight(job)
    given_up.lose()
    given_up.forget()
    assert given_up.state is Flight.DROPPED and given_up.finished


def test_a_claim_given_up_while_its_batch_was_started_still_gets_a_task(job: Job) -> None:
    """Executor.start awaits (trace contexts) between registering a batch and launching it: a
    claim given up meanwhile is launched all the same, and its Task returns at once."""
    for forgotten in (False, True):
        flight = _flight(job)
        flight.lose()
        if forgotten:
            flight.forget()
        flight.launch()
        assert flight.state is Flight.ABANDONED and flight.running
        flight.finish()
        assert flight.state is Flight.DROPPED


@pytest.mark.parametrize(("state", "move"), [
    (Flight.WAITING, "finish"),  # a handler that never started cannot return
    (Flight.WAITING, "forget"),  # a claim still ours is never forgotten before it ran
    (Flight.RUNNING, "launch"),  # started twice
    (Flight.RUNNING, "forget"),  # forgotten while its handler runs
    (Flight.FINISHED, "launch"),
    (Flight.FINISHED, "finish"),
    (Flight.ABANDONED, "launch"),
    (Flight.DROPPED, "finish"),
])
def test_an_illegal_transition_is_an_error(job: Job, state: Flight, move: str) -> None:
    flight = _flight(job)
    flight.state = state
    with pytest.raises(IllegalTransition, match=f"cannot {move} when {state.label}"):
        getattr(flight, move)()
    assert len(_illegal()) == 1


def test_outside_the_tests_an_illegal_transition_moves_the_claim_as_before(
        job: Job, monkeypatch: pytest.MonkeyPatch) -> None:
    """Production never raises for one: the claim takes the state the booleans it replaced
    would have shown (running cleared, finished set)."""
    monkeypatch.setattr(inflight, "STRICT", False)
    flight = _flight(job)
    flight.finish()
    assert flight.state is Flight.FINISHED
    assert _illegal() == []


def test_the_registry_moves_its_claims(job: Job) -> None:
    registry = Registry(2, Counters())
    flight = _flight(job)
    registry.add(flight)
    flight.launch()
    registry.finish(flight)
    assert flight.state is Flight.FINISHED and registry.handler_done.is_set()
    registry.forget(flight)
    assert flight.state is Flight.FINISHED and len(registry) == 0
    lost = _flight(job)
    registry.add(lost)
    lost.lose()
    registry.forget(lost)
    assert lost.state is Flight.DROPPED and registry.known(lost.owned)
