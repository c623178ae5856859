from django.db import transaction
from django.http import HttpRequest, JsonResponse

from claimq import JobNotFound
from claimq.contrib.django import enqueue
from shop.models import Order


class Rollback(Exception):
    def __init__(self, job_id: int) -> None:
        self.job_id = job_id


def place_order(request: HttpRequest) -> JsonResponse:
    """Creates an order and queues its fulfilment in one transaction; fail=1 rolls it back
    after the enqueue."""
    from shop.jobs import fulfil  # imported at use: `manage.py test` runs without CLAIMQ_APP

    try:
        with transaction.atomic():
            order = Order.objects.create(item=request.POST["item"])
            job_id = enqueue(fulfil.with_options(idempotency_key=f"order-{order.id}"),
                             order_id=order.id)
            if request.POST.get("fail") == "1":
                raise Rollback(job_id)
    except Rollback as exc:
        return JsonResponse({"rolled_back_job": exc.job_id}, status=409)
    return JsonResponse({"order": order.id, "job": job_id})


def show_order(request: HttpRequest, order_id: int) -> JsonResponse:
    order = Order.objects.filter(pk=order_id).first()
    if order is None:
        return JsonResponse({"error": "no such order"}, status=404)
    return JsonResponse({"id": order.id, "item": order.item, "status": order.status})


def show_job(request: HttpRequest, job_id: int) -> JsonResponse:
    from shop.jobs import app

    try:
        job = app.get_job(job_id)
    except JobNotFound:
        return JsonResponse({"error": "no such job"}, status=404)
    return JsonResponse({"status": job.status.value, "result": job.result})


def place_order_with_tasks(request: HttpRequest) -> JsonResponse:
    """The same as place_order, through Django's Tasks API."""
    from shop.tasks import fulfil_later, notify

    try:
        with transaction.atomic():
            order = Order.objects.create(item=request.POST["item"])
            result = fulfil_later.enqueue(order.id)
            note = notify.enqueue(order_id=order.id)
            if request.POST.get("fail") == "1":
                raise Rollback(int(result.id))
    except Rollback as exc:
        return JsonResponse({"rolled_back_job": exc.job_id}, status=409)
    return JsonResponse({"order": order.id, "result": result.id, "notify": note.id,
                         "status": result.status})


def enqueue_explode(request: HttpRequest) -> JsonResponse:
    from shop.tasks import explode

    return JsonResponse({"result": explode.enqueue().id})


def enqueue_later(request: HttpRequest) -> JsonResponse:
    from datetime import timedelta

    from django.utils import timezone

    from shop.tasks import fulfil_later

    when = timezone.now() + timedelta(hours=1)
    result = fulfil_later.using(run_after=when, priority=-3).enqueue(0)
    return JsonResponse({"result": result.id, "run_after": when.isoformat()})


def show_result(request: HttpRequest, result_id: str) -> JsonResponse:
    from django_tasks import default_task_backend
    from django_tasks.exceptions import TaskResultDoesNotExist

    try:
        result = default_task_backend.get_result(result_id)
    except TaskResultDoesNotExist:
        return JsonResponse({"error": "no such result"}, status=404)
    body: dict[str, object] = {
        "status": result.status, "task": result.task.module_path, "attempts": result.attempts,
        "errors": [e.exception_class_path for e in result.errors], "args": result.args,
        "kwargs": result.kwargs}
    if result.status == "SUCCESSFUL":
        body["return_value"] = result.return_value
    return JsonResponse(body)
