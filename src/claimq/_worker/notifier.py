"""PostgreSQL LISTEN in a thread of its own: a new-job notification wakes the fetcher early; a
cancel notification for a job held here triggers a heartbeat at once (which sees the cancel).

Polling stays the fallback, so a lost notification, or a pooled connection that cannot LISTEN,
only costs latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from claimq.worker import Runtime

log = logging.getLogger("claimq.worker")


def start_listener(rt: Runtime, loop: asyncio.AbstractEventLoop) -> threading.Thread | None:
    listen = getattr(rt.backend, "listen_connection", None)
    if listen is None:
        return None
    wanted = None if rt.queues is None else set(rt.queues)
    cancel_channel = getattr(rt.backend, "cancel_channel", None)

    def run() -> None:
        delay = 0.1
        while not rt.listener_stop.is_set():
            conn: Any = None
            try:
                conn = listen()
                delay = 0.1
                while not rt.listener_stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        if note.channel == cancel_channel:
                            loop.call_soon_threadsafe(rt.cancel_hint, note.payload)
                        elif wanted is None or note.payload in wanted:
                            loop.call_soon_threadsafe(rt.state.wake.set)
            except Exception as exc:  # noqa: BLE001 - any failure: reconnect after a pause
                log.debug("listener reconnecting after: %s", exc)
                rt.listener_stop.wait(delay)
                delay = min(delay * 2, 5.0)
            finally:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        conn.close()

    thread = threading.Thread(target=run, name="claimq-listen", daemon=True)
    thread.start()
    return thread
