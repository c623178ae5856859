from django.db import transaction
from django.http import HttpRequest, JsonResponse

from claimq import JobNotFound
from claimq.contrib.django import enqueue
from shop.jobs import app, fulfil
from shop.models import Order


class Rollback(Exception):
    def __init__(self, job_id: int) -> None:
        self.job_id = job_id


def place_order(request: HttpRequest) -> JsonResponse:
    """Creates an order and queues its fulfilment in one transaction; fail=1 rolls it back
    after the enqueue."""
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
    try:
        job = app.get_job(job_id)
    except JobNotFound:
        return JsonResponse({"error": "no such job"}, status=404)
    return JsonResponse({"status": job.status.value, "result": job.result})
