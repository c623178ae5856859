"""The dashboard's routes: a static page, a JSON API, a server-sent event stream."""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager
from importlib import resources
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from claimq import _audit
from claimq.app import App
from claimq.dashboard import _data
from claimq.dashboard._security import COOKIE, Caller, Guard
from claimq.errors import ClaimqError, InvalidInput, JobNotFound, KeyHeld

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Caller], Awaitable[Response]]
PAGE_LIMIT = 200
EVENT_INTERVAL = 1.0  # seconds between two updates of the event stream

_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'"),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


def _json(value: Any, status: int = 200) -> Response:
    return Response(_data.dumps(value), status, media_type="application/json", headers=_HEADERS)


def _error(message: str, status: int) -> Response:
    return _json({"error": message}, status)


def _int(value: str | None, name: str, lo: int, hi: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except ValueError:
        raise InvalidInput(f"{name} must be an integer") from None
    if not lo <= number <= hi:
        raise InvalidInput(f"{name} must be between {lo} and {hi}")
    return number


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = orjson.loads(await request.body() or b"{}")
    except orjson.JSONDecodeError:
        raise InvalidInput("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    return body


def _guarded(guard: Guard, handler: Handler, *, admin: bool = False) -> Endpoint:
    """`handler` behind the guard: a caller signed in (and, for `admin`, with the admin token,
    from the same origin); claimq's errors as HTTP statuses."""

    async def endpoint(request: Request) -> Response:
        caller = guard.caller(request)
        if caller is None:
            return _error("sign in with a read or admin token", 401)
        if admin:
            if not caller.admin:
                return _error("this action needs the admin token", 403)
            refused = guard.same_origin(request, caller)
            if refused:
                return _error(refused, 403)
        try:
            return await handler(request, caller)
        except JobNotFound as exc:
            return _error(str(exc), 404)
        except InvalidInput as exc:
            return _error(str(exc), 400)
        except KeyHeld as exc:  # another job holds the dead letter's key: nothing changed
            return _error(str(exc), 409)
        except ClaimqError as exc:
            return _error(f"{type(exc).__name__}: {exc}", 503)

    return endpoint


def _queue_options(action: object, body: dict[str, Any]) -> dict[str, Any]:
    """configure_queue's options for a queue action of the page."""
    if action in ("pause", "resume"):
        return {"paused": action == "pause"}
    if action in ("activate", "deactivate"):
        return {"active": action == "activate"}
    if action == "max_workers":
        return {"max_workers": body.get("max_workers")}
    raise InvalidInput("action must be pause, resume, activate, deactivate or max_workers")


def _job_action(app: App, job_id: int, action: str, body: dict[str, Any]
                ) -> tuple[str, int, dict[str, Any]]:
    """One job action of the page: (outcome, jobs affected, detail for the audit)."""
    detail: dict[str, Any] = {}
    if action == "cancel":
        outcome: str = app.cancel(job_id)
        affected = int(outcome != "finished")
    elif action == "run_now":
        affected = len(app.run_now([job_id]))
        outcome = "due now" if affected else "not waiting (nothing changed)"
    elif action == "priority":
        detail["priority"] = body.get("priority")
        app.set_priority(job_id, body.get("priority"))  # type: ignore[arg-type]
        outcome, affected = "priority changed", 1
    elif action == "resurrect":
        payload, priority = body.get("payload"), body.get("priority")
        if payload is not None and not isinstance(payload, dict):
            raise InvalidInput("payload must be a JSON object")
        detail = {"payload_edited": payload is not None, "priority": priority}
        app.resurrect(job_id, payload=payload, priority=priority)
        outcome, affected = "resurrected", 1
    else:
        raise InvalidInput("action must be cancel, run_now, priority or resurrect")
    return outcome, affected, detail


def _workflow_action(app: App, workflow_id: int, action: str
                     ) -> tuple[str, int, dict[str, Any]]:
    """A workflow action of the page: (outcome, jobs affected, detail for the audit)."""
    handle = app.workflow(workflow_id)
    if action == "cancel":
        affected = handle.cancel()
        return (f"{affected} job(s) cancelled" if affected else
                "nothing left to cancel (nothing changed)"), affected, {}
    if action == "retry":
        ids = handle.retry()
        return (f"{len(ids)} failed step(s) resurrected" if ids else
                "no failed step (nothing changed)"), len(ids), {"resurrected": ids}
    raise InvalidInput("action must be cancel or retry")


class _Dashboard:
    """The handlers of one dashboard and what they share: the App, the guard, the bulk
    snapshots' key and the latest overview the event streams send."""

    def __init__(self, app: App, guard: Guard) -> None:
        self.app = app
        self.guard = guard
        self.snapshots = _data.Snapshots(secrets.token_bytes(32))
        static = resources.files("claimq.dashboard").joinpath("static")
        self.index_html = static.joinpath("index.html").read_bytes()
        self._latest_at = -EVENT_INTERVAL
        self._latest = b""
        self._latest_lock = asyncio.Lock()

    def audited(self, request: Request, caller: Caller, action: str,
                target: str) -> AbstractContextManager[_audit.Entry]:
        """One audit row for the action done inside (claimq._audit.entry): by the signed-in
        caller, its role and the client's address; the App's own rows fold into it."""
        client = request.client.host if request.client else None
        by = {"via": "dashboard", "caller": caller.name, "role": caller.role, "client": client}
        actor = f"{caller.name} (dashboard {caller.role} from {client or '?'})"
        return _audit.entry(self.app.backend, action, target, actor=actor, by=by)

    def routes(self) -> list[Route | Mount]:
        guarded = functools.partial(_guarded, self.guard)
        return [
            Route("/", self.index),
            Mount("/static", StaticFiles(packages=[("claimq.dashboard", "static")]),
                  name="static"),
            Route("/api/login", self.login, methods=["POST"]),
            Route("/api/logout", self.logout, methods=["POST"]),
            Route("/api/me", guarded(self.me)),
            Route("/api/overview", guarded(self.overview)),
            Route("/api/events", guarded(self.events)),
            Route("/api/jobs", guarded(self.jobs)),
            Route("/api/jobs/{job_id}", guarded(self.job)),
            Route("/api/workflows", guarded(self.workflows)),
            Route("/api/workflows/{workflow_id}", guarded(self.workflow)),
            Route("/api/audit", guarded(self.audit)),
            Route("/api/schedules", guarded(self.schedules)),
            Route("/api/workers", guarded(self.workers)),
            Route("/api/flow", guarded(self.flow)),
            Route("/api/latency", guarded(self.latency)),
            Route("/api/retention", guarded(self.retention)),
            Route("/api/history", guarded(self.history)),
            Route("/metrics", guarded(self.metrics)),
            Route("/api/queues/{name}", guarded(self.queue_action, admin=True),
                  methods=["POST"]),
            Route("/api/jobs/{job_id}/{action}", guarded(self.job_action, admin=True),
                  methods=["POST"]),
            Route("/api/workflows/{workflow_id}/{action}",
                  guarded(self.workflow_action, admin=True), methods=["POST"]),
            Route("/api/schedules/{name}/{action}",
                  guarded(self.schedule_action, admin=True), methods=["POST"]),
            Route("/api/bulk/preview", guarded(self.bulk_preview, admin=True),
                  methods=["POST"]),
            Route("/api/bulk/apply", guarded(self.bulk_apply, admin=True), methods=["POST"]),
        ]

    # -- pages and session -----------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        return Response(self.index_html, media_type="text/html; charset=utf-8",
                        headers=_HEADERS)

    async def login(self, request: Request) -> Response:
        site = request.headers.get("sec-fetch-site")
        origin = request.headers.get("origin")
        if (site is not None and site not in ("same-origin", "none")) or (
                origin is not None and origin.split("://", 1)[-1] != request.headers.get("host")):
            return _error("cross-site sign-in refused", 403)
        try:
            token = (await _body(request)).get("token")
        except InvalidInput as exc:
            return _error(str(exc), 400)
        caller = self.guard.token_caller(token if isinstance(token, str) else None)
        if caller is None:
            return _error("unknown token", 401)
        response = _json({"role": caller.role, "csrf": self.guard.csrf_token(caller)})
        response.set_cookie(COOKIE, self.guard.session(caller), httponly=True,
                            samesite="strict", secure=request.url.scheme == "https",
                            path=request.scope.get("root_path", "") + "/")
        return response

    async def logout(self, request: Request) -> Response:
        response = _json({"ok": True})
        response.delete_cookie(COOKIE, path=request.scope.get("root_path", "") + "/")
        return response

    async def me(self, request: Request, caller: Caller) -> Response:
        return _json({"role": caller.role, "name": caller.name,
                      "csrf": self.guard.csrf_token(caller),
                      "bulk_limit": _data.BULK_LIMIT, "bulk_actions": _data.BULK_ACTIONS,
                      "workflows": self.app.backend.capabilities.workflows})

    # -- reads -----------------------------------------------------------------------------

    async def overview(self, request: Request, caller: Caller) -> Response:
        return _json(await run_in_threadpool(_data.overview, self.app))

    async def latest(self) -> bytes:
        """One overview for every open stream per interval (many tabs, one query)."""
        async with self._latest_lock:
            now = time.monotonic()
            if now - self._latest_at >= EVENT_INTERVAL / 2:
                self._latest = _data.dumps(await run_in_threadpool(_data.overview, self.app))
                self._latest_at = now
            return self._latest

    async def events(self, request: Request, caller: Caller) -> Response:
        async def stream() -> AsyncIterator[bytes]:
            while not await request.is_disconnected():
                try:
                    yield b"data: " + await self.latest() + b"\n\n"
                except ClaimqError as exc:  # the database is away: say so, try again
                    yield b"event: trouble\ndata: " + _data.dumps(str(exc)) + b"\n\n"
                await asyncio.sleep(EVENT_INTERVAL)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={**_HEADERS, "x-accel-buffering": "no"})

    async def jobs(self, request: Request, caller: Caller) -> Response:
        q = request.query_params
        table = _data.table_of(q.get("table", "live"))
        where = _data.job_filter(dict(q))
        before = _int(q.get("before"), "before", 1, 2**63 - 1)
        limit = _int(q.get("limit"), "limit", 1, PAGE_LIMIT) or 50
        return _json(await run_in_threadpool(_data.job_page, self.app, table, where, before,
                                             limit))

    async def job(self, request: Request, caller: Caller) -> Response:
        job_id = _int(request.path_params["job_id"], "job id", 1, 2**63 - 1) or 0
        found = await run_in_threadpool(self.app.get_job, job_id)
        return _json(_data.job_detail(found))

    def no_workflows(self) -> Response | None:
        if self.app.backend.capabilities.workflows:
            return None
        return _error("this claimq's backend has no workflows", 404)

    async def workflows(self, request: Request, caller: Caller) -> Response:
        if refused := self.no_workflows():
            return refused
        q = request.query_params
        before = _int(q.get("before"), "before", 1, 2**63 - 1)
        limit = _int(q.get("limit"), "limit", 1, PAGE_LIMIT) or 50
        found = await run_in_threadpool(self.app.backend.list_workflows, limit + 1, before)
        page = found[:limit]
        return _json({"workflows": [_data.workflow_row(w) for w in page],
                      "next": page[-1].id if len(found) > limit else None})

    async def workflow(self, request: Request, caller: Caller) -> Response:
        if refused := self.no_workflows():
            return refused
        workflow_id = _int(request.path_params["workflow_id"], "workflow id", 1, 2**63 - 1)
        assert workflow_id is not None
        detail = await run_in_threadpool(_data.workflow_detail, self.app, workflow_id)
        if detail is None:
            return _error(f"no workflow {workflow_id}", 404)
        return _json(detail)

    async def audit(self, request: Request, caller: Caller) -> Response:
        before = _int(request.query_params.get("before"), "before", 1, 2**63 - 1)
        entries = await run_in_threadpool(_data.audit, self.app, before, 100)
        return _json({"entries": entries, "next": entries[-1].id if len(entries) == 100
                      else None})

    async def schedules(self, request: Request, caller: Caller) -> Response:
        return _json({"schedules": await run_in_threadpool(_data.schedules, self.app)})

    async def workers(self, request: Request, caller: Caller) -> Response:
        return _json(await run_in_threadpool(_data.workers_with_jobs, self.app))

    async def flow(self, request: Request, caller: Caller) -> Response:
        return _json(await run_in_threadpool(_data.flow, self.app))

    async def latency(self, request: Request, caller: Caller) -> Response:
        window = _int(request.query_params.get("window"), "window", 1, max(_data.LATENCY_WINDOWS))
        return _json(await run_in_threadpool(_data.latency, self.app,
                                             window or _data.LATENCY_WINDOWS[0]))

    async def history(self, request: Request, caller: Caller) -> Response:
        hours = _int(request.query_params.get("hours"), "hours", 1, _data.HISTORY_HOURS)
        bucket = _int(request.query_params.get("bucket"), "bucket", 1, 24 * 60)
        return _json(await run_in_threadpool(_data.history, self.app, hours or 6, bucket or 5))

    async def retention(self, request: Request, caller: Caller) -> Response:
        return _json({"policies": await run_in_threadpool(_data.retention, self.app)})

    async def metrics(self, request: Request, caller: Caller) -> Response:
        text = await run_in_threadpool(_data.metrics_text, self.app)
        if text is None:
            return PlainTextResponse("this claimq has no metrics\n", 404)
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- actions (admin, same-origin, audited) ---------------------------------------------

    async def queue_action(self, request: Request, caller: Caller) -> Response:
        name = request.path_params["name"]
        body = await _body(request)
        action = body.get("action")
        options = _queue_options(action, body)

        def run() -> dict[str, Any]:
            with self.audited(request, caller, str(action), f"queue {name}") as entry:
                info = self.app.configure_queue(name, **options)
                entry.detail, entry.affected = options, 1
            return _data.queue_row(info, self.app.backend.now())

        return _json(await run_in_threadpool(run))

    async def job_action(self, request: Request, caller: Caller) -> Response:
        job_id = _int(request.path_params["job_id"], "job id", 1, 2**63 - 1)
        assert job_id is not None
        action = request.path_params["action"]
        body = await _body(request)

        def run() -> dict[str, Any]:
            with self.audited(request, caller, action, f"job {job_id}") as entry:
                outcome, affected, detail = _job_action(self.app, job_id, action, body)
                entry.detail, entry.affected = detail, affected
            return {"outcome": outcome, "affected": affected}

        return _json(await run_in_threadpool(run))

    async def workflow_action(self, request: Request, caller: Caller) -> Response:
        if refused := self.no_workflows():
            return refused
        workflow_id = _int(request.path_params["workflow_id"], "workflow id", 1, 2**63 - 1)
        assert workflow_id is not None
        action = request.path_params["action"]
        if action not in ("cancel", "retry"):
            raise InvalidInput("action must be cancel or retry")

        def run() -> dict[str, Any] | None:
            if self.app.backend.get_workflow(workflow_id) is None:
                return None
            with self.audited(request, caller, action, f"workflow {workflow_id}") as entry:
                outcome, affected, detail = _workflow_action(self.app, workflow_id, action)
                entry.detail, entry.affected = detail, affected
            return {"outcome": outcome, "affected": affected, **detail}

        result = await run_in_threadpool(run)
        if result is None:
            return _error(f"no workflow {workflow_id}", 404)
        return _json(result)

    async def schedule_action(self, request: Request, caller: Caller) -> Response:
        name = request.path_params["name"]
        action = request.path_params["action"]
        if action not in _data.SCHEDULE_ACTIONS:
            raise InvalidInput("action must be pause, resume or run_now")

        def run() -> dict[str, Any]:
            with self.audited(request, caller, f"schedule {action}", f"schedule {name}") as entry:
                outcome, result = _data.schedule_action(self.app, name, action)
                entry.detail = {"job": result["job"]} if "job" in result else {}
                entry.affected = 1
            return {"outcome": outcome, **result}

        return _json(await run_in_threadpool(run))

    async def bulk_preview(self, request: Request, caller: Caller) -> Response:
        body = await _body(request)
        table = _data.table_of(body.get("table"))
        action = body.get("action")
        if action not in _data.BULK_ACTIONS[table]:
            raise InvalidInput(f"{action} is not an action on {table} jobs")
        where = _data.job_filter(body.get("filter") or {})
        ids, more = await run_in_threadpool(_data.bulk_ids, self.app, table, where)
        return _json({"count": len(ids), "more": more, "ids": ids,
                      "snapshot": self.snapshots.sign(table, str(action), where, ids)})

    async def bulk_apply(self, request: Request, caller: Caller) -> Response:
        body = await _body(request)
        table = _data.table_of(body.get("table"))
        action = str(body.get("action"))
        ids = body.get("ids")
        if not isinstance(ids, list) or not all(type(i) is int for i in ids):
            raise InvalidInput("ids must be the list of job ids the preview returned")
        where = _data.job_filter(body.get("filter") or {})
        self.snapshots.check(table, action, where, ids, str(body.get("snapshot", "")))

        def run() -> dict[str, Any]:
            refused: list[dict[str, Any]] = []
            with self.audited(request, caller, f"bulk {action}", f"{table} jobs") as entry:
                entry.detail = {"filter": where, "ids": ids}
                done = _data.bulk_apply(self.app, table, action, ids, refused)
                entry.detail["changed"] = done
                if refused:
                    entry.detail["refused"] = refused
                entry.affected = len(done)
            return {"requested": len(ids), "affected": len(done), "ids": done,
                    "refused": refused}

        return _json(await run_in_threadpool(run))


def create_app(
    app: App,
    *,
    read_token: str | None = None,
    admin_token: str | None = None,
    allow_anonymous: bool = False,
) -> Starlette:
    """The dashboard of `app` as an ASGI application (mount it under a path of your own app, or
    run it with `claimq dashboard`). Callers authenticate with `Authorization: Bearer TOKEN`
    or the session cookie the page's sign-in sets; the read token sees, the admin token also
    acts. `allow_anonymous` lets requests without a token in as admin, but only on a server
    bound to loopback, from loopback."""
    guard = Guard(read_token, admin_token, allow_anonymous)
    return Starlette(routes=_Dashboard(app, guard).routes())
