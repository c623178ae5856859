"""The project's claimq App: its tables live in Django's own database."""

import os

from claimq import App, JobContext
from claimq.contrib.django import database_url

app = App(database_url(schema=os.environ.get("TEST_CLAIMQ_SCHEMA")))


@app.task
def fulfil(ctx: JobContext, order_id: int) -> dict[str, object]:
    from shop.models import Order

    order = Order.objects.get(pk=order_id)
    order.status = "fulfilled"
    order.save()
    return {"order": order.id, "item": order.item, "attempt": ctx.attempt}
