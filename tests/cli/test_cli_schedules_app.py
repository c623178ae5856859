"""claimq schedules add/change --app (issue 24, newcomer finding): with an app, an unknown task
is refused and nothing is written, the registered task's queue, priority, attempts and timeout
apply, and the payload is checked as the app's enqueue checks it; without one, the name is
stored unchecked and the command says which defaults apply."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App

APP_MODULE = """
import dataclasses

from claimq import App

app = App("sqlite:///never-used.db")  # the tests give --database


@dataclasses.dataclass
class Report:
    kind: str


@app.task(name="myapp.digest", queue="mail", max_attempts=5, priority=7, timeout=30)
def digest(report: Report) -> None:
    pass
"""


def _write_app(cli: Cli) -> None:
    (cli.cwd / "myapp.py").write_text(APP_MODULE)


def test_an_unknown_task_or_a_bad_payload_is_refused_and_nothing_is_written(
        cli: Cli, app: App) -> None:
    _write_app(cli)
    unknown, bad_payload, bad_path = cli.many(
        ["schedules", "add", "d", "myapp.no_such_task", "--app", "myapp:app", "--every", "60"],
        ["schedules", "add", "d", "myapp.digest", "--app", "myapp:app", "--every", "60",
         "--payload", '{"user": 1}'],
        ["schedules", "add", "d", "myapp.digest", "--app", "myapp:nothing", "--every", "60"],
    )
    unknown.usage_error("has no task 'myapp.no_such_task'", "myapp.digest")
    bad_payload.usage_error("do not fit the handler's parameters")
    bad_path.usage_error("no attribute 'nothing'")
    assert app.schedules.list() == []
    assert not (cli.cwd / "never-used.db").exists()


def test_a_registered_task_takes_its_defaults(cli: Cli, app: App) -> None:
    _write_app(cli)
    plain, overridden = cli.many(
        ["schedules", "add", "d", "myapp.digest", "--app", "myapp:app", "--every", "60",
         "--payload", '{"report": {"kind": "daily"}}'],
        ["schedules", "add", "o", "myapp.digest", "--app", "myapp:app", "--every", "60",
         "--payload", '{"report": {"kind": "weekly"}}', "--queue", "other", "--priority", "1",
         "--max-attempts", "2", "--json"],
    )
    assert "d added: task myapp.digest on queue mail, 5 attempts" in plain.ok().out
    assert plain.err == "", "with --app there is nothing to warn about"
    d, o = app.schedules.get("d"), app.schedules.get("o")
    assert (d.queue, d.priority, d.max_attempts, d.timeout, d.payload) == (
        "mail", 7, 5, 30, {"report": {"kind": "daily"}})
    assert (o.queue, o.priority, o.max_attempts, o.timeout) == ("other", 1, 2, 30)
    assert overridden.json()["max_attempts"] == 2
    unknown, bad, changed = cli.many(
        ["schedules", "change", "d", "--app", "myapp:app", "--task", "myapp.nope"],
        ["schedules", "change", "d", "--app", "myapp:app", "--payload", '{"x": 1}'],
        ["schedules", "change", "o", "--app", "myapp:app", "--max-attempts", "3", "--json"],
    )
    unknown.usage_error("has no task 'myapp.nope'")
    bad.usage_error("do not fit the handler's parameters")
    assert changed.json()["max_attempts"] == 3
    assert app.schedules.get("d") == d, "the refused changes wrote nothing"


def test_without_an_app_nothing_is_checked_and_the_defaults_are_said(cli: Cli, app: App
                                                                      ) -> None:
    added, help_ = cli.many(
        ["schedules", "add", "x", "myapp.no_such_task", "--every", "60"],
        ["schedules", "add", "--help"],
    )
    added.ok()
    stored = app.schedules.get("x")
    assert (stored.task, stored.queue, stored.max_attempts) == ("myapp.no_such_task",
                                                                "default", 20)
    assert "queue default, 20 attempts" in added.out
    assert "without --app, task 'myapp.no_such_task' was not checked" in added.err
    assert "queue 'default'" in added.err and "20 attempts" in added.err
    text = " ".join(help_.ok().out.split())
    assert "--app" in text and "Without --app nothing checks TASK" in text
