"""Loading an App from `module:attribute`, the worker's log lines, and a supervisor of several
worker processes that restarts any that dies (claimq.worker.run_worker starts it)."""

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
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EXIT_CANNOT_START = 2  # a worker process whose app or options are wrong: respawning cannot help
EXIT_STOPPED_AT_ONCE = 130  # a second stop signal, as for a single worker


def import_app(path: str) -> App:
    """`module:attribute` -> the App it names; the attribute may be dotted (`mod:obj.app`).
    The current directory goes on sys.path first, as `python -m` does. The one loader of the
    CLI and of a supervisor's worker processes; raises InvalidInput with a clear message."""
    if not isinstance(path, str):
        raise InvalidInput(f"APP must be a string module:attribute, got {path!r}")
    module_name, sep, attr = path.partition(":")
    module_name, attr = module_name.strip(), attr.strip()
    if not sep or not module_name or not attr or not all(attr.split(".")):
        raise InvalidInput(
            f"APP must look like module:attribute (e.g. myproject.tasks:app), got {path!r}"
        )
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise InvalidInput(
                f"cannot import {module_name!r}: no such module (searched the current "
                "directory and sys.path)"
            ) from None
        raise InvalidInput(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") \
            from None
    except Exception as exc:
        first = " ".join(str(exc).split("\n")[0].split()) or type(exc).__name__
        raise InvalidInput(
            f"importing {module_name!r} failed: {type(exc).__name__}: {first}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InvalidInput(f"module {module_name!r} has no attribute {attr!r}") from None
    if not isinstance(obj, App):
        raise InvalidInput(f"{path} is of type {type(obj).__name__}, not a claimq.App")
    return obj


def setup_logging(level: int | str, log_format: str = "text") -> None:
    """The worker's log lines on stderr: `text` (LOG_FORMAT) or `json` (one object a line,
    claimq.logs.JsonFormatter); either way a handler's own lines carry its job's fields."""
    from claimq.logs import JobFields, JsonFormatter

    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(LOG_FORMAT))
    handler.addFilter(JobFields())
    logging.basicConfig(level=level, handlers=[handler])


def _child_main(
    worker_class: Any, app_path: str, url: str | None, options: dict[str, Any], log_level: int,
    log_format: str,
) -> None:
    setup_logging(log_level, log_format)
    try:
        app = import_app(app_path)
        if url is not None:
            app.set_url(url)
        worker = worker_class(app, **options)
    except InvalidInput as exc:
        log.error("worker process %s cannot start: %s", os.getpid(), exc)
        sys.exit(EXIT_CANNOT_START)
    worker._supervised = True
    try:
        worker.run()
    except InvalidInput as exc:  # at start: its /metrics port in use
        log.error("worker process %s cannot start: %s", os.getpid(), exc)
        sys.exit(EXIT_CANNOT_START)


def supervise(
    worker_class: Any, app_path: str, url: str, options: dict[str, Any], processes: int,
    log_format: str,
) -> int:
    """Runs `processes` worker processes, each a `worker_class(app, **options)` of the App at
    `app_path`, and starts another for any that dies; returns run_worker's exit code."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    level = logging.getLogger().getEffectiveLevel()
    children: list[Any] = []
    stopping = threading.Event()
    signals = 0

    def spawn(i: int) -> Any:
        own = dict(options)
        if own.get("metrics_port") is not None:
            own["metrics_port"] += i  # one port per worker process
        p = ctx.Process(target=_child_main,
                        args=(worker_class, app_path, url, own, level, log_format), daemon=False)
        p.start()
        return p

    def stop_children(sig: int) -> None:
        for p in children:
            if p.is_alive() and p.pid is not None:
                os.kill(p.pid, sig)

    # The handler only counts; the loop passes each stop signal on, so that a child started
    # while a signal came in (or just after) is among those it reaches, and none gets two.
    def on_signal(signum: int, _frame: object) -> None:
        nonlocal signals
        signals += 1
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    children.extend(spawn(i) for i in range(processes))
    restarts = 0
    code = 0
    passed_on = 0  # stop signals passed on to the children
    while not stopping.is_set():
        for i, p in enumerate(children):
            if stopping.is_set():
                break
            if p.is_alive():
                continue
            if p.exitcode == EXIT_CANNOT_START:
                log.error("worker process %s could not start (see above): stopping", p.pid)
                code = EXIT_CANNOT_START
                stopping.set()
                stop_children(signal.SIGTERM)
                passed_on = 1
                break
            restarts += 1
            log.warning("worker process %s exited with %s; starting another", p.pid,
                        p.exitcode)
            time.sleep(min(0.1 * restarts, 1.0) * random.random())
            if not stopping.is_set():
                children[i] = spawn(i)
        stopping.wait(0.2)
    while any(p.is_alive() for p in children):
        if signals > passed_on:  # the first: stop with grace; a second: at once
            passed_on = signals
            stop_children(signal.SIGTERM if passed_on == 1 else signal.SIGKILL)
        for p in children:
            p.join(0.05)
    for p in children:
        p.join()
    return EXIT_STOPPED_AT_ONCE if signals >= 2 else code
