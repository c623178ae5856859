"""Waiting for a job's result: the JobHandle enqueue returns, and the App's one waiter.

On PostgreSQL every App has at most one listening connection for results, whatever the number
of waiters: the waiter registers the jobs it waits for (backend.watch_results), and the
archive or dead-letter insert of such a job notifies. A slow re-check (SAFETY_RECHECK) stands
in for a notification lost while the listener reconnects. SQLite has no notifications: each
waiter polls with back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from claimq.errors import JobFailed, JobNotFound
from claimq.job import Job, Status

if TYPE_CHECKING:
    from claimq.app import App
    from claimq.backends.base import Backend

log = logging.getLogger("claimq.results")

POLL_FIRST = 0.005  # SQLite: seconds before the first re-read, growing by POLL_GROWTH
POLL_GROWTH = 1.5
POLL_MAX = 0.5
# PostgreSQL: a waiter re-reads its job RECHECK_FIRST seconds after it starts waiting, then at
# four times the pause before, up to SAFETY_RECHECK. The early re-reads find a job whose
# completion was already under way when the wait was registered (its trigger ran before the
# registration committed, its commit after the first read: no notice for it); the late ones,
# a notice lost while the listener reconnected.
RECHECK_FIRST = 0.02
SAFETY_RECHECK = 2.0
WATCH_WAIT = 5.0  # seconds a waiter waits for another's watch of the same job to be written


class JobHandle(int):
    """A job's id (an int, equal to and usable as one) that can also wait for the job's result.

    `app.enqueue()`, `task.enqueue()` and their async forms return one. It pickles, copies and
    serialises as the plain id."""

    app: App

    def __new__(cls, job_id: int, app: App) -> JobHandle:
        handle = super().__new__(cls, job_id)
        handle.app = app
        return handle

    def __reduce__(self) -> tuple[type[int], tuple[int]]:
        return (int, (int(self),))

    def result(self, timeout: float | None = None) -> Any:
        """The handler's return value once the job is archived. Raises JobFailed (dead
        letters), TimeoutError (not finished within `timeout` seconds; None: no limit)."""
        return self.app.result(int(self), timeout=timeout)

    async def aresult(self, timeout: float | None = None) -> Any:
        return await self.app.aresult(int(self), timeout=timeout)


def outcome(job_id: int, job: Job | None) -> tuple[bool, Any]:
    """(finished, result) for the job as read; raises JobFailed or JobNotFound."""
    if job is None:
        raise JobNotFound(f"no job {job_id}")
    if job.status == Status.SUCCEEDED:
        return True, job.result
    if job.status == Status.DEAD:
        errors = job.errors if isinstance(job.errors, list | tuple) else ()
        last = errors[-1] if errors and isinstance(errors[-1], dict) else None
        raise JobFailed(job_id, str(job.reason), last)
    return False, None


def _read(job_id: int, job: Job | None, deadline: float | None,
          timeout: float | None) -> tuple[bool, Any, float | None]:
    """(finished, result, seconds left) for the job as read; raises JobFailed, JobNotFound,
    or TimeoutError once the deadline has passed."""
    finished, result = outcome(job_id, job)
    left = None if deadline is None else deadline - time.monotonic()
    if not finished and left is not None and left <= 0:
        raise TimeoutError(f"job {job_id} did not finish within {timeout}s")
    return finished, result, left


watched_already = threading.Event()
watched_already.set()


class ResultWaiter:
    """The App's waiters for results: one listening thread and connection (PostgreSQL)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.notify = backend.capabilities.listen_notify
        self.id = str(uuid.uuid4())
        self._lock = threading.Lock()
        self._wakers: dict[int, set[Callable[[], None]]] = {}
        # Per job: set once its watch row is written (or failed to be): a later waiter reads
        # the job only then, or a notice of its end could come before the trigger knew of it.
        self._watched: dict[int, threading.Event] = {}
        self._thread: threading.Thread | None = None
        self._listening = threading.Event()
        self._stop = threading.Event()

    # -- sync and async -------------------------------------------------------------------------
    # PostgreSQL: a notice wakes the waiter (SAFETY_RECHECK at the latest); SQLite: nothing
    # does, and the wait is the poll's back-off.

    def _pause(self, delay: float, left: float | None) -> tuple[float, float]:
        """How long to wait now, and the next poll delay."""
        if self.notify:
            pause = delay = min(delay, SAFETY_RECHECK)
            delay *= 4
        else:
            pause, delay = delay, min(delay * POLL_GROWTH, POLL_MAX)
        return (pause if left is None else min(pause, left)), delay

    def wait(self, job_id: int, timeout: float | None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        woken = threading.Event()
        self._register(job_id, woken.set)
        try:
            delay = RECHECK_FIRST if self.notify else POLL_FIRST
            while True:
                woken.clear()
                finished, result, left = _read(job_id, self.backend.get_job(job_id), deadline,
                                               timeout)
                if finished:
                    return result
                pause, delay = self._pause(delay, left)
                woken.wait(pause)
        finally:
            self._unregister(job_id, woken.set)

    async def await_result(self, job_id: int, timeout: float | None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(woken.set)

        await asyncio.to_thread(self._register, job_id, wake)
        try:
            delay = RECHECK_FIRST if self.notify else POLL_FIRST
            while True:
                woken.clear()
                job = await asyncio.to_thread(self.backend.get_job, job_id)
                finished, result, left = _read(job_id, job, deadline, timeout)
                if finished:
                    return result
                pause, delay = self._pause(delay, left)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(pause):
                        await woken.wait()
        finally:
            await asyncio.to_thread(self._unregister, job_id, wake)

    # -- the listening thread ------------------------------------------------------------------

    def _register(self, job_id: int, wake: Callable[[], None]) -> None:
        """Listening first, then the job watched: a notice of its end cannot fall between the
        caller's first read and its wait."""
        if self.notify:
            self._ensure_listening()
        with self._lock:
            wakers = self._wakers.setdefault(job_id, set())
            first = not wakers
            wakers.add(wake)
            if first:
                watched = self._watched[job_id] = threading.Event()
            else:
                watched = self._watched.get(job_id, watched_already)
        if not self.notify:
            return
        if not first:
            watched.wait(WATCH_WAIT)  # past it, the safety re-check still finds the result
            return
        try:
            self.backend.watch_results([job_id], self.id)
        except BaseException:
            self._unregister(job_id, wake, watched=False)
            raise
        finally:
            watched.set()

    def _unregister(self, job_id: int, wake: Callable[[], None], *, watched: bool = True) -> None:
        with self._lock:
            wakers = self._wakers.get(job_id)
            if wakers is None:
                return
            wakers.discard(wake)
            last = not wakers
            if last:
                del self._wakers[job_id]
                self._watched.pop(job_id, None)
        if last and watched and self.notify:
            try:
                self.backend.unwatch_results([job_id], self.id)
            except Exception as exc:  # noqa: BLE001 - a leftover row only costs a notice
                log.warning("results: could not unregister the wait for job %s (%r); the "
                            "pruner removes it", job_id, exc)

    def _ensure_listening(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._listening.clear()
                self._thread = threading.Thread(target=self._listen, name="claimq-results",
                                                daemon=True)
                self._thread.start()
        # A listener that cannot connect yet: the safety re-check still finds the result.
        self._listening.wait(5.0)

    def _listen(self) -> None:
        delay = 0.1
        while not self._stop.is_set():
            listener = None
            try:
                listener = self.backend.listen_results()
                self._listening.set()
                delay = 0.1
                self._wake_all()  # anything that finished while no one listened
                while not self._stop.is_set():
                    for note in listener.notices(0.5):
                        if note.kind == "finished":
                            self._wake(note.payload)
            except Exception as exc:  # noqa: BLE001 - reconnect; waiters re-check meanwhile
                log.warning("results.reconnecting: LISTEN for results failed (%r); "
                            "reconnecting in %.1fs", exc, delay,
                            extra={"event": "results.reconnecting"})
                self._wake_all()
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)
            finally:
                if listener is not None:
                    with contextlib.suppress(Exception):
                        listener.close()

    def _wake(self, payload: str) -> None:
        with self._lock:
            found = [w for part in payload.split(",") if part.isdigit()
                     for w in self._wakers.get(int(part), ())]
        for wake in found:
            wake()

    def _wake_all(self) -> None:
        with self._lock:
            found = [w for wakers in self._wakers.values() for w in wakers]
        for wake in found:
            wake()

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(2.0)

