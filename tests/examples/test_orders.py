"""examples/orders.py tested the way a user tests their own claimq app: claimq.testing's
drain() and assertions, on a real SQLite file, with the real worker in the test's process."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import orders
import pytest

from claimq.clock import FakeClock
from claimq.testing import (
    adrain,
    all_enqueued,
    assert_enqueued,
    drain,
    refute_enqueued,
    use_database,
)

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[object]:
    orders.SENT.clear()
    with use_database(orders.app, f"sqlite:///{tmp_path}/orders.db") as app:
        yield app


def test_an_order_is_enqueued_with_its_arguments(app: object) -> None:
    orders.place_order.enqueue(order_id=7, items=("tea", "cake"))
    job = assert_enqueued(orders.app, orders.place_order, order_id=7)
    assert job.queue == "orders"
    assert_enqueued(orders.app, "orders.place_order", order_id=7, items=["tea", "cake"])
    refute_enqueued(orders.app, orders.place_order, order_id=8)
    refute_enqueued(orders.app, orders.send_receipt)
    with pytest.raises(AssertionError, match=r"no job of 'orders.place_order' with \{'order_id': "
                       r"8\} is enqueued; waiting: #\d+ \{'order_id': 7"):
        assert_enqueued(orders.app, orders.place_order, order_id=8)
    with pytest.raises(AssertionError, match="expected no job"):
        refute_enqueued(orders.app, orders.place_order, items=["tea", "cake"])


def test_drain_runs_the_order_and_the_receipt_it_enqueues(app: object) -> None:
    orders.place_order.enqueue(order_id=7, items=["tea"])
    orders.place_order.enqueue(order_id=8, items=["cake"])
    # only the orders queue: the receipts wait
    assert drain(orders.app, "orders").succeeded == 2
    assert [j.payload for j in all_enqueued(orders.app, orders.send_receipt)] == [
        {"order_id": 7}, {"order_id": 8}]
    assert orders.SENT == []
    done = drain(orders.app)
    assert (done.succeeded, done.retried, done.dead) == (2, 0, 0)
    assert sorted(orders.SENT) == [7, 8]
    assert all_enqueued(orders.app) == []
    results = {j.payload["order_id"]: j.result for j in orders.app.list_jobs("archive")
               if j.task == "orders.place_order"}
    assert results == {7: {"order_id": 7, "items": 1}, 8: {"order_id": 8, "items": 1}}


def test_a_permanent_failure_is_dead_lettered(app: object) -> None:
    job = orders.place_order.enqueue(order_id=9, items=[])
    done = drain(orders.app)
    assert done.dead == 1
    assert done.errors == (
        f"job {job} (orders.place_order) attempt 1: Permanent: order 9 has no items",)
    [dead] = orders.app.list_jobs("dead")
    assert dead.errors[-1]["message"] == "order 9 has no items"
    assert drain(orders.app).errors == ()  # only the attempts of that drain


def test_drain_leaves_jobs_not_due_until_the_clock_moves(tmp_path: Path) -> None:
    orders.SENT.clear()  # (no `app` fixture here: another test's receipts may be in it)
    clock = FakeClock(start=datetime.now(UTC))
    orders.app.clock = clock
    try:
        with use_database(orders.app, f"sqlite:///{tmp_path}/later.db"):
            orders.send_receipt.with_options(delay=3600).enqueue(order_id=5)
            assert drain(orders.app).ran == 0
            assert_enqueued(orders.app, orders.send_receipt, order_id=5)
            clock.advance(3601)
            assert drain(orders.app).succeeded == 1
            assert orders.SENT == [5]
    finally:
        orders.app.clock = None


def test_adrain_from_async_code(app: object) -> None:
    import asyncio

    async def main() -> None:
        await orders.place_order.aenqueue(order_id=3, items=["jam"])
        done = await adrain(orders.app)
        assert done.succeeded == 2 and orders.SENT == [3]

    asyncio.run(main())


def test_drain_refuses_a_running_event_loop_and_bad_queues(app: object) -> None:
    import asyncio

    from claimq.errors import InvalidInput

    async def inside() -> None:
        drain(orders.app)

    with pytest.raises(InvalidInput, match="await adrain"):
        asyncio.run(inside())
    with pytest.raises(InvalidInput, match="queue name"):
        drain(orders.app, "bad queue!")
