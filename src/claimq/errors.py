"""Exceptions raised by claimq, and the two a handler raises to steer its own retry."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from claimq._limits import MAX_SECONDS


class ClaimqError(Exception):
    """Base class of every error claimq raises."""


class InvalidInput(ClaimqError, ValueError):
    """Bad input to a public entry point; nothing was written."""


class JobNotFound(ClaimqError, LookupError):
    """No job with that id in the live, archive or dead tables (or not in the expected state)."""


class JobFailed(ClaimqError):
    """The job a caller waits for ended in dead letters: `reason` (a DeadReason value) says
    why, `error` is its last recorded error (a dict: error, message, traceback...; None when
    it has none, e.g. cancelled before it ran)."""

    def __init__(self, job_id: int, reason: str, error: dict[str, Any] | None) -> None:
        self.job_id = job_id
        self.reason = reason
        self.error = error
        detail = ""
        if error:
            detail = f": {error.get('error', '')}: {error.get('message', '')}".rstrip(": ")
        super().__init__(f"job {job_id} is in dead letters ({reason}){detail}")

    def __reduce__(self) -> tuple[type[JobFailed], tuple[int, str, dict[str, Any] | None]]:
        return (JobFailed, (self.job_id, self.reason, self.error))


class KeyHeld(ClaimqError):
    """A dead letter was not resurrected because another job holds its idempotency key (live,
    or finished inside the key's retention window): two holders of one key would break its
    uniqueness. Nothing was written; resurrect it once the holder has let the key go."""

    def __init__(self, job_id: int, key: str, holder_id: int) -> None:
        self.job_id = job_id
        self.key = key
        self.holder_id = holder_id
        super().__init__(f"dead letter {job_id} not resurrected: its idempotency key {key!r} "
                         f"is held by job {holder_id}")

    def __reduce__(self) -> tuple[type[KeyHeld], tuple[int, str, int]]:
        return (KeyHeld, (self.job_id, self.key, self.holder_id))


class LeaseLost(ClaimqError):
    """A token-guarded write matched no row: the job was re-owned, released, reaped or cancelled.

    The caller no longer owns the job and must not report any outcome for it.
    """

    def __init__(self, job_ids: list[int] | int, operation: str) -> None:
        ids = [job_ids] if isinstance(job_ids, int) else list(job_ids)
        self.job_ids = ids
        self.operation = operation
        super().__init__(f"lease lost on {operation} for job(s) {ids}")


class MigrationError(ClaimqError):
    """The schema is missing, half-applied or newer than this version of claimq."""


class SchemaMissing(MigrationError):
    """claimq's tables are not there (or older than this version): run `claimq migrate`."""


class DatabaseMissing(ClaimqError):
    """The URL names a database (PostgreSQL) or a directory (SQLite) that does not exist."""


class DatabaseUnavailable(ClaimqError):
    """The database could not be reached or did not answer in time (connection refused or lost,
    busy, a deadlock or serialization failure): a transient error, worth retrying."""


class WorkerFailed(ClaimqError):
    """A worker stopped because one of its loops failed in a way restarting cannot cure."""


class DatabaseError(ClaimqError):
    """The database refused a statement for a reason retrying cannot fix (a bug or a schema
    that another program changed); the message carries the driver's own."""


class PermissionDenied(DatabaseError):
    """The database role lacks a right the statement needs (see `claimq grant`)."""


class Retry(Exception):  # noqa: N818 - raised by handlers, reads as an instruction
    """Raise from a handler to retry the job after an explicit delay (counts as an attempt)."""

    def __init__(self, after: float | timedelta = 0.0, reason: str = "") -> None:
        if isinstance(after, timedelta):
            seconds = after.total_seconds()
        elif isinstance(after, int | float) and not isinstance(after, bool):
            seconds = float(after)
        else:
            raise InvalidInput(f"Retry(after=...) must be seconds or a timedelta, got {after!r}")
        if not math.isfinite(seconds):
            raise InvalidInput("Retry(after=...) must be finite")
        if seconds < 0:
            raise InvalidInput("Retry(after=...) must not be negative")
        if seconds > MAX_SECONDS:
            raise InvalidInput(f"Retry(after=...) must be at most {MAX_SECONDS:.0f} seconds "
                               "(100 years)")
        self.after = seconds
        self.reason = reason
        super().__init__(reason or f"retry requested after {seconds:g}s")

    def __reduce__(self) -> tuple[type[Retry], tuple[float, str]]:
        # pickled by value: a handler in a child process raises it to its worker
        return (Retry, (self.after, self.reason))


class Throttled(Retry):
    """Raise from a handler when a dependency says "too many requests" (an HTTP 429 with its
    Retry-After): the job is retried after `after` seconds (counted as an attempt, as Retry),
    and its whole queue pauses until then for every worker on every host."""

    def __reduce__(self) -> tuple[type[Retry], tuple[float, str]]:
        return (Throttled, (self.after, self.reason))


class Permanent(Exception):  # noqa: N818 - raised by handlers, reads as an instruction
    """Raise from a handler when retrying cannot help: the job goes straight to dead letters."""
