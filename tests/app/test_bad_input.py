"""Bad input to every public entry point raises InvalidInput (a ValueError) with a clear
message, and writes nothing."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from app_support import claim_one, running, state

from claimq import App, InvalidInput, Job, Permanent, Retry, RetryPolicy
from claimq._validate import MAX_SECONDS
from claimq.backends import open_backend

NAIVE = datetime(2030, 1, 1, 12, 0)
AWARE = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
BIG = "x" * (1024 * 1024)

Call = Callable[[App], object]


def rejects(app: App, call: Call, match: str) -> InvalidInput:
    """`call` raises InvalidInput whose message matches, and nothing changed anywhere."""
    before = state(app)
    with pytest.raises(InvalidInput, match=match) as info:
        call(app)
    assert isinstance(info.value, ValueError)
    assert state(app) == before, "a rejected call must not write anything"
    return info.value


# -- enqueue ----------------------------------------------------------------------------------

ENQUEUE_CASES: dict[str, tuple[Call, str]] = {
    # payload
    "payload-set": (lambda a: a.enqueue("t", {"s": {1, 2}}), "not JSON-serialisable"),
    "payload-datetime": (lambda a: a.enqueue("t", {"d": AWARE}), "not JSON-serialisable"),
    "payload-date": (lambda a: a.enqueue("t", {"d": date(2030, 1, 1)}), "not JSON"),
    "payload-decimal": (lambda a: a.enqueue("t", {"d": Decimal("1.5")}), "not JSON"),
    "payload-bytes": (lambda a: a.enqueue("t", {"b": b"raw"}), "not JSON-serialisable"),
    "payload-nan": (lambda a: a.enqueue("t", {"n": math.nan}), "not JSON-serialisable"),
    "payload-inf": (lambda a: a.enqueue("t", {"n": -math.inf}), "not JSON-serialisable"),
    "payload-object": (lambda a: a.enqueue("t", {"o": object()}), "not JSON-serialisable"),
    "payload-tuple-key": (lambda a: a.enqueue("t", {(1, 2): "v"}), "not JSON-serialisable"),
    "payload-circular": (lambda a: a.enqueue("t", _circular()), "not JSON-serialisable"),
    "payload-list": (lambda a: a.enqueue("t", [1, 2]), "must be a JSON object"),  # type: ignore[arg-type]
    "payload-str": (lambda a: a.enqueue("t", "{}"), "must be a JSON object"),  # type: ignore[arg-type]
    "payload-int": (lambda a: a.enqueue("t", 5), "must be a JSON object"),  # type: ignore[arg-type]
    "payload-set-top": (lambda a: a.enqueue("t", {1, 2}), "must be a JSON object"),  # type: ignore[arg-type]
    "payload-too-big": (lambda a: a.enqueue("t", {"x": BIG}), "over the limit"),
    "payload-nul": (lambda a: a.enqueue("t", {"x": "a\x00b"}), "NUL"),
    "payload-surrogate": (lambda a: a.enqueue("t", {"x": "\ud800"}), "payload"),
    # numbers that would not read back as written (issue 12, defect 4)
    "payload-int-past-64-bits": (
        lambda a: a.enqueue("t", {"n": 2**64 + 1}), r"integer 18446744073709551617 at \['n'\]"
    ),
    "payload-int-2**63": (lambda a: a.enqueue("t", {"n": 2**63}), "signed 64-bit range"),
    "payload-int-below-64-bits": (
        lambda a: a.enqueue("t", {"n": -(2**63) - 1}), "signed 64-bit range"
    ),
    "payload-int-10**400": (
        lambda a: a.enqueue("t", {"a": [1, {"b": 10**400}]}), r"at \['a'\]\[1\]\['b'\]"
    ),
    "payload-nan-nested": (
        lambda a: a.enqueue("t", {"a": [math.nan]}), r"JSON-serialisable: nan .* at \['a'\]\[0\]"
    ),
    # queue names
    "queue-empty": (lambda a: a.enqueue("t", queue=""), "queue name must be a non-empty"),
    "queue-long": (lambda a: a.enqueue("t", queue="q" * 129), "longer than 128"),
    "queue-space": (lambda a: a.enqueue("t", queue="my queue"), "may hold only"),
    "queue-dash-first": (lambda a: a.enqueue("t", queue="-q"), "may hold only"),
    "queue-slash": (lambda a: a.enqueue("t", queue="a/b"), "may hold only"),
    "queue-unicode": (lambda a: a.enqueue("t", queue="qé"), "may hold only"),
    "queue-newline": (lambda a: a.enqueue("t", queue="q\n"), "may hold only"),
    "queue-int": (lambda a: a.enqueue("t", queue=5), "queue name must be"),  # type: ignore[arg-type]
    # task names
    "task-empty": (lambda a: a.enqueue(""), "task name must be a non-empty"),
    "task-none": (lambda a: a.enqueue(None), "task name must be"),  # type: ignore[arg-type]
    "task-long": (lambda a: a.enqueue("t" * 257), "longer than 256"),
    "task-digit-first": (lambda a: a.enqueue("1task"), "may hold only"),
    "task-space": (lambda a: a.enqueue("my task"), "may hold only"),
    "task-int": (lambda a: a.enqueue(42), "task name must be"),  # type: ignore[arg-type]
    # time
    "delay-negative": (lambda a: a.enqueue("t", delay=-1), "delay must be >= 0"),
    "delay-negative-td": (lambda a: a.enqueue("t", delay=timedelta(seconds=-5)), "delay must"),
    "delay-nan": (lambda a: a.enqueue("t", delay=math.nan), "delay must be finite"),
    "delay-inf": (lambda a: a.enqueue("t", delay=math.inf), "delay must be finite"),
    "delay-str": (lambda a: a.enqueue("t", delay="5"), "delay must be a number"),  # type: ignore[arg-type]
    "delay-bool": (lambda a: a.enqueue("t", delay=True), "delay must be a number"),
    "run_at-naive": (lambda a: a.enqueue("t", run_at=NAIVE), "timezone-aware"),
    "run_at-str": (lambda a: a.enqueue("t", run_at="2030-01-01"), "run_at must be a datetime"),  # type: ignore[arg-type]
    "run_at-date": (lambda a: a.enqueue("t", run_at=date(2030, 1, 1)), "run_at must be a datetime"),  # type: ignore[arg-type]
    "run_at-float": (lambda a: a.enqueue("t", run_at=1e9), "run_at must be a datetime"),  # type: ignore[arg-type]
    "run_at-and-delay": (lambda a: a.enqueue("t", run_at=AWARE, delay=5), "not both"),
    # bounded: 100 years at most (issue 12, defect 8)
    "delay-1e12": (lambda a: a.enqueue("t", delay=1e12), "delay must be at most 3155760000"),
    "delay-1e15": (lambda a: a.enqueue("t", delay=1e15), "delay must be at most"),
    "delay-just-past-max": (
        lambda a: a.enqueue("t", delay=MAX_SECONDS + 1), "delay must be at most"
    ),
    "delay-int-10**400": (lambda a: a.enqueue("t", delay=10**400), "delay must be finite"),
    "delay-timedelta-max": (lambda a: a.enqueue("t", delay=timedelta.max), "delay must be at"),
    "run_at-200-years": (
        lambda a: a.enqueue("t", run_at=datetime.now(UTC) + timedelta(days=200 * 365)),
        "more than 100 years from now",
    ),
    "run_at-datetime-max": (
        lambda a: a.enqueue("t", run_at=datetime.max.replace(tzinfo=UTC)), "100 years from now"
    ),
    "run_at-year-1": (
        lambda a: a.enqueue("t", run_at=datetime.min.replace(tzinfo=UTC)), "100 years from now"
    ),
    "timeout-1e12": (lambda a: a.enqueue("t", timeout=1e12), "timeout must be at most"),
    # numbers
    "priority-str": (lambda a: a.enqueue("t", priority="1"), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-float": (lambda a: a.enqueue("t", priority=1.5), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-bool": (lambda a: a.enqueue("t", priority=True), "priority must be an integer"),
    "priority-huge": (lambda a: a.enqueue("t", priority=10**7), "priority must be between"),
    "priority-low": (lambda a: a.enqueue("t", priority=-(10**7)), "priority must be between"),
    "max_attempts-zero": (lambda a: a.enqueue("t", max_attempts=0), "max_attempts must be between"),
    "max_attempts-neg": (lambda a: a.enqueue("t", max_attempts=-2), "max_attempts must be between"),
    "max_attempts-bool": (lambda a: a.enqueue("t", max_attempts=True), "max_attempts must be an"),
    "max_attempts-float": (lambda a: a.enqueue("t", max_attempts=2.0), "max_attempts must be an"),  # type: ignore[arg-type]
    "timeout-zero": (lambda a: a.enqueue("t", timeout=0), "timeout must be > 0"),
    "timeout-negative": (lambda a: a.enqueue("t", timeout=-1), "timeout must be > 0"),
    "timeout-str": (lambda a: a.enqueue("t", timeout="1"), "timeout must be a number"),  # type: ignore[arg-type]
    # tags and keys
    "tags-str": (lambda a: a.enqueue("t", tags="urgent"), "tags must be a list"),
    "tags-int": (lambda a: a.enqueue("t", tags=5), "tags must be a list"),  # type: ignore[arg-type]
    "tags-non-str": (lambda a: a.enqueue("t", tags=[1]), "each tag must be a string"),  # type: ignore[list-item]
    "tags-empty-tag": (lambda a: a.enqueue("t", tags=[""]), "each tag must be a string"),
    "tags-long-tag": (lambda a: a.enqueue("t", tags=["x" * 65]), "each tag must be a string"),
    "tags-nul": (lambda a: a.enqueue("t", tags=["a\x00"]), "each tag must be a string"),
    "tags-surrogate": (lambda a: a.enqueue("t", tags=["\udc00"]), "tag"),
    "tags-too-many": (lambda a: a.enqueue("t", tags=[f"t{i}" for i in range(33)]), "at most 32"),
    "key-empty": (lambda a: a.enqueue("t", idempotency_key=""), "idempotency_key must be"),
    "key-int": (lambda a: a.enqueue("t", idempotency_key=7), "idempotency_key must be"),  # type: ignore[arg-type]
    "key-long": (lambda a: a.enqueue("t", idempotency_key="k" * 256), "idempotency_key must"),
    "key-nul": (lambda a: a.enqueue("t", idempotency_key="k\x00"), "idempotency_key must be"),
    "key-surrogate": (lambda a: a.enqueue("t", idempotency_key="\ud83d"), "idempotency_key"),
    # retry policy
    "retry-str": (lambda a: a.enqueue("t", retry="fast"), "retry must be a RetryPolicy"),  # type: ignore[arg-type]
    "retry-unknown": (lambda a: a.enqueue("t", retry={"bogus": 1}), "unknown retry policy"),  # type: ignore[arg-type]
    "retry-negative": (lambda a: a.enqueue("t", retry={"base": -1}), "RetryPolicy needs"),  # type: ignore[arg-type]
    "retry-not-number": (lambda a: a.enqueue("t", retry={"base": "x"}), "must be numbers"),  # type: ignore[arg-type]
    # the caller's connection
    "conn-wrong-type": (lambda a: a.enqueue("t", conn=object()), "conn must be a"),
    "conn-wrong-type-keyed": (
        lambda a: a.enqueue("t", idempotency_key="k", conn="db"), "conn must be a"
    ),
}


def _circular() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


@pytest.mark.parametrize("case", sorted(ENQUEUE_CASES))
def test_enqueue_rejects(app: App, case: str) -> None:
    app.enqueue("seed", {"keep": 1}, queue="seed")  # something that must stay as it is
    call, match = ENQUEUE_CASES[case]
    rejects(app, call, match)


def test_enqueue_rejects_a_key_already_held_with_bad_input(app: App) -> None:
    """A held key does not excuse bad input: validation comes before the key lookup."""
    app.enqueue("t", idempotency_key="held")
    rejects(app, lambda a: a.enqueue("t", {"x": {1}}, idempotency_key="held"), "not JSON")


def test_payload_limit_is_the_apps(db_url: str) -> None:
    with App(db_url, payload_limit=100) as small:
        small.migrate()
        small.enqueue("t", {"x": "y" * 80})
        rejects(small, lambda a: a.enqueue("t", {"x": "y" * 100}), "over the limit of 100")


def test_task_object_enqueue_rejects(app: App) -> None:
    @app.task(name="tasks.add", queue="math")
    def add(x: int, y: int) -> int:
        return x + y

    @app.task(name="tasks.echo")
    def echo(value: object) -> object:
        return value

    rejects(app, lambda a: echo.enqueue(value={1}), "not JSON-serialisable")
    rejects(app, lambda a: add.enqueue(x={1}, y=2), "argument 'x' must be int, got set")
    rejects(app, lambda a: add.with_options(delay=-3).enqueue(x=1, y=2), "delay must be >= 0")
    rejects(app, lambda a: add.with_options(bogus=1), "unknown job option")
    rejects(app, lambda a: add.with_options(run_at=NAIVE).enqueue(x=1, y=2), "timezone-aware")
    rejects(app, lambda a: add.enqueue(x=2**64 + 1, y=2), r"integer .* at \['x'\]")
    rejects(app, lambda a: add.with_options(delay=1e12).enqueue(x=1, y=2), "delay must be at")
    rejects(app, lambda a: add.with_options(delay=1e12), "delay must be at most")
    rejects(
        app, lambda a: add.with_options(run_at=AWARE + timedelta(days=365 * 150)), "100 years"
    )


def test_async_enqueue_rejects(app: App) -> None:
    rejects(app, lambda a: asyncio.run(a.aenqueue("t", {"s": {1}})), "not JSON-serialisable")
    rejects(app, lambda a: asyncio.run(a.aenqueue_many([{"task": "t", "bogus": 1}])), "unknown")
    rejects(app, lambda a: asyncio.run(a.aenqueue("t", {"n": 2**64})), "signed 64-bit range")
    rejects(app, lambda a: asyncio.run(a.aenqueue("t", delay=1e15)), "delay must be at most")
    huge = [GOOD, {"task": "t", "payload": {"n": -(2**70)}}]
    rejects(app, lambda a: asyncio.run(a.aenqueue_many(huge)), "signed 64-bit range")


# -- enqueue_many: all or nothing -------------------------------------------------------------

GOOD = {"task": "t", "payload": {"ok": True}}

MANY_CASES: dict[str, tuple[list[Any], str]] = {
    "unknown-option": ([GOOD, {"task": "t", "prio": 1}, GOOD], "unknown enqueue option"),
    "missing-task": ([GOOD, {"payload": {}}], "needs a 'task'"),
    "not-a-dict": ([GOOD, ["t", {}]], "must be a dict"),
    "none-item": ([GOOD, None], "must be a dict"),
    "bad-payload-last": ([GOOD, GOOD, {"task": "t", "payload": {"x": {1}}}], "not JSON"),
    "bad-queue-first": ([{"task": "t", "queue": "no way"}, GOOD], "may hold only"),
    "negative-delay": ([GOOD, {"task": "t", "delay": -1}], "delay must be >= 0"),
    "naive-run_at": ([GOOD, {"task": "t", "run_at": NAIVE}], "timezone-aware"),
    "both-times": ([GOOD, {"task": "t", "run_at": AWARE, "delay": 1}], "not both"),
    "bool-priority": ([GOOD, {"task": "t", "priority": False}], "priority must be an integer"),
    "bad-key-after-keyed": (
        [{"task": "t", "idempotency_key": "fine"}, {"task": "t", "idempotency_key": ""}],
        "idempotency_key",
    ),
    "conn-option": ([{"task": "t", "conn": None}], "unknown enqueue option"),
    "huge-delay": ([GOOD, {"task": "t", "delay": 1e12}], "delay must be at most"),
    "far-run_at": (
        [GOOD, {"task": "t", "run_at": datetime.max.replace(tzinfo=UTC)}], "100 years from now"
    ),
    "int-past-64-bits": ([GOOD, {"task": "t", "payload": {"n": 2**64 + 1}}], "signed 64-bit"),
}


@pytest.mark.parametrize("case", sorted(MANY_CASES))
def test_enqueue_many_rejects_the_whole_batch(app: App, case: str) -> None:
    batch, match = MANY_CASES[case]
    rejects(app, lambda a: a.enqueue_many(batch), match)
    assert app.list_jobs() == [] and app.queues() == []


@pytest.mark.parametrize("case", ["bad-payload-last", "bad-queue-first", "bad-key-after-keyed",
                                  "not-a-dict", "unknown-option", "huge-delay", "far-run_at",
                                  "int-past-64-bits"])
def test_a_bad_job_deep_in_a_large_batch_rejects_all_of_it(app: App, case: str) -> None:
    """Past several COPY chunks (PostgreSQL checks each chunk while the one before is stored):
    the COPY is aborted with its transaction, nothing is queued, and the App works after."""
    batch, match = MANY_CASES[case]
    rejects(app, lambda a: a.enqueue_many([GOOD] * 2500 + batch + [GOOD] * 10), match)
    assert app.list_jobs() == [] and app.queues() == []
    assert len(app.enqueue_many([GOOD] * 300)) == 300


def test_a_bad_job_in_a_large_batch_inside_a_transaction_rolls_it_back(app: App) -> None:
    before = app.enqueue("t")
    with pytest.raises(InvalidInput, match="not JSON"), app.transaction() as conn:
        app.enqueue("t", queue="side-effect", conn=conn)
        app.enqueue_many([GOOD] * 1500 + [{"task": "t", "payload": {"x": {1}}}], conn=conn)
    assert [j.id for j in app.list_jobs()] == [before]


@pytest.mark.parametrize("size", [5, 250, 2500])
def test_enqueue_many_of_jobs_delayed_too_far_writes_none(app: App, size: int) -> None:
    """Defect 8: 250 such jobs raised OverflowError on PostgreSQL after 5 were accepted."""
    rejects(app, lambda a: a.enqueue_many([{"task": "t", "delay": 1e12}] * size), "at most")
    rejects(app, lambda a: a.enqueue_many([GOOD] * size + [{"task": "t", "delay": 1e15}]),
            "at most")
    assert app.list_jobs() == [] and app.queues() == []


def test_the_longest_delay_is_accepted_and_lists(app: App) -> None:
    """A job due almost 100 years from now is stored, listed and shown like any other."""
    far = datetime.now(UTC) + timedelta(days=99 * 365)
    ids = [app.enqueue("t", delay=MAX_SECONDS - 60), app.enqueue("t", run_at=far)]
    ids += app.enqueue_many([{"task": "t", "delay": MAX_SECONDS - 60}] * 250)
    listed = app.list_jobs(limit=1000)
    assert sorted(j.id for j in listed) == sorted(ids)
    assert all(j.run_at is not None and j.run_at.year >= 2100 for j in listed)
    assert app.get_job(ids[1]).run_at == far
    assert app.claim("w", limit=10) == []


# Numbers at the edges of what JSON storage keeps: each reads back equal and of the same type.
EXACT_PAYLOAD: dict[str, Any] = {
    "int64-max": 2**63 - 1,
    "int64-min": -(2**63),
    "float-1e16": 1e16,  # PostgreSQL's jsonb writes 1e+16 back as an integer unless told
    "float-1e19": 1e19,
    "float-max": 1.7976931348623157e308,
    "float-neg": -1.5e300,
    "float-tiny": 5e-324,
    "float-small": 1.5e-300,
    "float-tenth": 0.1,
    "nested": [{"a": 2**63 - 1, "b": [1e22, -(2**63)]}],
    "text": "1e+16 and 12345678901234567890 in a string stay text",
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def test_payload_numbers_at_the_edges_read_back_exactly(app: App) -> None:
    one = app.enqueue("t", EXACT_PAYLOAD, queue="exact")
    many = app.enqueue_many([{"task": "t", "payload": EXACT_PAYLOAD, "queue": "exact"}] * 250)
    assert _same(app.get_job(one).payload, EXACT_PAYLOAD), app.get_job(one).payload
    for job in app.list_jobs(queue="exact", limit=1000):
        assert _same(job.payload, EXACT_PAYLOAD), job.payload
    claimed = app.claim("w", ["exact"], limit=300, start=True)
    assert sorted(j.id for j in claimed) == sorted([one, *many])
    for job in claimed:
        assert _same(job.payload, EXACT_PAYLOAD), job.payload
        app.complete(job, EXACT_PAYLOAD)
    for job in app.list_jobs("archive", limit=1000):
        assert _same(job.result, EXACT_PAYLOAD), job.result


def test_a_result_that_cannot_be_stored_exactly_is_refused(app: App) -> None:
    job = running(app, lease=60)
    rejects(app, lambda a: a.complete(job, {"n": 2**64 + 1}), r"job result .* at \['n'\]")
    rejects(app, lambda a: a.complete(job, [10**400]), r"signed 64-bit range")
    rejects(app, lambda a: a.complete(job, 2**64), r"job result cannot be stored exactly")
    app.complete(job, 2**63 - 1)
    assert app.get_job(job.id).result == 2**63 - 1


@pytest.mark.parametrize("jobs", [5, None, {"task": "t"}, "tasks"])
def test_enqueue_many_rejects_what_is_not_a_list_of_dicts(app: App, jobs: Any) -> None:
    rejects(app, lambda a: a.enqueue_many(jobs), "enqueue_many")


# -- claim ------------------------------------------------------------------------------------

CLAIM_CASES: dict[str, tuple[Call, str]] = {
    "worker-empty": (lambda a: a.claim(""), "worker_id must be"),
    "worker-int": (lambda a: a.claim(7), "worker_id must be"),  # type: ignore[arg-type]
    "worker-long": (lambda a: a.claim("w" * 256), "worker_id must be"),
    "worker-nul": (lambda a: a.claim("w\x00"), "worker_id"),
    "worker-surrogate": (lambda a: a.claim("w\ud800"), "worker_id"),
    "queues-str": (lambda a: a.claim("w", "default"), "queues must be a list"),
    "queues-bad-name": (lambda a: a.claim("w", ["ok", "not ok"]), "may hold only"),
    "queues-int": (lambda a: a.claim("w", 5), "queues must be a list"),  # type: ignore[arg-type]
    "limit-negative": (lambda a: a.claim("w", limit=-1), "limit must be between"),
    "limit-huge": (lambda a: a.claim("w", limit=10**9), "limit must be between"),
    "limit-bool": (lambda a: a.claim("w", limit=True), "limit must be an integer"),
    "limit-float": (lambda a: a.claim("w", limit=2.0), "limit must be an integer"),  # type: ignore[arg-type]
    "lease-zero": (lambda a: a.claim("w", lease=0), "lease must be > 0"),
    "lease-negative": (lambda a: a.claim("w", lease=-5), "lease must be > 0"),
    "lease-nan": (lambda a: a.claim("w", lease=math.nan), "lease must be finite"),
    "lease-str": (lambda a: a.claim("w", lease="30"), "lease must be a number"),  # type: ignore[arg-type]
    "lease-1e12": (lambda a: a.claim("w", lease=1e12), "lease must be at most"),
}


@pytest.mark.parametrize("case", sorted(CLAIM_CASES))
def test_claim_rejects(app: App, case: str) -> None:
    app.enqueue("t")
    app.enqueue("t", queue="d")
    call, match = CLAIM_CASES[case]
    rejects(app, call, match)


# -- the owner's transitions with bad arguments -----------------------------------------------

OWNER_CASES: dict[str, tuple[Callable[[App, Job], object], str]] = {
    "start-not-a-job": (lambda a, j: a.start(j.id), "a Job"),  # type: ignore[arg-type]
    "start-lease-negative": (lambda a, j: a.start(j, lease=-1), "lease must be > 0"),
    "start-lease-nan": (lambda a, j: a.start(j, lease=math.nan), "lease must be finite"),
    "heartbeat-not-a-job": (lambda a, j: a.heartbeat(None), "a Job"),  # type: ignore[arg-type]
    "heartbeat-lease-zero": (lambda a, j: a.heartbeat(j, lease=0), "lease must be > 0"),
    "complete-not-a-job": (lambda a, j: a.complete({"id": j.id}), "a Job"),  # type: ignore[arg-type]
    "complete-result-set": (lambda a, j: a.complete(j, {1, 2}), "result is not JSON"),
    "complete-result-nan": (lambda a, j: a.complete(j, {"v": math.nan}), "result is not JSON"),
    "complete-result-datetime": (lambda a, j: a.complete(j, AWARE), "result is not JSON"),
    "complete-result-nul": (lambda a, j: a.complete(j, "a\x00"), "NUL"),
    "complete-result-surrogate": (lambda a, j: a.complete(j, "\ud800"), "result"),
    "complete-conn-wrong": (lambda a, j: a.complete(j, conn=object()), "conn must be a"),
    "fail-not-a-job": (lambda a, j: a.fail("job", RuntimeError()), "a Job"),  # type: ignore[arg-type]
    "fail-not-an-error": (lambda a, j: a.fail(j, "it broke"), "error must be an exception"),  # type: ignore[arg-type]
    "fail-error-class": (lambda a, j: a.fail(j, RuntimeError), "error must be an exception"),  # type: ignore[arg-type]
    "fail-attempt-zero": (lambda a, j: a.fail(j, RuntimeError(), attempt=0), "attempt must be"),
    "fail-attempt-bool": (lambda a, j: a.fail(j, RuntimeError(), attempt=True), "attempt must"),
    "fail-retry-str": (lambda a, j: a.fail(j, RuntimeError(), retry="x"), "RetryPolicy"),  # type: ignore[arg-type]
    "fail-worker-int": (lambda a, j: a.fail(j, RuntimeError(), worker_id=3), "worker_id"),  # type: ignore[arg-type]
    "release-not-a-job": (lambda a, j: a.release(j.id), "a Job"),  # type: ignore[arg-type]
    "release-delay-negative": (lambda a, j: a.release(j, delay=-1), "delay must be >= 0"),
    "release-delay-nan": (lambda a, j: a.release(j, delay=math.nan), "delay must be finite"),
    "release-delay-str": (lambda a, j: a.release(j, delay="1"), "delay must be a number"),  # type: ignore[arg-type]
    "release-delay-1e12": (lambda a, j: a.release(j, delay=1e12), "delay must be at most"),
    "complete-result-big-int": (lambda a, j: a.complete(j, {"n": 2**64}), "signed 64-bit"),
}


@pytest.mark.parametrize("case", sorted(OWNER_CASES))
def test_owner_transitions_reject(app: App, case: str) -> None:
    job = running(app, lease=60)
    call, match = OWNER_CASES[case]
    rejects(app, lambda a: call(a, job), match)
    app.complete(job, {"still": "owned"})  # the job was not disturbed


def test_start_of_a_fetched_job_rejects_a_bad_lease(app: App) -> None:
    app.enqueue("t")
    job = claim_one(app)
    rejects(app, lambda a: a.start(job, lease=-0.5), "lease must be > 0")
    assert app.start(job) == 1


def test_reap_rejects_a_bad_limit(app: App) -> None:
    for bad in (0, -1, True, 1.5, "10"):
        rejects(app, lambda a, bad=bad: a.reap(bad), "limit must be")


# -- operator operations ----------------------------------------------------------------------


def _dead_job(app: App) -> int:
    job = running(app, payload={"orig": 1}, queue="dq")
    app.fail(job, Permanent("x"))
    return job.id


RESURRECT_CASES: dict[str, tuple[Callable[[App, int], object], str]] = {
    "id-str": (lambda a, i: a.resurrect(str(i)), "job id must be an integer"),  # type: ignore[arg-type]
    "id-bool": (lambda a, i: a.resurrect(True), "job id must be an integer"),
    "id-zero": (lambda a, i: a.resurrect(0), "job id must be between"),
    "id-negative": (lambda a, i: a.resurrect(-i), "job id must be between"),
    "id-float": (lambda a, i: a.resurrect(float(i)), "job id must be an integer"),  # type: ignore[arg-type]
    "payload-list": (lambda a, i: a.resurrect(i, payload=[1]), "JSON object"),  # type: ignore[arg-type]
    "payload-set": (lambda a, i: a.resurrect(i, payload={"s": {1}}), "not JSON"),
    "payload-nan": (lambda a, i: a.resurrect(i, payload={"n": math.nan}), "not JSON"),
    "payload-too-big": (lambda a, i: a.resurrect(i, payload={"x": BIG}), "over the limit"),
    "priority-bool": (lambda a, i: a.resurrect(i, priority=True), "priority must be an integer"),
    "priority-str": (lambda a, i: a.resurrect(i, priority="9"), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-huge": (lambda a, i: a.resurrect(i, priority=2**40), "priority must be between"),
}


@pytest.mark.parametrize("case", sorted(RESURRECT_CASES))
def test_resurrect_rejects(app: App, case: str) -> None:
    job_id = _dead_job(app)
    call, match = RESURRECT_CASES[case]
    rejects(app, lambda a: call(a, job_id), match)
    app.resurrect(job_id)  # still a dead letter, untouched


SET_PRIORITY_CASES: dict[str, tuple[Callable[[App, int], object], str]] = {
    "priority-bool": (lambda a, i: a.set_priority(i, False), "priority must be an integer"),
    "priority-float": (lambda a, i: a.set_priority(i, 2.5), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-str": (lambda a, i: a.set_priority(i, "high"), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-none": (lambda a, i: a.set_priority(i, None), "priority must be an integer"),  # type: ignore[arg-type]
    "priority-huge": (lambda a, i: a.set_priority(i, 10**12), "priority must be between"),
    "id-str": (lambda a, i: a.set_priority(str(i), 1), "job id must be an integer"),  # type: ignore[arg-type]
    "id-zero": (lambda a, i: a.set_priority(0, 1), "job id must be between"),
    "id-huge": (lambda a, i: a.set_priority(2**64, 1), "job id must be between"),
}


@pytest.mark.parametrize("case", sorted(SET_PRIORITY_CASES))
def test_set_priority_rejects(app: App, case: str) -> None:
    job_id = app.enqueue("t", priority=3)
    call, match = SET_PRIORITY_CASES[case]
    rejects(app, lambda a: call(a, job_id), match)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda a: a.get_job("1"), "job id must be an integer"),
        (lambda a: a.get_job(-1), "job id must be between"),
        (lambda a: a.cancel(True), "job id must be an integer"),
        (lambda a: a.cancel(0), "job id must be between"),
        (lambda a: a.cancel(1.0), "job id must be an integer"),
    ],
    ids=["get-str", "get-negative", "cancel-bool", "cancel-zero", "cancel-float"],
)
def test_job_id_lookups_reject(app: App, call: Call, match: str) -> None:
    app.enqueue("t")
    rejects(app, call, match)


PURGE_CASES: dict[str, tuple[Call, str]] = {
    "table-live": (lambda a: a.purge("live"), "purge takes 'archive' or 'dead'"),  # type: ignore[arg-type]
    "table-jobs": (lambda a: a.purge("jobs"), "purge takes 'archive' or 'dead'"),  # type: ignore[arg-type]
    "older-negative": (lambda a: a.purge("archive", older_than=-1), "older_than must be >= 0"),
    "older-nan": (lambda a: a.purge("dead", older_than=math.nan), "older_than must be finite"),
    "older-str": (lambda a: a.purge("archive", older_than="1d"), "older_than must be a number"),  # type: ignore[arg-type]
    "older-bool": (lambda a: a.purge("archive", older_than=True), "older_than must be a number"),
    "older-1e15": (lambda a: a.purge("archive", older_than=1e15), "older_than must be at most"),
    "queue-bad": (lambda a: a.purge("archive", queue="bad queue"), "may hold only"),
    "queue-int": (lambda a: a.purge("archive", queue=5), "queue name must be"),  # type: ignore[arg-type]
    "task-bad": (lambda a: a.purge("dead", task="9task"), "may hold only"),
    "task-empty": (lambda a: a.purge("dead", task=""), "task name must be"),
}


@pytest.mark.parametrize("case", sorted(PURGE_CASES))
def test_purge_rejects(app: App, case: str) -> None:
    done = running(app)
    app.complete(done)
    _dead_job(app)
    call, match = PURGE_CASES[case]
    rejects(app, call, match)


LIST_CASES: dict[str, tuple[Call, str]] = {
    "table-bad": (lambda a: a.list_jobs("jobs"), "table must be"),  # type: ignore[arg-type]
    "limit-zero": (lambda a: a.list_jobs(limit=0), "limit must be between"),
    "limit-bool": (lambda a: a.list_jobs(limit=True), "limit must be an integer"),
    "limit-str": (lambda a: a.list_jobs(limit="10"), "limit must be an integer"),  # type: ignore[arg-type]
    "offset-negative": (lambda a: a.list_jobs(offset=-1), "offset must be between"),
    "queue-bad": (lambda a: a.list_jobs(queue="a b"), "may hold only"),
    "queue-int": (lambda a: a.list_jobs(queue=1), "queue name must be"),  # type: ignore[arg-type]
    "task-bad": (lambda a: a.list_jobs(task="a b"), "may hold only"),
    "status-unknown": (lambda a: a.list_jobs(status="running"), "status must be one of"),
    "status-int": (lambda a: a.list_jobs(status=1), "status must be one of"),  # type: ignore[arg-type]
    "status-dead-live": (lambda a: a.list_jobs("dead", status="pending"), "status must be one"),
}


@pytest.mark.parametrize("case", sorted(LIST_CASES))
def test_list_jobs_rejects(app: App, case: str) -> None:
    app.enqueue("t")
    call, match = LIST_CASES[case]
    rejects(app, call, match)


QUEUE_CASES: dict[str, tuple[Call, str]] = {
    "name-empty": (lambda a: a.configure_queue(""), "queue name must be a non-empty"),
    "name-long": (lambda a: a.configure_queue("q" * 200), "longer than 128"),
    "name-bad": (lambda a: a.configure_queue("q q", paused=True), "may hold only"),
    "name-int": (lambda a: a.configure_queue(3), "queue name must be"),  # type: ignore[arg-type]
    "max_workers-zero": (lambda a: a.configure_queue("q", max_workers=0), "max_workers must be"),
    "max_workers-neg": (lambda a: a.configure_queue("q", max_workers=-3), "max_workers must be"),
    "max_workers-bool": (lambda a: a.configure_queue("q", max_workers=True), "max_workers must"),
    "max_workers-str": (lambda a: a.configure_queue("q", max_workers="3"), "max_workers must"),  # type: ignore[arg-type]
    "max_workers-float": (lambda a: a.configure_queue("q", max_workers=3.0), "max_workers must"),  # type: ignore[arg-type]
    "lease-zero": (lambda a: a.configure_queue("q", lease=0), "lease must be > 0"),
    "lease-negative": (lambda a: a.configure_queue("q", lease=-1), "lease must be > 0"),
    "lease-inf": (lambda a: a.configure_queue("q", lease=math.inf), "lease must be finite"),
    "lease-1e12": (lambda a: a.configure_queue("q", lease=1e12), "lease must be at most"),
    "timeout-1e15": (lambda a: a.configure_queue("q", timeout=1e15), "timeout must be at most"),
    "timeout-zero": (lambda a: a.configure_queue("q", timeout=0), "timeout must be > 0"),
    "timeout-str": (lambda a: a.configure_queue("q", timeout="5"), "timeout must be a number"),  # type: ignore[arg-type]
    "paused-str": (lambda a: a.configure_queue("q", paused="no"), "paused must be"),  # type: ignore[arg-type]
    "paused-int": (lambda a: a.configure_queue("q", paused=1), "paused must be"),  # type: ignore[arg-type]
    "active-str": (lambda a: a.configure_queue("q", active="yes"), "active must be"),  # type: ignore[arg-type]
    "pause-bad-name": (lambda a: a.pause("bad name"), "may hold only"),
    "resume-empty": (lambda a: a.resume(""), "queue name must be"),
    "activate-bad": (lambda a: a.activate("-x"), "may hold only"),
    "deactivate-int": (lambda a: a.deactivate(0), "queue name must be"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", sorted(QUEUE_CASES))
def test_configure_queue_rejects(app: App, case: str) -> None:
    app.configure_queue("q", max_workers=2, lease=10)
    call, match = QUEUE_CASES[case]
    rejects(app, call, match)


# -- constructors: App, backends, RetryPolicy, Retry, tasks --------------------------------------

APP_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "retention-negative": ({"idempotency_retention": -1}, "idempotency_retention must be >= 0"),
    "retention-nan": ({"idempotency_retention": math.nan}, "idempotency_retention must be"),
    "retention-str": ({"idempotency_retention": "1h"}, "idempotency_retention must be a"),
    "retention-td-neg": ({"idempotency_retention": timedelta(-1)}, "idempotency_retention"),
    "payload_limit-tiny": ({"payload_limit": 1}, "payload_limit must be between"),
    "payload_limit-bool": ({"payload_limit": True}, "payload_limit must be an integer"),
    "payload_limit-float": ({"payload_limit": 1e6}, "payload_limit must be an integer"),
    "payload_limit-huge": ({"payload_limit": 2**40}, "payload_limit must be between"),
    "max_attempts-zero": ({"default_max_attempts": 0}, "default_max_attempts must be between"),
    "max_attempts-bool": ({"default_max_attempts": False}, "default_max_attempts must be an"),
    "database-int": ({"database": 5}, "database"),
    "database-bytes": ({"database": b"sqlite:///x.db"}, "database"),
}


@pytest.mark.parametrize("case", sorted(APP_CASES))
def test_app_constructor_rejects(case: str, tmp_path: Path) -> None:
    kwargs, match = APP_CASES[case]
    kwargs = {"database": f"sqlite:///{tmp_path}/c.db", **kwargs}
    with pytest.raises(InvalidInput, match=match):
        App(**kwargs)
    assert list(tmp_path.iterdir()) == [], "nothing is created"


BAD_URLS: dict[str, tuple[Any, str]] = {
    "oracle": ("oracle://root@localhost/db", "unsupported database URL"),
    "empty": ("", "unsupported database URL"),
    "no-scheme": ("claimq.db", "unsupported database URL"),
    "http": ("http://example.com", "unsupported database URL"),
    "not-a-string": (42, "database URL must be a string"),
    "sqlite-relative-netloc": ("sqlite://claimq.db", "not a SQLite URL"),
    "sqlite-no-path": ("sqlite:///", "not a SQLite URL"),
    "sqlite-unknown-option": ("sqlite:///{tmp}/x.db?journal=off", "unknown SQLite URL option"),
    "sqlite-busy-text": ("sqlite:///{tmp}/x.db?busy_timeout=soon", "busy_timeout must be"),
    "sqlite-busy-negative": ("sqlite:///{tmp}/x.db?busy_timeout=-1", "busy_timeout must be"),
    "sqlite-busy-nan": ("sqlite:///{tmp}/x.db?busy_timeout=nan", "busy_timeout must be"),
    "sqlite-synchronous": ("sqlite:///{tmp}/x.db?synchronous=maybe", "synchronous must be"),
    "pg-bad-schema": ("postgresql://u@127.0.0.1:1/db?schema=Bad-Name", "schema must be"),
    "pg-schema-injection": ("postgresql://u@127.0.0.1:1/db?schema=x;drop", "schema must be"),
    "pg-schema-newline": ("postgresql://u@127.0.0.1:1/db?schema=claimq%0A", "schema must be"),
    "pg-pool-text": ("postgresql://u@127.0.0.1:1/db?pool_size=many", "pool_size must be"),
    "pg-pool-zero": ("postgresql://u@127.0.0.1:1/db?pool_size=0", "pool_size must be"),
    "mysql-no-database": ("mysql://root@127.0.0.1:1/", "names its database"),
    "mysql-unknown-option": ("mysql://root@127.0.0.1:1/db?schema=x", "unknown MySQL URL"),
    "mysql-driver": ("mariadb://root@127.0.0.1:1/db?driver=odbc", "driver must be"),
    "mysql-lock-wait": ("mysql://root@127.0.0.1:1/db?lock_wait_timeout=0", "lock_wait_timeout"),
    "mysql-bad-port": ("mysql://root@127.0.0.1:port/db", "invalid database URL"),
    "mysql-read-timeout": ("mysql://root@127.0.0.1:1/db?read_timeout=5&lock_wait_timeout=10",
                           "read_timeout must be longer"),
}


@pytest.mark.parametrize("case", sorted(BAD_URLS))
def test_open_backend_rejects_bad_urls(case: str, tmp_path: Path) -> None:
    url, match = BAD_URLS[case]
    if isinstance(url, str):
        url = url.replace("{tmp}", str(tmp_path))
    with pytest.raises(InvalidInput, match=match):
        open_backend(url)
    assert list(tmp_path.iterdir()) == [], "nothing is created"
    if isinstance(url, str) and url:  # App("") means the default URL, like App()
        with pytest.raises(InvalidInput, match=match):
            App(url).migrate()
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"base": -1}, "RetryPolicy needs"),
        ({"cap": -0.5}, "RetryPolicy needs"),
        ({"factor": 0.5}, "RetryPolicy needs"),
        ({"jitter": 1.5}, "RetryPolicy needs"),
        ({"jitter": -0.1}, "RetryPolicy needs"),
        ({"base": math.nan}, "RetryPolicy"),
        ({"factor": math.nan}, "RetryPolicy"),
        ({"cap": math.inf}, "RetryPolicy"),
        ({"base": "1"}, "RetryPolicy"),
        ({"factor": None}, "RetryPolicy"),
        ({"jitter": True}, "RetryPolicy"),
        ({"cap": 1e12}, "RetryPolicy base and cap must be at most"),
        ({"base": MAX_SECONDS * 2}, "RetryPolicy base and cap must be at most"),
    ],
    ids=lambda v: repr(v),
)
def test_retry_policy_rejects(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        RetryPolicy(**kwargs)


@pytest.mark.parametrize(
    "data", [{"bogus": 1}, {"base": "fast"}, {"base": None}, {"cap": [1]}, {"base": -2}],
    ids=repr,
)
def test_retry_policy_from_dict_rejects(data: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput, match="retry policy|RetryPolicy"):
        RetryPolicy.from_dict(data)


@pytest.mark.parametrize(
    "after", [-1, -0.001, timedelta(seconds=-1), math.nan, math.inf, "5", None, True, 1e12,
              timedelta.max], ids=repr
)
def test_retry_after_rejects(after: Any) -> None:
    with pytest.raises(InvalidInput, match=r"Retry\(after=...\)"):
        Retry(after=after)


def test_retry_after_accepts_good_delays() -> None:
    assert Retry(after=0).after == 0
    assert Retry(after=timedelta(minutes=1)).after == 60
    assert Retry(after=2).after == 2.0


def test_task_registration_rejects(app: App) -> None:
    def handler() -> None: ...

    for kwargs, match in [
        ({"name": "bad name"}, "may hold only"),
        ({"queue": ""}, "queue name must be"),
        ({"priority": "hi"}, "priority must be an integer"),
        ({"max_attempts": 0}, "max_attempts must be between"),
        ({"retry": {"base": 1}}, "retry must be a RetryPolicy"),
        ({"timeout": -1}, "timeout must be > 0"),
    ]:
        with pytest.raises(InvalidInput, match=match):
            app.task(**kwargs)(handler)
    assert app.tasks == {}
    assert app.queues() == []
