"""What the flow-control proofs run in their spawned processes (see test_flow_debounce.py)."""

from __future__ import annotations

import os
from typing import Any

from claimq import App


def enqueue_debounced(url: str, key: str, times: int, barrier: Any) -> list[int]:
    """Debounced enqueues of one key, each with a payload of its own."""
    with App(url) as app:
        app.queues()
        barrier.wait()
        return [app.enqueue("t", {"pid": os.getpid(), "i": i}, queue="deb", idempotency_key=key,
                            on_conflict="replace", delay=3600)
                for i in range(times)]
