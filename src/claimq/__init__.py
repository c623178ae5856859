"""claimq: a job queue whose coordination boundary is a SQL database."""

from claimq.app import App
from claimq.errors import (
    ClaimqError,
    InvalidInput,
    JobNotFound,
    LeaseLost,
    MigrationError,
    Permanent,
    Retry,
)
from claimq.job import DeadReason, Job, Status
from claimq.retry import RetryPolicy
from claimq.task import Task

__all__ = [
    "App",
    "ClaimqError",
    "DeadReason",
    "InvalidInput",
    "Job",
    "JobNotFound",
    "LeaseLost",
    "MigrationError",
    "Permanent",
    "Retry",
    "RetryPolicy",
    "Status",
    "Task",
]
__version__ = "0.1.0"
