"""Run inside a network namespace by test_chaos_deadlines.py: opens every kind of connection
the PostgreSQL backend makes (pool, the worker's async pool, a listener), says `ready`, waits
for a line on stdin (the link is cut by then), uses each once more and prints, as JSON, what
each use raised and after how long. Exits without closing anything (the link is dead)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from claimq import App
from claimq.backends.base import ClaimRequest

LISTEN_FOR = 120.0  # seconds the listener waits to notice the broken link before giving up


def main(url: str) -> None:
    app = App(url)
    backend = app.backend
    app.queues()  # the pool holds a live connection
    listener = backend.listen()
    loop = asyncio.new_event_loop()
    claim = ClaimRequest("deadline-child", ["nothing-here"], 1, None)
    loop.run_until_complete(backend.open_async())
    loop.run_until_complete(backend.asettle([], [], claim))  # a kept async connection
    print("ready", flush=True)
    sys.stdin.readline()

    results: dict[str, Any] = {}

    def record(name: str, use: Callable[[], object]) -> None:
        started = time.monotonic()
        try:
            use()
            results[name] = {"error": None}
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            results[name] = {"error": type(exc).__name__, "module": type(exc).__module__,
                             "message": str(exc)[:300]}
        results[name]["seconds"] = round(time.monotonic() - started, 2)

    def listen() -> None:
        deadline = time.monotonic() + LISTEN_FOR
        while time.monotonic() < deadline:
            list(listener.notices(0.5))

    threads = [
        threading.Thread(target=record, args=("pool", app.queues)),
        threading.Thread(target=record, args=("listener", listen)),
        threading.Thread(target=record, args=("new_connection", lambda: App(url).queues())),
    ]
    for t in threads:
        t.start()
    record("async", lambda: loop.run_until_complete(backend.asettle([], [], claim)))
    for t in threads:
        t.join()
    print(json.dumps(results), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
