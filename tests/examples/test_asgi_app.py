"""examples/asgi_app.py through HTTP (an httpx client on the app's ASGI interface, the app's
own lifespan around it): a request enqueues a job, the worker started by the lifespan runs it,
and the result reads back through the app."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asgi_app
import httpx
import pytest
from pydantic import BaseModel
from starlette.applications import Starlette

from claimq import App
from claimq.contrib.asgi import lifespan, running_worker
from claimq.errors import SchemaMissing
from claimq.testing import use_database

pytestmark = pytest.mark.timeout(60)


class Signup(BaseModel):  # module level: FastAPI and claimq resolve the annotations by name
    email: str
    plan: str = "free"


@asynccontextmanager
async def serving(web: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """The app's lifespan (as a server runs it) and an HTTP client on the app."""
    async with web.router.lifespan_context(web):
        transport = httpx.ASGITransport(app=web)
        async with httpx.AsyncClient(transport=transport, base_url="http://web") as client:
            yield client


async def wait_for(client: httpx.AsyncClient, job_id: int, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        shown = (await client.get(f"/jobs/{job_id}")).json()
        if shown["status"] == "succeeded" or time.monotonic() > deadline:
            return shown
        await asyncio.sleep(0.02)


def test_request_job_worker_result(tmp_path: Path) -> None:
    async def main() -> list[int]:
        async with serving(asgi_app.web) as client:  # the lifespan migrates, starts a worker
            answers = [await client.post("/signups", json={"email": f"u{i}@example.com"})
                       for i in range(3)]
            assert {a.status_code for a in answers} == {202}
            ids = [a.json()["job"] for a in answers]
            for i, job_id in enumerate(ids):
                assert await wait_for(client, job_id) == {
                    "id": job_id, "status": "succeeded",
                    "result": f"welcome mail sent to u{i}@example.com"}
            assert (await client.get("/jobs/999")).status_code == 404
        return ids

    with use_database(asgi_app.app, f"sqlite:///{tmp_path}/web.db", migrate=False):
        ids = asyncio.run(main())
        progress = asgi_app.app.get_progress(ids[0])
        assert progress is not None and progress.note == "sent"


def test_a_worker_that_cannot_start_fails_the_startup(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path}/unmigrated.db")
    web = Starlette(lifespan=lifespan(app))

    async def main() -> None:
        async with serving(web):
            pass

    with pytest.raises(SchemaMissing):
        asyncio.run(main())
    app.close()


def test_lifespan_without_a_worker_only_migrates(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path}/plain.db")

    async def main() -> None:
        async with serving(Starlette(lifespan=lifespan(app, worker=False, migrate=True))):
            assert app.backend.schema_version() > 0
            assert asyncio.all_tasks() == {asyncio.current_task()}, "no worker runs"

    asyncio.run(main())
    app.close()


def test_running_worker_inside_a_lifespan_of_ones_own(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path}/own.db")
    app.migrate()
    ran: list[int] = []

    @app.task
    async def mark(n: int) -> None:
        ran.append(n)

    async def main() -> None:
        async with running_worker(app, poll_interval=0.05, grace=1) as worker:
            job = await mark.aenqueue(n=1)
            while app.get_job(job).status != "succeeded":
                await asyncio.sleep(0.02)
        assert worker.counters.get("completed") == 1 and ran == [1]

    asyncio.run(main())
    app.close()


def test_fastapi_with_a_typed_task(db_url: str) -> None:
    """FastAPI's lifespan runs the worker (on PostgreSQL, its settles run on the server's own
    event loop); the request's pydantic body goes to the task as the same model (validated at
    enqueue, rebuilt in the worker)."""
    from fastapi import FastAPI

    app = App(db_url)

    @app.task
    async def onboard(signup: Signup) -> str:
        assert isinstance(signup, Signup)
        return f"{signup.email} on {signup.plan}"

    api = FastAPI(lifespan=lifespan(app, migrate=True, poll_interval=0.05, grace=1))

    @api.post("/signups", status_code=202)
    async def create(signup: Signup) -> dict[str, int]:
        return {"job": await onboard.aenqueue(signup=signup)}

    @api.get("/jobs/{job_id}")
    async def show(job_id: int) -> dict[str, Any]:
        job = await asyncio.to_thread(app.get_job, job_id)
        return {"status": job.status.value, "result": job.result}

    async def main() -> None:
        async with serving(api) as client:  # type: ignore[arg-type]
            answer = await client.post("/signups", json={"email": "ada@example.com"})
            assert answer.status_code == 202
            shown = await wait_for(client, answer.json()["job"])
            assert shown == {"status": "succeeded", "result": "ada@example.com on free"}
            bad = await client.post("/signups", json={"plan": "pro"})
            assert bad.status_code == 422  # FastAPI refuses it before the handler

    asyncio.run(main())
    assert app.list_jobs("live") == [] and len(app.list_jobs("archive")) == 1
    app.close()
