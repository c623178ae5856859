"""The backlogs of the flow-claim bound tests (tests/backends/test_*_flow_backlog.py): one template
job per case, which each backend's test copies by SQL into thousands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from claimq import App

CASES = ("hot key", "sequences", "aging")
CLAIMED = {"hot key": 0, "sequences": 8, "aging": 10}  # by a claim of 10, the backlog's first


def template(app: App, case: str) -> int:
    """The case's template job in queue q, due a minute ago: of concurrency key "hot" (limit 1),
    of sequence "s0", or plain in a queue with priority aging. The copies take sequence keys s0
    to s7 (sequences) or priorities 0 to 9 (aging)."""
    past = datetime.now(UTC) - timedelta(minutes=1)
    if case == "hot key":
        return app.enqueue("t", queue="q", run_at=past, concurrency_key="hot",
                           concurrency_limit=1)
    if case == "sequences":
        return app.enqueue("t", queue="q", run_at=past, sequence_key="s0")
    app.configure_queue("q", aging=3600)
    return app.enqueue("t", queue="q", run_at=past)
