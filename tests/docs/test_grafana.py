"""The Grafana dashboard claimq ships (docs/grafana/claimq.json) asks only for metrics claimq
exports: every `claimq_*` name in its queries and variables is a sample name of claimq's
collector (a gauge's own name, a counter's `_total`, a histogram's `_bucket`/`_count`/`_sum`),
and it uses the per-task attempts and durations and the exported-once queue gauges."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from claimq import App
from claimq._worker.inflight import Counters
from claimq.metrics import ClaimqCollector, metric_names

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "claimq.json"
NAME = re.compile(r"\bclaimq_[a-z0-9_]+\b")


class _Exporting:
    """A worker as the collector sees it, holding the metrics lease."""

    counters = Counters()
    supervisor = None
    exports_stats = True


def _queries(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition", "query") and isinstance(value, str):
                yield value
            else:
                yield from _queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _queries(item)


def test_every_metric_the_dashboard_queries_is_one_claimq_exports(tmp_path: Path) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    queries = list(_queries(dashboard))
    used = {name for q in queries for name in NAME.findall(q)}
    app = App(f"sqlite:///{tmp_path / 'q.db'}")
    app.migrate()
    try:
        exported = metric_names(ClaimqCollector(app, worker=_Exporting()).collect())
    finally:
        app.close()
    assert used - exported == set(), f"queried but never exported: {sorted(used - exported)}"
    for needed in ("claimq_task_attempts_total", "claimq_task_duration_seconds_bucket",
                   "claimq_queue_pending", "claimq_worker_exports_stats"):
        assert needed in used, needed
    # every panel queries something, and each query names a claimq metric
    panels = [p for p in dashboard["panels"] if p["type"] != "row"]
    assert panels and all(p["targets"] for p in panels)
    assert all(NAME.search(t["expr"]) for p in panels for t in p["targets"])


def test_the_check_itself_catches_a_name_claimq_does_not_export(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path / 'q.db'}")
    app.migrate()
    try:
        exported = metric_names(ClaimqCollector(app, worker=_Exporting()).collect())
    finally:
        app.close()
    assert "claimq_queue_pending_total" not in exported  # a gauge has no _total
    assert "claimq_task_duration_seconds" not in exported  # a histogram's samples only
    assert {"claimq_task_duration_seconds_count", "claimq_worker_claimed_total",
            "claimq_stats_up"} <= exported
