"""Debounce from several OS processes at once: one pending job, with the last payload."""

from __future__ import annotations

import flow_procs
import pytest
from test_concurrency import run_processes

from claimq import App

ALL = 100_000

# Every backend has flow control (capabilities.flow_control).
pytestmark = pytest.mark.parametrize("db_url", ["sqlite", "postgresql", "mariadb"], indirect=True)


def test_debounced_enqueues_from_four_processes_leave_one_pending_job(
    app: App, db_url: str
) -> None:
    results = run_processes(flow_procs.enqueue_debounced, [(db_url, "reindex", 20)] * 4)
    returned = {job_id for ids in results for job_id in ids}
    assert len(returned) == 1, f"one debounced key gave {len(returned)} jobs"
    [job_id] = returned
    [job] = app.list_jobs(limit=ALL)
    assert job.id == job_id and job.status == "pending"
    assert job.payload["i"] == 19, "the job holds one of the processes' last payloads"
    # Each replacement committed under the key's lock: the last one standing is the last
    # enqueue of whichever process finished last, and one more enqueue replaces it in turn.
    assert app.enqueue("t", {"final": True}, queue="deb", idempotency_key="reindex",
                       on_conflict="replace", delay=3600) == job_id
    assert app.get_job(job_id).payload == {"final": True}
    assert [j.id for j in app.list_jobs(limit=ALL)] == [job_id]
