"""Worker start-up (issue 28): a worker started before its database is reachable waits for it
with back-off and says so, as it does during an outage, instead of exiting."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlparse

import pytest
from polling import wait_until

from claimq import App, Worker


@contextlib.contextmanager
def _forward(port: int, target: tuple[str, int]) -> Iterator[None]:
    """Listens on 127.0.0.1:`port` and relays each connection to `target`, byte for byte."""
    listener = socket.create_server(("127.0.0.1", port), reuse_port=False)
    socks: list[socket.socket] = []

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
                server = socket.create_connection(target, timeout=5)
            except OSError:
                return
            server.settimeout(None)
            socks.extend((client, server))
            for pair in ((client, server), (server, client)):
                threading.Thread(target=pump, args=pair, daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield
    finally:
        listener.close()
        for s in socks:
            with contextlib.suppress(OSError):
                s.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(90)
@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_a_worker_started_before_its_database_waits_for_it(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    real = urlparse(app.url)
    port = _free_port()  # nothing listens there yet: the database is "not up"
    url = real._replace(netloc=f"{real.username}@127.0.0.1:{port}").geturl()
    job_id = app.enqueue("startup.echo", {"x": 1})
    worker_app = App(url)

    @worker_app.task(name="startup.echo")
    def echo(x: int) -> int:
        return x

    worker = Worker(worker_app, poll_interval=0.1, grace=1.0)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            worker.run(install_signals=False)
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            failure.append(exc)

    caplog.set_level(logging.INFO, logger="claimq.worker")
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: sum("cannot start yet" in r.getMessage() for r in caplog.records) >= 2
                   or failure, 30, "two tries that found no database")
        assert not failure, f"the worker gave up: {failure}"
        assert thread.is_alive()
        waits = [r for r in caplog.records if getattr(r, "event", None) == "database.unreachable"]
        assert len(waits) >= 2 and "trying again in" in waits[0].getMessage()
        with _forward(port, (real.hostname or "127.0.0.1", real.port or 5432)):
            wait_until(lambda: app.get_job(job_id).status.value == "succeeded", 40,
                       "the job to run once the database is reachable")
            assert any(getattr(r, "event", None) == "database.reachable" for r in caplog.records)
            worker.stop()
            thread.join(20)
    finally:
        if thread.is_alive():
            worker.stop()
            thread.join(5)
        worker_app.close()
    assert not thread.is_alive() and not failure
