"""A pool of daemon threads that grows when its threads are stuck."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor as _FutureExecutor
from concurrent.futures import Future
from typing import Any


class Threads(_FutureExecutor):
    """Daemon threads, at most `max_workers`, started on demand (a new one whenever none is
    idle) and reused.

    For sync handlers: one that outlives its timeout, its cancellation or the grace period
    cannot be interrupted, and its job is no longer ours; with ThreadPoolExecutor's threads,
    which the interpreter joins at exit, such a handler kept a stopped worker process alive
    until it returned (forever, if it hangs). For database calls: a call stuck on a connection
    that no longer answers holds its thread, and the next call gets a new one.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self.max_workers = max_workers
        self.prefix = name
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot run handlers after shutdown")
            self._work.put((future, functools.partial(fn, *args, **kwargs)))
            if not self._idle.acquire(blocking=False) and self._threads < self.max_workers:
                self._threads += 1
                threading.Thread(
                    target=self._run, name=f"{self.prefix}-{self._threads}", daemon=True
                ).start()
        return future

    def _run(self) -> None:
        while (item := self._work.get()) is not None:
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as exc:  # noqa: BLE001 - handed to the awaiting side
                    future.set_exception(exc)
            del item, future, call
            self._idle.release()

    def shutdown(self, wait: bool = False, *, cancel_futures: bool = False) -> None:
        """Ends the threads once their current handler returns; never waits for them."""
        with self._lock:
            self._shutdown = True
            threads = self._threads
        if cancel_futures:
            while True:
                try:
                    item = self._work.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in range(threads):
            self._work.put(None)
