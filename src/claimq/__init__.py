"""claimq: a job queue whose coordination boundary is a SQL database."""

from claimq._results import JobHandle
from claimq._version import __version__ as __version__
from claimq.app import App
from claimq.errors import (
    ClaimqError,
    DatabaseError,
    DatabaseMissing,
    DatabaseUnavailable,
    InvalidInput,
    JobFailed,
    JobNotFound,
    KeyHeld,
    LeaseLost,
    MigrationError,
    Permanent,
    Retry,
    SchemaMissing,
    Throttled,
)
from claimq.job import DeadReason, Job, Status
from claimq.retry import RetryPolicy
from claimq.task import Task
from claimq.worker import JobContext, Worker  # after App: worker.py builds on claimq.app
from claimq.workflow import Call, Workflow, WorkflowHandle, call, chain, group

__all__ = [
    "App",
    "ClaimqError",
    "DatabaseError",
    "DatabaseMissing",
    "DatabaseUnavailable",
    "DeadReason",
    "InvalidInput",
    "Job",
    "JobContext",
    "JobFailed",
    "JobHandle",
    "JobNotFound",
    "KeyHeld",
    "LeaseLost",
    "MigrationError",
    "Permanent",
    "Retry",
    "RetryPolicy",
    "SchemaMissing",
    "Status",
    "Task",
    "Throttled",
    "Worker",
    "Workflow",
    "WorkflowHandle",
    "Call",
    "call",
    "chain",
    "group",
]
