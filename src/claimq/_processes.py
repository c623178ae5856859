"""Loading an App from `module:attribute`, and running workers: one in this process, or a
supervisor of several worker processes that restarts any that dies."""

from __future__ import annotations

import importlib
import logging
import os
import random
import signal
import sys
import threading
import time
from typing import Any

from claimq.app import App
from claimq.errors import InvalidInput

log = logging.getLogger("claimq.worker")


def import_app(path: str) -> App:
    """`module:attribute` -> the App it names. Raises InvalidInput with a clear message."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise InvalidInput(f"APP must look like module:attribute, got {path!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidInput(f"cannot import {module_name!r}: {exc}") from None
    app = getattr(module, attr, None)
    if not isinstance(app, App):
        raise InvalidInput(f"{path!r} is not a claimq.App (got {type(app).__name__})")
    return app


def _child_main(
    app_path: str, url: str | None, options: dict[str, Any], log_level: int
) -> None:
    logging.basicConfig(level=log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = import_app(app_path)
    if url is not None:
        app.url = url
    from claimq.worker import Worker

    worker = Worker(app, **options)
    worker._supervised = True
    worker.run()


def run_worker(
    app: App,
    *,
    queues: list[str] | None = None,
    concurrency: int = 10,
    processes: int = 1,
    lease: float | None = None,
    poll_interval: float = 1.0,
    grace: float = 30.0,
    app_path: str | None = None,
) -> int:
    """Run one worker in this process, or a supervisor of `processes` worker processes that
    restarts any that dies. Returns an exit code."""
    options: dict[str, Any] = {
        "queues": queues, "concurrency": concurrency, "lease": lease,
        "poll_interval": poll_interval, "grace": grace,
    }
    from claimq.worker import Worker

    Worker(app, **options)  # validates the options before anything starts
    if processes <= 1:
        Worker(app, **options).run()
        return 0
    if app_path is None:
        raise InvalidInput("several processes need the app as module:attribute (app_path)")
    return _supervise(app_path, app.url, options, processes)


def _supervise(app_path: str, url: str, options: dict[str, Any], processes: int) -> int:
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    level = logging.getLogger().getEffectiveLevel()
    children: list[Any] = []
    stopping = threading.Event()
    signals = 0

    def spawn() -> Any:
        p = ctx.Process(target=_child_main, args=(app_path, url, options, level), daemon=False)
        p.start()
        return p

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal signals
        signals += 1
        stopping.set()
        for p in children:
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, signal.SIGTERM if signals == 1 else signal.SIGKILL)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    children.extend(spawn() for _ in range(processes))
    restarts = 0
    while not stopping.is_set():
        for i, p in enumerate(children):
            if not p.is_alive() and not stopping.is_set():
                restarts += 1
                log.warning("worker process %s exited with %s; starting another", p.pid,
                            p.exitcode)
                time.sleep(min(0.1 * restarts, 1.0) * random.random())
                children[i] = spawn()
        stopping.wait(0.2)
    for p in children:
        p.join()
    return 0
