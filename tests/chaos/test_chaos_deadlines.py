"""A database that stops answering (defect 7 of issue 12, the backend's half): every connection
the PostgreSQL backend opens carries client-side deadlines, so a connection whose link loses
every packet (half-open: no reset ever arrives) fails with DatabaseUnavailable within seconds
instead of hanging for the kernel's ~15 minutes of retransmissions.

The client runs in a network namespace; PostgreSQL is reached through a forwarder on the host
end of the namespace's link; the link goes down with the connections open. The pool's
connection, the worker's async connection, a listener and a brand-new connection must each
fail with DatabaseUnavailable. Expected within about 15 s; the test allows far more.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from urllib.parse import urlparse

import pytest
from chaos_forwarder import Forwarder
from chaos_harness import drop_schema
from chaos_netns import NetNs, unavailable_reason

from claimq import App

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]

CHILD = Path(__file__).with_name("chaos_deadlines_child.py")
READY_WITHIN = 60.0
ANSWER_WITHIN = 150.0  # generous: LISTEN_FOR (120 s) bounds the child's slowest case


def _read_line(stream: object, timeout: float) -> str | None:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()),  # type: ignore[attr-defined]
                              daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else None


def test_half_open_connections_fail_with_database_unavailable(pg_base_url: str) -> None:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    base = urlparse(pg_base_url)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with App(f"{pg_base_url}?schema={schema}") as app:
        app.migrate()
    try:
        with NetNs() as net:
            forwarder = Forwarder(net.host_ip, base.port or 5432, base.hostname or "127.0.0.1")
            try:
                far = pg_base_url.replace(base.netloc,
                                          f"{base.username}@{net.host_ip}:{forwarder.port}", 1)
                results = _run_child(net, f"{far}?schema={schema}")
            finally:
                forwarder.close()
    finally:
        drop_schema(pg_base_url, schema)
    print("deadline results:", json.dumps(results))
    for name in ("pool", "async", "listener", "new_connection"):
        got = results[name]
        assert got["error"] == "DatabaseUnavailable", f"{name}: {got}"
        assert got["module"] == "claimq.errors"


def _run_child(net: NetNs, url: str) -> dict[str, dict[str, object]]:
    child = subprocess.Popen(
        [*net.prefix, sys.executable, str(CHILD), url],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        ready = _read_line(child.stdout, READY_WITHIN)
        if ready is None or ready.strip() != "ready":
            child.kill()
            pytest.fail(f"child not ready: {ready!r} {child.communicate()[1][-2000:]}")
        net.partition()  # from now on every packet is lost: no reset, no answer
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
        answer = _read_line(child.stdout, ANSWER_WITHIN)
        if answer is None:
            child.kill()
            pytest.fail("a connection through the lost link still hung after "
                        f"{ANSWER_WITHIN:.0f} s: no client-side deadline fired")
        return json.loads(answer)  # type: ignore[no-any-return]
    finally:
        net.heal()
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
