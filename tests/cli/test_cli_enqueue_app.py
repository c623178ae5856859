"""claimq enqueue --app (issue 12, defect 9): with an app, an unknown task is refused and a
registered task's defaults apply; without one, the name is checked against the task names the
live workers register (issue 24), and --help says so.
Also the App's own enqueue_many, which gives registered names their defaults like enqueue()."""

from __future__ import annotations

from cli_helpers import Cli

from claimq import App
from claimq.backends.base import WorkerRecord

APP_MODULE = """
from claimq import App, RetryPolicy

app = App("sqlite:///never-used.db")  # the tests give --database


@app.task(name="myapp.send_welcome", queue="mail", max_attempts=5, priority=7, timeout=30,
          retry=RetryPolicy(base=2))
def send_welcome(user_id: int) -> None:
    pass


class _Registry:
    app = app


registry = _Registry()
"""


def _write_app(cli: Cli) -> None:
    (cli.cwd / "myapp.py").write_text(APP_MODULE)


def test_an_unknown_task_is_refused_and_nothing_is_written(cli: Cli, app: App) -> None:
    _write_app(cli)
    unknown, unknown_bulk, bad_path = cli.many(
        ["enqueue", "myapp.no_such_task", "--app", "myapp:app"],
        ["enqueue", "myapp.no_such_task", "--app", "myapp:registry.app", "--count", "5"],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:nothing"],
    )
    unknown.usage_error("has no task 'myapp.no_such_task'", "myapp.send_welcome")
    unknown_bulk.usage_error("has no task")
    bad_path.usage_error("no attribute 'nothing'")
    assert app.list_jobs() == [] and app.queues() == []
    assert not (cli.cwd / "never-used.db").exists()


def test_a_registered_task_takes_its_defaults(cli: Cli, app: App) -> None:
    _write_app(cli)
    plain, dotted, overridden, bulk = cli.many(
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--payload", '{"user_id": 1}'],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:registry.app", "--payload",
         '{"user_id": 2}'],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--queue", "other",
         "--priority", "1", "--max-attempts", "2", "--payload", '{"user_id": 3}'],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--count", "3", "--json",
         "--payload", '{"user_id": 4}'],
    )
    for result in (plain, dotted):
        job = app.get_job(int(result.ok().out))
        assert (job.queue, job.priority, job.max_attempts, job.timeout) == ("mail", 7, 5, 30)
    assert app.get_job(int(plain.out)).payload == {"user_id": 1}
    job = app.get_job(int(overridden.ok().out))
    assert (job.queue, job.priority, job.max_attempts, job.timeout) == ("other", 1, 2, 30)
    ids = bulk.json()["ids"]
    assert len(ids) == 3
    for job_id in ids:
        job = app.get_job(job_id)
        assert (job.queue, job.priority, job.max_attempts, job.timeout) == ("mail", 7, 5, 30)
    assert not (cli.cwd / "never-used.db").exists(), "--database wins over the app's own URL"


def test_arguments_that_do_not_fit_the_handler_are_refused(cli: Cli, app: App) -> None:
    """Issue 24: with --app, the payload must fit the handler (exit 2, nothing written),
    not be accepted and then dead-lettered by the worker."""
    _write_app(cli)
    unknown, missing, wrong_type, bulk = cli.many(
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--payload", '{"uid": 7}'],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app"],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--payload",
         '{"user_id": "7"}'],
        ["enqueue", "myapp.send_welcome", "--app", "myapp:app", "--count", "3", "--payload",
         '{"user_id": 1, "tone": "warm"}'],
    )
    unknown.usage_error("unknown argument(s) 'uid'", "it takes: user_id")
    missing.usage_error("missing argument(s) 'user_id'")
    wrong_type.usage_error("argument 'user_id' must be int, got str '7'")
    bulk.usage_error("unknown argument(s) 'tone'")
    assert app.list_jobs() == [] and app.queues() == []


