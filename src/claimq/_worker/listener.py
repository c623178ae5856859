"""Listener: PostgreSQL LISTEN in a thread of its own. A new-job notification wakes the fetcher
early; a cancel notification for a job held here triggers a heartbeat at once (which sees the
cancel).

Polling stays the fallback, so a lost notification, or a pooled connection that cannot LISTEN,
only costs latency.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence

from claimq._worker.service import Service
from claimq.backends.base import Backend
from claimq.backends.base import Listener as BackendListener

log = logging.getLogger("claimq.worker")


class Listener(Service):
    name = "listener"

    def __init__(self, backend: Backend, queues: Sequence[str] | None, *,
                 wake: Callable[[], None], cancel_hint: Callable[[str], None]) -> None:
        self.backend = backend
        self.wanted = None if queues is None else set(queues)
        self.wake = wake
        self.cancel_hint = cancel_hint
        self._stop = threading.Event()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        thread = threading.Thread(target=self._listen, args=(loop,), name="claimq-listen",
                                  daemon=True)
        thread.start()
        try:
            await asyncio.Event().wait()  # until the worker stops it
        finally:
            self._stop.set()
            await asyncio.to_thread(thread.join, 2)

    def _listen(self, loop: asyncio.AbstractEventLoop) -> None:
        delay = 0.1
        while not self._stop.is_set():
            listener: BackendListener | None = None
            try:
                listener = self.backend.listen()
                delay = 0.1
                while not self._stop.is_set():
                    for note in listener.notices(0.5):
                        if note.kind == "cancel":
                            loop.call_soon_threadsafe(self.cancel_hint, note.payload)
                        elif self.wanted is None or note.payload in self.wanted:
                            loop.call_soon_threadsafe(self.wake)
            except Exception as exc:  # noqa: BLE001 - any failure: reconnect after a pause
                # Polling goes on meanwhile: a lost listener costs latency, never a job.
                log.warning("listener.reconnecting: LISTEN failed (%r); reconnecting in %.1fs",
                            exc, delay, extra={"event": "listener.reconnecting"})
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)
            finally:
                if listener is not None:
                    with contextlib.suppress(Exception):
                        listener.close()
