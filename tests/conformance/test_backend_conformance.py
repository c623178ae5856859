"""claimq's backend conformance suite, run against SQLite and PostgreSQL (conftest.py)."""

from claimq.testing.conformance import *  # noqa: F403
from claimq.testing.conformance import BackendFactory


def test_every_claimq_backend_implements_workflows(
    conformance_backend_factory: BackendFactory,
) -> None:
    """The workflow classes skip a backend without the capability; claimq's own all have it."""
    from claimq.clock import FakeClock

    backend = conformance_backend_factory.open(FakeClock())
    try:
        assert backend.capabilities.workflows
    finally:
        backend.close()
