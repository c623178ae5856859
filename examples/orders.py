"""A small claimq application: placing an order queues its receipt mail.

`python examples/orders.py` enqueues one order; `claimq worker orders:app` (from examples/)
runs it. tests/examples/test_orders.py drives it with claimq.testing."""

from __future__ import annotations

from claimq import App, JobContext, Permanent

app = App()  # $CLAIMQ_DATABASE_URL, else sqlite:///claimq.db
SENT: list[int] = []  # the receipts "mailed" (a real app calls its mail service here)


@app.task(queue="orders", max_attempts=3)
def place_order(ctx: JobContext, order_id: int, items: list[str]) -> dict[str, int]:
    if not items:
        raise Permanent(f"order {order_id} has no items")
    send_receipt.with_options(idempotency_key=f"receipt-{order_id}").enqueue(order_id=order_id)
    return {"order_id": order_id, "items": len(items)}


@app.task(queue="mail", max_attempts=5)
async def send_receipt(order_id: int) -> None:
    SENT.append(order_id)


if __name__ == "__main__":
    app.migrate()
    print(place_order.enqueue(order_id=1, items=["tea"]))
