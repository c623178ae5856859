"""The audit table's one rule: every operator action on jobs, queues, schedules, retention
and workflows is recorded once, with who did it, whichever door it came through.

The App's acting methods (cancel, resurrect, run_now, set_priority, purge, purge_jobs,
configure_queue and pause/resume/activate/deactivate, configure_breaker, set_retention,
clear_retention, partition_archive, prune; `app.schedules`' add/change/pause/resume/remove/
run_now; a workflow's cancel and retry) call `record()` after they changed something. Who:

- through the Python API: `api <os user>@<host>, db user <database user>` (the database user
  the App's connections act as, asked of the database once per App; SQLite has none);
- through the CLI: the same with `cli` (the CLI says so with `via("cli")`);
- through the dashboard: the caller it signed in (`admin-token:<fingerprint>`, `anonymous`),
  with the role and the client's address: the dashboard runs its action inside `entry()`,
  which names the actor and folds the App's own records into its one row (a bulk action is
  one row with its filter and ids, not one per job).

`detail["by"]` holds the same as fields (`via`, `os_user`, `host`, `db_user`, `pid`; the
dashboard's `role`, `caller`, `client`). An action that raises records nothing (it changed
nothing), except inside `entry()` once something was changed: then the row says what failed.
A role without the right to write the audit table (claimq's reader, producer and worker roles)
still acts: a warning (`audit.refused`) says the action went unrecorded.
"""

from __future__ import annotations

import contextvars
import getpass
import json
import logging
import os
import socket
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from claimq.errors import PermissionDenied

if TYPE_CHECKING:
    from claimq.backends.base import Backend

log = logging.getLogger("claimq.audit")

_VIA = ["api"]  # the door this process acts through: "api", or "cli" (set by the CLI)


def via(name: str) -> None:
    """Names the door this process's App calls come through (the CLI: "cli")."""
    _VIA[0] = name


@dataclass
class Entry:
    """One audit row under way (`entry()`): set `detail` and `affected` as the action goes."""

    action: str
    target: str
    actor: str
    by: dict[str, Any]
    detail: dict[str, Any] = field(default_factory=dict)
    affected: int = 0
    folded: list[str] = field(default_factory=list)  # the App's own records it took in


_ENTRY: contextvars.ContextVar[Entry | None] = contextvars.ContextVar("claimq_audit_entry",
                                                                     default=None)
# backend -> the database user its connections act as, asked once per backend
_USERS: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (a bare container)
        return str(os.getuid()) if hasattr(os, "getuid") else "?"


def _db_user(backend: Backend) -> str | None:
    if backend not in _USERS:
        _USERS[backend] = backend.database_user()
    return _USERS[backend]


def who(backend: Backend) -> tuple[str, dict[str, Any]]:
    """The actor of an action through the API or the CLI, and its fields."""
    by: dict[str, Any] = {"via": _VIA[0], "os_user": _os_user(), "host": socket.gethostname(),
                          "db_user": _db_user(backend), "pid": os.getpid()}
    actor = f"{by['via']} {by['os_user']}@{by['host']}"
    if by["db_user"] is not None:
        actor += f", db user {by['db_user']}"
    return actor, by


def record(backend: Backend, action: str, target: str, detail: dict[str, Any],
           affected: int) -> int | None:
    """Records one action done through the App; its audit id (None: folded into an enclosing
    `entry()`, or the database refused the row). The one place the rule lives."""
    current = _ENTRY.get()
    if current is not None:
        current.folded.append(f"{action} {target}")
        return None
    actor, by = who(backend)
    return _write(backend, actor, action, target, {**detail, "by": by}, affected)


@contextmanager
def entry(backend: Backend, action: str, target: str, *, actor: str,
          by: dict[str, Any]) -> Iterator[Entry]:
    """One row for everything done inside, by `actor` (the dashboard's caller): written when
    the body returns, or when it raises after the App recorded a change."""
    current = Entry(action, target, actor, by)
    token = _ENTRY.set(current)
    try:
        yield current
    except BaseException as exc:
        _ENTRY.reset(token)
        if current.folded:
            _write(backend, actor, action, target, {
                **current.detail, "error": f"{type(exc).__name__}: {exc}",
                "done": current.folded, "by": by}, len(current.folded))
        raise
    _ENTRY.reset(token)
    _write(backend, actor, action, target, {**current.detail, "by": by}, current.affected)


def _write(backend: Backend, actor: str, action: str, target: str, detail: dict[str, Any],
           affected: int) -> int | None:
    try:
        return backend.record_audit(actor, action, target, json.dumps(detail, default=str),
                                    affected)
    except PermissionDenied as exc:
        log.warning("audit.refused: %s on %s by %s done but not recorded: this database role "
                    "may not write the audit table (%s)", action, target, actor, exc,
                    extra={"event": "audit.refused"})
        return None
