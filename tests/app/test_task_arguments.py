"""Issue 24 (newcomer findings): a job's arguments are checked against its handler at enqueue.

`task.enqueue(42)` binds 42 to the handler's first parameter (as calling it would), `conn` is
keyword-only and no handler parameter may take its name; arguments that do not fit the handler
(unknown, missing, of the wrong simple type where annotated) raise InvalidInput at every entry
point that knows the task, and nothing is written, instead of a job the worker dead-letters."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest

from claimq import App, JobContext
from claimq.errors import InvalidInput
from claimq.testing import drain

pytestmark = pytest.mark.timeout(60)


def welcome_task(app: App, seen: list[Any]) -> Any:
    @app.task(name="myapp.send_welcome", queue="mail")
    async def send_welcome(ctx: JobContext, user_id: int, tone: Literal["warm", "dry"] = "warm",
                           note: str | None = None, weight: float = 1.0) -> None:
        seen.append((user_id, tone, note, weight))

    return send_welcome


def test_positional_arguments_bind_to_the_handlers_parameters(app: App) -> None:
    seen: list[Any] = []
    send_welcome = welcome_task(app, seen)
    first = send_welcome.enqueue(42)
    second = send_welcome.enqueue(43, "dry", weight=2)
    third = asyncio.run(send_welcome.aenqueue(44, note="hi"))
    with app.transaction() as conn:  # conn is keyword-only: the caller's transaction
        fourth = send_welcome.enqueue(45, conn=conn)
    assert app.get_job(first).payload == {"user_id": 42}
    assert app.get_job(second).payload == {"user_id": 43, "tone": "dry", "weight": 2}
    assert app.get_job(third).payload == {"user_id": 44, "note": "hi"}
    assert app.get_job(fourth).payload == {"user_id": 45}
    assert drain(app).succeeded == 4
    assert sorted(seen) == [(42, "warm", None, 1.0), (43, "dry", None, 2), (44, "warm", "hi", 1.0),
                            (45, "warm", None, 1.0)]


BAD: list[tuple[dict[str, Any], str]] = [
    ({"uid": 7}, r"unknown argument\(s\) 'uid'.*it takes: user_id, tone, note, weight"),
    ({}, r"missing argument\(s\) 'user_id'"),
    ({"user_id": "7"}, "argument 'user_id' must be int, got str '7'"),
    ({"user_id": True}, "argument 'user_id' must be int, got bool"),
    ({"user_id": 7, "tone": "cold"}, "argument 'tone' must be Literal"),
    ({"user_id": 7, "note": 5}, r"argument 'note' must be str \| None, got int"),
    ({"user_id": 7, "weight": "heavy"}, "argument 'weight' must be float"),
]


@pytest.mark.parametrize(("payload", "message"), BAD)
def test_arguments_that_do_not_fit_are_refused_at_every_entry_point(
    app: App, payload: dict[str, Any], message: str
) -> None:
    send_welcome = welcome_task(app, [])
    calls = [
        lambda: send_welcome.enqueue(**payload),
        lambda: asyncio.run(send_welcome.aenqueue(**payload)),
        lambda: send_welcome.with_options(priority=3).enqueue(**payload),
        lambda: app.enqueue("myapp.send_welcome", payload),
        lambda: app.enqueue("myapp.send_welcome", payload or None),
        lambda: app.enqueue(send_welcome, payload),
        lambda: asyncio.run(app.aenqueue("myapp.send_welcome", payload)),
        lambda: app.enqueue_many([{"task": "myapp.send_welcome", "payload": {"user_id": 1}},
                                  {"task": "myapp.send_welcome", "payload": payload}]),
        lambda: asyncio.run(app.aenqueue_many([{"task": "myapp.send_welcome",
                                                "payload": payload}])),
    ]
    for call in calls:
        with pytest.raises(InvalidInput, match=message):
            call()
    assert app.list_jobs("live") == [] and app.queues() == []


def test_what_fits_is_accepted(app: App) -> None:
    send_welcome = welcome_task(app, [])

    @app.task(name="t.anything")
    def anything(ctx: JobContext, n: int = 0, **rest: Any) -> None:
        pass

    ok = [
        send_welcome.enqueue(user_id=1, weight=3),  # an int where a float is annotated
        send_welcome.enqueue(user_id=2, note=None),
        app.enqueue("t.anything", {"n": 1, "whatever": [1, 2]}),
        app.enqueue("t.not_registered_here", {"free": "form"}),  # another app's task: unchecked
    ]
    assert len(app.list_jobs("live")) == len(ok)


def test_the_signature_is_read_once_per_task(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path}/q.db")
    send_welcome = welcome_task(app, [])
    assert send_welcome.parameters is not None
    assert send_welcome.with_options(queue="other").parameters is send_welcome.parameters


@pytest.mark.parametrize("handler", ["conn", "conn_kw_only"])
def test_a_handler_parameter_named_conn_is_refused_at_registration(
    tmp_path: Path, handler: str
) -> None:
    app = App(f"sqlite:///{tmp_path}/q.db")

    def takes_conn(ctx: JobContext, conn: Any) -> None:
        pass

    def takes_conn_by_keyword(user_id: int, *, conn: Any = None) -> None:
        pass

    fn = takes_conn if handler == "conn" else takes_conn_by_keyword
    with pytest.raises(InvalidInput, match="may not be named 'conn'.*task.enqueue"):
        app.task(name="t.conn")(fn)
    assert "t.conn" not in app.tasks


def test_positional_mistakes_are_refused(tmp_path: Path) -> None:
    app = App(f"sqlite:///{tmp_path}/q.db")
    send_welcome = welcome_task(app, [])
    with pytest.raises(InvalidInput, match=r"takes 4 positional argument\(s\).*got 5"):
        send_welcome.enqueue(1, "warm", None, 1.0, "extra")
    with pytest.raises(InvalidInput, match="two values for argument 'user_id'"):
        send_welcome.enqueue(1, user_id=2)

    def positional_only(ctx: JobContext, user_id: int, /) -> None:
        pass

    with pytest.raises(InvalidInput, match="'user_id' is positional-only"):
        app.task(name="t.positional_only")(positional_only)
