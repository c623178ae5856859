"""A Starlette application that enqueues from its request handlers and runs an in-process
claimq worker in its lifespan.

    CLAIMQ_DATABASE_URL=sqlite:///web.db uvicorn asgi_app:web   (from examples/)

POST /signups {"email": "..."} queues a welcome job and answers its id; GET /jobs/{id} shows the
job's status and result. tests/examples/test_asgi_app.py drives it with an HTTP client."""

from __future__ import annotations

import asyncio

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from claimq import App, JobContext, JobNotFound
from claimq.contrib.asgi import lifespan

app = App()


@app.task(queue="mail")
async def welcome(ctx: JobContext, email: str) -> str:
    await ctx.aprogress(1.0, "sent")
    return f"welcome mail sent to {email}"


async def signup(request: Request) -> JSONResponse:
    body = await request.json()
    job_id = await welcome.aenqueue(email=body["email"])
    return JSONResponse({"job": job_id}, status_code=202)


async def job_status(request: Request) -> JSONResponse:
    try:
        job = await asyncio.to_thread(app.get_job, int(request.path_params["job_id"]))
    except JobNotFound:
        return JSONResponse({"error": "no such job"}, status_code=404)
    return JSONResponse({"id": job.id, "status": job.status.value, "result": job.result})


web = Starlette(
    routes=[Route("/signups", signup, methods=["POST"]),
            Route("/jobs/{job_id:int}", job_status)],
    lifespan=lifespan(app, migrate=True, concurrency=4, poll_interval=0.05, grace=5),
)
