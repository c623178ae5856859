"""Schedules, retention and named leases as the backend stores them: schedule rows written whole
and refused on a taken name, due rows fired once with their next tick moved on, retention
policies per queue, prune batches bounded by their limit, by age and by row count, and a lease
held by one holder at a time."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from claimq.backends.base import PruneBatch, RetentionPolicy, SchedulePlan, ScheduleRow
from claimq.testing.conformance._harness import Subject, job_spec


def _schedule(subject: Subject, name: str = "tick", at: float = 60.0, **fields: object
              ) -> ScheduleRow:
    values: dict[str, object] = {
        "name": name, "task": "t", "payload_json": '{"n": 1}', "queue": "sq", "priority": 3,
        "max_attempts": 4, "timeout": 12.5, "cron": None, "every": 60.0, "tz": "UTC",
        "missed": "latest", "paused": False,
        "next_run_at": subject.at(at) + timedelta(microseconds=123456), "declared": None}
    values.update(fields)
    return ScheduleRow(**values)  # type: ignore[arg-type]


def _archived(subject: Subject, count: int, queue: str) -> list[int]:
    ids = subject.enqueue_many([job_spec(queue=queue) for _ in range(count)])
    for job_id in ids:
        job = subject.claim_one(queue=queue, start=True)
        assert job.id == job_id
        assert subject.complete(job) == {job_id}
        subject.advance(1)  # each finishes a second after the one before
    return ids


def _archive_ids(subject: Subject) -> set[int]:
    return {j.id for j in subject.jobs("archive")}


class TestScheduleRows:
    def test_a_schedule_is_stored_whole_and_its_name_is_taken_once(self, subject: Subject
                                                                   ) -> None:
        row = _schedule(subject, declared='{"every": 60}')
        assert subject.backend.insert_schedule(row) is True
        assert subject.backend.insert_schedule(_schedule(subject, task="other")) is False
        [stored] = subject.backend.list_schedules()
        assert stored.task == "t"  # the second insert wrote nothing
        assert (stored.name, stored.payload_json.replace(" ", ""), stored.queue,
                stored.priority, stored.max_attempts, stored.timeout, stored.cron,
                stored.every, stored.tz, stored.missed, stored.paused, stored.declared) == (
            "tick", '{"n":1}', "sq", 3, 4, 12.5, None, 60.0, "UTC", "latest", False,
            '{"every": 60}')
        assert stored.next_run_at == row.next_run_at  # to the microsecond, time-zone aware
        assert stored.last_run_at is None and stored.last_job_id is None
        assert stored.created_at == stored.updated_at == subject.at(0)
        assert subject.backend.list_schedules("tick") == [stored]
        assert subject.backend.list_schedules("nope") == []

    def test_update_and_delete_say_whether_the_schedule_was_there(self, subject: Subject
                                                                  ) -> None:
        assert subject.backend.update_schedule(_schedule(subject), _schedule(subject)) is False
        assert subject.backend.delete_schedule("tick") is False
        assert subject.backend.list_schedules() == []
        subject.backend.insert_schedule(_schedule(subject))
        [read] = subject.backend.list_schedules()
        subject.advance(5)
        changed = _schedule(subject, cron="*/5 * * * *", every=None, paused=True, priority=0)
        assert subject.backend.update_schedule(changed, read) is True
        [stored] = subject.backend.list_schedules()
        assert (stored.cron, stored.every, stored.paused, stored.priority) == (
            "*/5 * * * *", None, True, 0)
        assert stored.updated_at == subject.at(5)
        assert subject.backend.delete_schedule("tick") is True
        assert subject.backend.list_schedules() == []

    def test_an_update_made_from_a_stale_read_writes_nothing(self, subject: Subject) -> None:
        """The edit's compare-and-set: a row fired (next_run_at moved) or paused since the
        edit read it is left as it is."""
        subject.backend.insert_schedule(_schedule(subject, at=0))
        [read] = subject.backend.list_schedules()
        subject.advance(1)
        fired = subject.backend.fire_schedules(
            lambda row, now: SchedulePlan((), None, row.next_run_at + timedelta(seconds=60)),
            10, 60.0)
        assert fired == {"tick": []}
        [moved] = subject.backend.list_schedules()
        edited = replace(read, priority=9)
        assert subject.backend.update_schedule(edited, read) is False
        assert subject.backend.list_schedules() == [moved]
        paused = replace(moved, paused=True)
        assert subject.backend.update_schedule(paused, moved) is True
        assert subject.backend.update_schedule(replace(moved, priority=9), moved) is False
        [stored] = subject.backend.list_schedules()
        assert (stored.paused, stored.priority, stored.next_run_at) == (
            True, 3, moved.next_run_at)

    def test_due_schedules_fire_once_and_move_on(self, subject: Subject) -> None:
        subject.backend.insert_schedule(_schedule(subject, "due", at=0))
        subject.backend.insert_schedule(_schedule(subject, "later", at=3600))
        subject.backend.insert_schedule(_schedule(subject, "paused", at=0, paused=True))
        subject.backend.insert_schedule(_schedule(subject, "unreadable", at=0))
        subject.advance(1)
        seen: list[tuple[str, datetime]] = []

        def plan(row: ScheduleRow, now: datetime) -> SchedulePlan | None:
            seen.append((row.name, now))
            if row.name == "unreadable":
                return None
            return SchedulePlan([job_spec("t", {"tick": 1}, queue=row.queue)],
                                row.next_run_at, row.next_run_at + timedelta(seconds=60))

        fired = subject.backend.fire_schedules(plan, 10, 3600.0)
        assert sorted(seen) == [("due", subject.at(1)), ("unreadable", subject.at(1))]
        [job_id] = fired["due"]
        assert set(fired) == {"due"}
        assert subject.job(job_id).payload == {"tick": 1}
        due = subject.backend.list_schedules("due")[0]
        first = _schedule(subject, at=0).next_run_at
        assert due.next_run_at == first + timedelta(seconds=60)
        assert due.last_run_at == first and due.last_job_id == job_id
        unreadable = subject.backend.list_schedules("unreadable")[0]
        assert unreadable.next_run_at == first and unreadable.last_job_id is None
        seen.clear()
        assert subject.backend.fire_schedules(plan, 10, 3600.0) == {}  # "due" fired already
        assert seen == [("unreadable", subject.at(1))]

    def test_a_skipped_tick_moves_on_and_enqueues_nothing(self, subject: Subject) -> None:
        subject.backend.insert_schedule(_schedule(subject, at=0))
        subject.advance(1)
        fired = subject.backend.fire_schedules(
            lambda row, now: SchedulePlan([], None, row.next_run_at + timedelta(hours=1)),
            10, 3600.0)
        assert fired == {"tick": []}
        [stored] = subject.backend.list_schedules()
        assert stored.last_run_at is None and stored.last_job_id is None
        assert subject.counts() == (0, 0, 0)

    def test_next_schedule_in_is_the_earliest_unpaused_tick_from_the_databases_time(
            self, subject: Subject) -> None:
        """The scheduler's wait: seconds from the statement's time to the earliest next_run_at
        of the unpaused schedules (a paused one, however early, does not count), 0 or less
        once it is due, None with no schedule."""
        assert subject.backend.next_schedule_in() is None
        subject.backend.insert_schedule(_schedule(subject, "later", at=3600))
        subject.backend.insert_schedule(_schedule(subject, "paused", at=10, paused=True))
        subject.backend.insert_schedule(_schedule(subject, "soon", at=90))
        assert subject.backend.next_schedule_in() == pytest.approx(90.123456, abs=1e-5)
        subject.advance(30)
        assert subject.backend.next_schedule_in() == pytest.approx(60.123456, abs=1e-5)
        subject.advance(70)  # "soon" is due, not fired yet
        assert subject.backend.next_schedule_in() == pytest.approx(-9.876544, abs=1e-5)
        assert subject.backend.delete_schedule("soon") is True
        assert subject.backend.next_schedule_in() == pytest.approx(3500.123456, abs=1e-5)
        assert subject.backend.delete_schedule("later") is True
        assert subject.backend.next_schedule_in() is None  # only a paused one is left


class TestRetention:
    def test_policies_are_set_replaced_and_deleted(self, subject: Subject) -> None:
        assert subject.backend.list_retention() == []
        subject.backend.set_retention(RetentionPolicy("*", archive_age=86400.0))
        subject.backend.set_retention(RetentionPolicy("q", archive_rows=5, dead_age=60.0))
        subject.backend.set_retention(RetentionPolicy("q", dead_rows=7))
        assert subject.backend.list_retention() == [
            RetentionPolicy("*", archive_age=86400.0), RetentionPolicy("q", dead_rows=7)]
        assert subject.backend.delete_retention("q") is True
        assert subject.backend.delete_retention("q") is False
        assert subject.backend.list_retention() == [RetentionPolicy("*", archive_age=86400.0)]

    def test_prune_deletes_at_most_a_batch_of_rows_past_their_age(self, subject: Subject
                                                                  ) -> None:
        old = _archived(subject, 5, "q")
        subject.advance(100)
        young = _archived(subject, 2, "q")
        batch = PruneBatch("archive", "q", (), older_than=50.0, keep_rows=None, limit=2)
        assert [subject.backend.prune(batch) for _ in range(4)] == [2, 2, 1, 0]
        assert _archive_ids(subject) == set(young)
        assert not _archive_ids(subject) & set(old)

    def test_prune_keeps_a_queues_newest_rows(self, subject: Subject) -> None:
        ids = _archived(subject, 5, "q")
        other = _archived(subject, 2, "other")
        batch = PruneBatch("archive", "q", (), older_than=None, keep_rows=2, limit=100)
        assert subject.backend.prune(batch) == 3
        assert subject.backend.prune(batch) == 0
        assert _archive_ids(subject) == {*ids[-2:], *other}

    def test_prune_of_every_queue_skips_those_with_their_own_policy(self, subject: Subject
                                                                    ) -> None:
        mine = _archived(subject, 2, "own")
        _archived(subject, 3, "q")
        subject.advance(10)
        batch = PruneBatch("archive", None, ("own",), older_than=0.0, keep_rows=None, limit=100)
        assert subject.backend.prune(batch) == 3
        assert _archive_ids(subject) == set(mine)

    def test_prune_reaches_dead_letters_only_when_asked(self, subject: Subject) -> None:
        kept = _archived(subject, 1, "q")
        dead = subject.enqueue_many([job_spec(queue="q") for _ in range(2)])
        for job_id in dead:
            assert subject.backend.cancel(job_id) == "cancelled"
        subject.advance(10)
        batch = PruneBatch("dead", "q", (), older_than=0.0, keep_rows=None, limit=100)
        assert subject.backend.prune(batch) == 2
        assert subject.jobs("dead") == []
        assert _archive_ids(subject) == set(kept)


class TestLeases:
    def test_one_holder_at_a_time_until_it_runs_out(self, subject: Subject) -> None:
        backend = subject.backend
        assert backend.take_lease("pruner", "a", 60) is True
        assert backend.take_lease("pruner", "b", 60) is False
        assert backend.take_lease("other", "b", 60) is True  # leases are per name
        subject.advance(50)
        assert backend.take_lease("pruner", "a", 60) is True  # renewed: runs to 110 now
        subject.advance(50)
        assert backend.take_lease("pruner", "b", 60) is False
        subject.advance(11)
        assert backend.take_lease("pruner", "b", 60) is True  # a's ran out
        assert backend.take_lease("pruner", "a", 60) is False

    def test_only_the_holder_drops_it(self, subject: Subject) -> None:
        backend = subject.backend
        assert backend.take_lease("pruner", "a", 60) is True
        backend.drop_lease("pruner", "b")
        assert backend.take_lease("pruner", "b", 60) is False
        backend.drop_lease("pruner", "a")
        assert backend.take_lease("pruner", "b", 60) is True
