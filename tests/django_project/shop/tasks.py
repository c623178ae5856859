"""The project's Django Tasks (the django-tasks backport's API, which Django 6 ships as
django.tasks), run by claimq through claimq.contrib.django.tasks.ClaimqBackend."""

from django_tasks import TaskContext, task


@task
def fulfil_later(order_id: int) -> dict[str, object]:
    from shop.models import Order

    order = Order.objects.get(pk=order_id)
    order.status = "done by task"
    order.save()
    return {"order": order.id, "item": order.item}


@task(takes_context=True, priority=7, queue_name="mail")
def notify(context: TaskContext, order_id: int) -> dict[str, object]:
    return {"order": order_id, "attempt": context.attempt, "id": context.task_result.id}


@task
async def explode() -> None:
    raise ValueError("boom")


class ConnectionError(Exception):  # noqa: A001 - a client library's class, named like a builtin
    pass


@task
def unreachable() -> None:
    raise ConnectionError("the service is down")
