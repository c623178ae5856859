"""Every `claimq` verb that changes jobs, queues, schedules or retention leaves exactly one
audit row naming who ran it (`cli`, the OS user and host, the database user), on SQLite and
PostgreSQL, like the dashboard's actions; a refused command leaves none."""

from __future__ import annotations

import getpass
import socket

from cli_helpers import Cli, archived, dead_permanent

from claimq import App


def test_each_cli_verb_that_acts_leaves_one_audit_row_naming_who(cli: Cli, app: App) -> None:
    """Each acting verb, one `claimq` process at a time, leaves one audit row naming who.

    Slow: about 25 `claimq` invocations one after another (each verb's audit row is checked
    before the next runs), process start-up nearly all of it: 39 s on PostgreSQL, 25 s on
    SQLite with the 2-core machine under a load of 7.
    """
    waiting = app.enqueue("t", queue="q", delay=3600)
    buried = dead_permanent(app, "t", "d1")
    dead_permanent(app, "t", "d2")
    done = archived(app, "t", "a")
    verbs: list[tuple[tuple[str, ...], str, str]] = [
        (("enqueue", "t", "--queue", "e", "--force"), "enqueue", "queue e"),
        (("jobs", "priority", str(waiting), "5"), "priority", f"job {waiting}"),
        (("jobs", "run-now", str(waiting)), "run_now", f"job {waiting}"),
        (("jobs", "cancel", str(waiting)), "cancel", f"job {waiting}"),
        (("dead", "resurrect", str(buried), "--priority", "3"), "resurrect", f"job {buried}"),
        (("dead", "purge", "--yes", "--queue", "d2"), "purge", "dead jobs"),
        (("jobs", "purge", "--yes", "--queue", "a"), "purge", "archive jobs"),
        (("queues", "pause", "q"), "pause", "queue q"),
        (("queues", "resume", "q"), "resume", "queue q"),
        (("queues", "deactivate", "q"), "deactivate", "queue q"),
        (("queues", "activate", "q"), "activate", "queue q"),
        (("queues", "limit", "q", "3"), "max_workers", "queue q"),
        (("queues", "set", "q", "--lease", "30"), "configure_queue", "queue q"),
        (("retention", "set", "--queue", "q", "--archive-age", "60"), "retention", "queue q"),
        (("retention", "clear", "--queue", "q"), "clear retention", "queue q"),
        (("retention", "prune"), "prune", "finished jobs"),
        (("schedules", "add", "s", "t", "--every", "60"), "schedule add", "schedule s"),
        (("schedules", "change", "s", "--every", "120"), "schedule change", "schedule s"),
        (("schedules", "pause", "s"), "schedule pause", "schedule s"),
        (("schedules", "resume", "s"), "schedule resume", "schedule s"),
        (("schedules", "run-now", "s"), "schedule run_now", "schedule s"),
        (("schedules", "remove", "s"), "schedule remove", "schedule s"),
    ]
    if app.backend.capabilities.flow_control:
        verbs.append((("queues", "breaker", "q", "t", "--failures", "3"), "breaker",
                      "queue q task t"))
    me = f"cli {getpass.getuser()}@{socket.gethostname()}"
    db_user = app.backend.database_user()
    for args, action, target in verbs:
        before = {e.id for e in app.backend.list_audit(None, 1000)}
        result = cli(*args)
        assert result.code == 0, (args, result.err)
        new = [e for e in app.backend.list_audit(None, 1000) if e.id not in before]
        assert [(e.action, e.target) for e in new] == [(action, target)], args
        (entry,) = new
        assert entry.actor.startswith(me), entry.actor
        by = entry.detail["by"]
        assert (by["via"], by["os_user"], by["host"], by["db_user"]) == (
            "cli", getpass.getuser(), socket.gethostname(), db_user)
        if db_user is not None:  # PostgreSQL: the role the CLI's connections act as
            assert entry.actor == f"{me}, db user {db_user}"
    assert db_user is None if app.backend.kind == "sqlite" else db_user == "postgres"

    # Refused: nothing changed, nothing recorded.
    before = len(app.backend.list_audit(None, 1000))
    assert cli("jobs", "cancel", "987654").code == 1
    assert cli("dead", "resurrect", str(done)).code == 1  # purged: no such dead letter
    assert cli("queues", "limit", "q", "0").code == 2
    assert len(app.backend.list_audit(None, 1000)) == before
