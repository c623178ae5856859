"""The backend conformance suite: pytest tests that drive the `Backend` protocol directly (not
`App`), on a `FakeClock`, so that every backend passes the same tests unchanged.

A backend's own test directory runs it with two files. A conftest that provides one fixture,
`conformance_backend_factory`, giving a `BackendFactory` for a fresh, empty database::

    # conftest.py
    import pytest
    from claimq.testing.conformance import BackendFactory

    @pytest.fixture
    def conformance_backend_factory(tmp_path):
        url = ...  # a new, empty database for this test
        def open_backend(clock):
            backend = MyBackend(url, clock=clock)
            backend.migrate()
            return backend
        return BackendFactory(open=open_backend, store_json=...)  # store_json is optional

and a test module that imports the suite (its test classes and its `subject` fixture)::

    # test_conformance.py
    from claimq.testing.conformance import *  # noqa: F403

Then `pytest test_conformance.py`. Each test gets a `Subject`: the backend, opened on a
FakeClock that starts at `START` and moves only when a test advances it (no test sleeps).
"""

import pytest

# Plain asserts with pytest's explanations (the modules are not test files pytest collects).
pytest.register_assert_rewrite(*(f"claimq.testing.conformance.{name}" for name in (
    "_harness", "browse", "claim", "corrupt", "enqueue", "flow", "operator", "owner",
    "progress", "reap", "schedules", "workflows")))

from claimq.testing.conformance._harness import (  # noqa: E402
    START,
    BackendFactory,
    Subject,
    subject,
)
from claimq.testing.conformance.browse import (  # noqa: E402
    TestAudit,
    TestDeleteAndRunNow,
    TestFindJobs,
    TestGrant,
)
from claimq.testing.conformance.claim import TestClaim, TestQueueSettings  # noqa: E402
from claimq.testing.conformance.corrupt import TestCorruptRows  # noqa: E402
from claimq.testing.conformance.enqueue import (  # noqa: E402
    TestCallerTransaction,
    TestEnqueue,
    TestIdempotencyKeys,
)
from claimq.testing.conformance.flow import (  # noqa: E402
    TestConcurrencyKeys,
    TestFlowControlRefused,
    TestLimitedState,
    TestRateLimits,
    TestThrottle,
    TestUniqueFor,
    TestUniqueness,
)
from claimq.testing.conformance.operator import (  # noqa: E402
    TestCancel,
    TestClock,
    TestFinishedHistory,
    TestLiveStates,
    TestPurge,
    TestReadJobs,
    TestResurrect,
    TestSetPriority,
)
from claimq.testing.conformance.owner import (  # noqa: E402
    TestComplete,
    TestConfirmOwned,
    TestFail,
    TestHeartbeat,
    TestOrphaned,
    TestRelease,
    TestSettle,
    TestStart,
)
from claimq.testing.conformance.progress import TestProgress  # noqa: E402
from claimq.testing.conformance.reap import TestReap  # noqa: E402
from claimq.testing.conformance.schedules import (  # noqa: E402
    TestLeases,
    TestRetention,
    TestScheduleRows,
)
from claimq.testing.conformance.workflows import (  # noqa: E402
    TestWorkflowFailure,
    TestWorkflowFanOut,
    TestWorkflowRelease,
    TestWorkflowResults,
    TestWorkflowResurrect,
    TestWorkflowWrites,
)

__all__ = [
    "START",
    "BackendFactory",
    "Subject",
    "TestAudit",
    "TestCallerTransaction",
    "TestCancel",
    "TestClaim",
    "TestClock",
    "TestFinishedHistory",
    "TestComplete",
    "TestConcurrencyKeys",
    "TestCorruptRows",
    "TestDeleteAndRunNow",
    "TestEnqueue",
    "TestFail",
    "TestFindJobs",
    "TestFlowControlRefused",
    "TestGrant",
    "TestHeartbeat",
    "TestConfirmOwned",
    "TestIdempotencyKeys",
    "TestLeases",
    "TestLimitedState",
    "TestOrphaned",
    "TestProgress",
    "TestPurge",
    "TestQueueSettings",
    "TestRateLimits",
    "TestLiveStates",
    "TestReadJobs",
    "TestReap",
    "TestRelease",
    "TestResurrect",
    "TestRetention",
    "TestScheduleRows",
    "TestSetPriority",
    "TestSettle",
    "TestStart",
    "TestThrottle",
    "TestUniqueFor",
    "TestUniqueness",
    "TestWorkflowFailure",
    "TestWorkflowFanOut",
    "TestWorkflowRelease",
    "TestWorkflowResults",
    "TestWorkflowResurrect",
    "TestWorkflowWrites",
    "subject",
]