def test_without_an_app_or_live_workers_nothing_is_checked_and_help_says_so(
    cli: Cli, app: App
) -> None:
    result, help_ = cli.many(["enqueue", "myapp.no_such_task"], ["enqueue", "--help"])
    job = app.get_job(int(result.ok().out))
    assert (job.task, job.queue, job.max_attempts) == ("myapp.no_such_task", "default", 20)
    text = " ".join(help_.ok().out.split())
    assert "--app" in text and "--force" in text
    assert "a name that none of them registers is refused" in text
    assert "hands the job back uncounted" in text


def test_a_name_no_live_worker_registers_is_refused(cli: Cli, app: App) -> None:
    """Issue 24 (newcomer): without --app, a typo was accepted and the job then burned. Live
    workers record the task names they run; a name none of them runs is refused."""
    app.backend.register_worker(WorkerRecord("host-a:1:a", "host-a", 1, None, 4, "9.9",
                                              tasks=("myapp.send_welcome", "myapp.bill")))
    app.backend.register_worker(WorkerRecord("host-b:2:b", "host-b", 2, ("reports",), 2, "9.9",
                                              tasks=("reports.build",)))
    typo, bulk_typo, known, other_worker, forced = cli.many(
        ["enqueue", "myapp.send_welcom"],
        ["enqueue", "myapp.send_welcom", "--count", "3"],
        ["enqueue", "myapp.send_welcome", "--payload", '{"user_id": 1}'],
        ["enqueue", "reports.build"],
        ["enqueue", "myapp.later", "--force"],
    )
    typo.usage_error("no live worker registers task 'myapp.send_welcom'",
                     "myapp.send_welcome", "reports.build", "--force")
    bulk_typo.usage_error("no live worker registers task 'myapp.send_welcom'")
    ids = [int(r.ok().out) for r in (known, other_worker, forced)]
    assert sorted(j.task for j in app.list_jobs()) == [
        "myapp.later", "myapp.send_welcome", "reports.build"]
    assert sorted(j.id for j in app.list_jobs()) == sorted(ids)


def test_dead_workers_and_workers_that_do_not_say_are_not_asked(cli: Cli, app: App) -> None:
    app.backend.register_worker(WorkerRecord("gone:1:a", "gone", 1, None, 4, "9.9",
                                              tasks=("myapp.send_welcome",)))
    app.backend.prune_workers(dead_after=-1, forget_after=3600)  # silent: marked dead
    assert [w.alive for w in app.workers()] == [False]
    cli("enqueue", "myapp.anything").ok()
    # a live worker of an older claimq (no task list): it cannot tell, nothing is refused
    app.backend.register_worker(WorkerRecord("old:2:b", "old", 2, None, 4, "0.9"))
    app.backend.register_worker(WorkerRecord("new:3:c", "new", 3, None, 4, "9.9",
                                              tasks=("myapp.send_welcome",)))
    cli("enqueue", "myapp.something_else").ok()
    assert len(app.list_jobs()) == 2


def test_enqueue_many_gives_registered_names_their_defaults(app: App) -> None:
    @app.task(name="tasks.mail", queue="mail", max_attempts=4, priority=3, timeout=9)
    def mail(to: str) -> None: ...

    small = app.enqueue_many([{"task": "tasks.mail", "payload": {"to": "a"}},
                              {"task": "tasks.mail", "queue": "urgent", "priority": 9,
                               "payload": {"to": "b"}},
                              {"task": "other"}])
    bulk = app.enqueue_many([{"task": "tasks.mail", "payload": {"to": "c"}}] * 250)  # COPY
    shapes = [(j.queue, j.priority, j.max_attempts, j.timeout)
              for j in map(app.get_job, small)]
    assert shapes == [("mail", 3, 4, 9), ("urgent", 9, 4, 9), ("default", 0, 20, None)]
    assert {(j.queue, j.priority, j.max_attempts, j.timeout)
            for j in app.list_jobs(queue="mail", limit=1000)} == {("mail", 3, 4, 9)}
    assert len(app.list_jobs(queue="mail", limit=1000)) == 251 == len(bulk) + 1
