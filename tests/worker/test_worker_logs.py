"""JSON logs of a failed job (issue 28): the job.failed line carries the error's type, class,
message and traceback as fields, and the traceback starts at the user's frame, not in claimq's
executor or the machinery that runs a handler."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from claimq import App
from claimq.logs import JobFields, JsonFormatter
from claimq.testing import drain


def _parse(amount: str) -> int:
    return int(amount)  # the user's code, two frames deep


def _charge(amount: str) -> int:
    return _parse(amount)


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(JobFields())
    logger = logging.getLogger("claimq.worker")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_json_log_of_a_failed_job_has_error_fields_from_the_users_frame(
    app: App, json_log: io.StringIO
) -> None:
    @app.task(name="logs.async_charge", max_attempts=1)
    async def async_charge(amount: str) -> int:
        return _charge(amount)

    @app.task(name="logs.sync_charge", max_attempts=1)
    def sync_charge(amount: str) -> int:  # run in a thread
        return _charge(amount)

    async_charge.enqueue(amount="ten")
    sync_charge.enqueue(amount="eleven")
    drain(app)
    records = [json.loads(line) for line in json_log.getvalue().splitlines()]
    failed = {r["task"]: r for r in records if r.get("event") == "job.failed"}
    assert set(failed) == {"logs.async_charge", "logs.sync_charge"}, records
    for task, record in failed.items():
        assert record["error"] == "ValueError", record
        assert record["error_class"] == "builtins.ValueError"
        assert "invalid literal for int()" in record["error_message"]
        trace = record["traceback"]
        frames = [line.strip() for line in trace.splitlines() if line.strip().startswith("File ")]
        assert frames[0].startswith(f'File "{__file__}"'), (task, trace)
        assert [f.rsplit(" in ", 1)[-1] for f in frames] == [task.split(".")[1], "_charge",
                                                              "_parse"], (task, trace)
        assert trace.rstrip().endswith("ValueError: invalid literal for int() with base 10: "
                                       + repr("ten" if "async" in task else "eleven"))
