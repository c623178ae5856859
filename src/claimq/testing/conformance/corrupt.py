"""Rows another program wrote that cannot be decoded exactly: they never make a claim, a
listing or get_job() raise; each becomes a Job whose payload is a CorruptRow naming the column,
which a worker dead-letters. Needs the factory's `store_json`."""

from __future__ import annotations

import json

import pytest

from claimq.job import CorruptRow, Status
from claimq.testing.conformance._harness import Subject, failure

UNREADABLE = {
    "broken": '{"a": [1, ',
    "infinite": '{"n": 1e400}',
    "beyond_64_bits": '{"n": 18446744073709551616}',
    "below_64_bits": '{"n": -9223372036854775809}',
}
WRONG_SHAPE = {"errors": '{"not": "a list"}', "tags": '{"not": "a list"}',
               "retry": "[1, 2]"}


def _store(subject: Subject, job_id: int, column: str, text: str) -> bool:
    """Writes `text` into the job's column behind claimq's back. False when the database itself
    refuses it (jsonb, text[] or a CHECK): then the job must read back as it was."""
    store = subject.factory.store_json
    if store is None:
        pytest.skip("the backend's factory gives no store_json")
    before = subject.job(job_id)
    if store(subject.backend, job_id, column, text):
        return True
    after = subject.job(job_id)
    assert after == before and not isinstance(after.payload, CorruptRow), (
        f"the database refused {text!r} in {column}, yet the job changed: {after}")
    return False


def _cases() -> list[tuple[str, str]]:
    cases = [(column, text) for column in ("payload", "errors", "tags", "retry")
             for text in UNREADABLE.values()]
    return cases + list(WRONG_SHAPE.items())


def _ids(case: tuple[str, str]) -> str:
    column, text = case
    name = next((k for k, v in UNREADABLE.items() if v == text), "wrong_shape")
    return f"{column}-{name}"


class TestCorruptRows:
    @pytest.mark.parametrize("case", _cases(), ids=_ids)
    def test_a_corrupt_live_row_is_read_claimed_and_buried_without_raising(
        self, subject: Subject, case: tuple[str, str]
    ) -> None:
        column, text = case
        bad = subject.enqueue(payload={"ok": False}, queue="q", retry={"base": 1.0})
        good = subject.enqueue(payload={"ok": True}, queue="q")
        if not _store(subject, bad, column, text):
            return  # the database keeps such a value out by itself
        payload = subject.job(bad).payload
        assert isinstance(payload, CorruptRow) and column in payload, payload
        listed = {j.id: j for j in subject.jobs("live")}
        assert isinstance(listed[bad].payload, CorruptRow)
        assert listed[good].payload == {"ok": True}
        claimed = {j.id: j for j in subject.claim(queues=["q"], limit=10, start=True)}
        assert set(claimed) == {bad, good}, "the whole batch is claimed and returned"
        assert isinstance(claimed[bad].payload, CorruptRow)
        assert claimed[good].payload == {"ok": True}
        # What a worker does with it: a permanent failure, into dead letters.
        buried = subject.backend.fail([failure(claimed[bad], permanent=True,
                                               reason="permanent_error", message=str(payload))])
        assert buried.dead == {bad}
        dead = subject.job(bad)  # reads without raising
        assert dead.status == Status.DEAD
        if column != "errors":  # (the history may have been mended by the failure's append)
            assert isinstance(dead.payload, CorruptRow)
        assert [j.id for j in subject.jobs("dead")] == [bad]
        assert subject.complete(claimed[good]) == {good}

    @pytest.mark.parametrize("text", list(UNREADABLE.values()), ids=list(UNREADABLE))
    def test_a_corrupt_result_of_an_archived_job_is_read_without_raising(
        self, subject: Subject, text: str
    ) -> None:
        job = subject.running()
        subject.complete(job, '{"fine": 1}')
        if not _store(subject, job.id, "result", text):
            return
        stored = subject.job(job.id)
        assert stored.status == Status.SUCCEEDED and stored.result is None
        assert isinstance(stored.payload, CorruptRow) and "result" in stored.payload
        [listed] = subject.jobs("archive")
        assert isinstance(listed.payload, CorruptRow)

    def test_a_corrupt_history_can_still_be_appended_to(self, subject: Subject) -> None:
        job_id = subject.enqueue(queue="q", max_attempts=5)
        if not _store(subject, job_id, "errors", UNREADABLE["beyond_64_bits"]):
            return
        [job] = subject.claim(queues=["q"], start=True)
        assert subject.backend.fail([failure(job, delay=0, message="again")]).retried == {job_id}
        # The entry landed: as the history's last entry, or (where the database kept the
        # unreadable entry beside it) inside the note on the unreadable history.
        assert "again" in json.dumps(subject.job(job_id).errors)
        assert subject.job(job_id).status == Status.PENDING

    def test_numbers_that_do_round_trip_are_read_exactly(self, subject: Subject) -> None:
        job_id = subject.enqueue(queue="q")
        text = ('{"max": 18446744073709551615, "min": -9223372036854775808, '
                '"digits": "123456789012345678901234567890", "f": 1.5e300, "g": 1e20}')
        assert _store(subject, job_id, "payload", text), "valid JSON must be storable"
        assert subject.job(job_id).payload == {
            "max": 2**64 - 1, "min": -(2**63), "digits": "123456789012345678901234567890",
            "f": 1.5e300, "g": 1e20}
