"""Typed task arguments (pydantic models, dataclasses) and ctx.progress(), on both backends:
validated at enqueue (nothing written when they are bad), rebuilt in a real worker
(claimq.testing.drain), progress stored on the job and shown by `claimq jobs show`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pydantic
import pytest
from cli_support import claimq_cli

from claimq import App, JobContext
from claimq.errors import InvalidInput, LeaseLost
from claimq.testing import assert_enqueued, drain

pytestmark = pytest.mark.timeout(60)


class Address(pydantic.BaseModel):
    city: str
    zip: int


@dataclasses.dataclass
class Item:
    sku: str
    qty: int = 1


def typed_tasks(app: App, seen: list[Any]) -> tuple[Any, Any]:
    @app.task
    def ship(ctx: JobContext, order: int, to: Address, item: Item, gift: Address | None = None
             ) -> str:
        seen.append((order, to, item, gift))
        return f"{item.qty} x {item.sku} to {to.city}"

    @app.task
    async def ship_async(to: Address) -> int:
        seen.append(to)
        return to.zip

    return ship, ship_async


def test_models_and_dataclasses_are_dumped_at_enqueue_and_rebuilt(app: App) -> None:
    seen: list[Any] = []
    ship, ship_async = typed_tasks(app, seen)
    a = ship.enqueue(order=1, to=Address(city="Oslo", zip=150), item=Item("tea", 2))
    b = ship.enqueue(order=2, to={"city": "Rome", "zip": "100"}, item={"sku": "jam"},
                     gift={"city": "Bern", "zip": 3000})
    c = app.enqueue(ship_async.name, {"to": {"city": "Kyiv", "zip": 1001}})
    [d] = app.enqueue_many([{"task": ship_async.name, "payload": {"to": Address(city="Riga",
                                                                                 zip=1050)}}])
    assert app.get_job(a).payload == {"order": 1, "to": {"city": "Oslo", "zip": 150},
                                      "item": {"sku": "tea", "qty": 2}}
    assert app.get_job(b).payload["to"] == {"city": "Rome", "zip": 100}  # validated: an int
    assert app.get_job(b).payload["item"] == {"sku": "jam", "qty": 1}
    assert_enqueued(app, ship, to=Address(city="Oslo", zip=150))
    assert_enqueued(app, ship_async, to={"city": "Riga", "zip": 1050})

    assert drain(app).succeeded == 4
    assert app.get_job(a).result == "2 x tea to Oslo"
    assert app.get_job(b).result == "1 x jam to Rome"
    assert (app.get_job(c).result, app.get_job(d).result) == (1001, 1050)
    orders = {s[0]: s for s in seen if isinstance(s, tuple)}
    assert orders[1] == (1, Address(city="Oslo", zip=150), Item("tea", 2), None)
    assert orders[2][3] == Address(city="Bern", zip=3000)
    assert {type(s) for s in seen if not isinstance(s, tuple)} == {Address}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"order": 1, "to": {"city": "Oslo"}, "item": {"sku": "x"}}, "argument 'to' is not a valid "
     "Address"),
    ({"order": 1, "to": {"city": "Oslo", "zip": 1}, "item": {"sku": "x", "qty": "many"}},
     "argument 'item' is not a valid Item"),
    ({"order": 1, "to": "Oslo", "item": {"sku": "x"}}, "argument 'to' is not a valid Address"),
    ({"order": 1, "to": {"city": "Oslo", "zip": 1}}, "do not fit the handler's parameters"),
    ({"order": 1, "to": {"city": "Oslo", "zip": 1}, "item": {"sku": "x"}, "colour": "red"},
     "do not fit the handler's parameters"),
])
def test_bad_arguments_are_refused_before_anything_is_written(
    app: App, kwargs: dict[str, Any], message: str
) -> None:
    ship, _ = typed_tasks(app, [])
    with pytest.raises(InvalidInput, match=message):
        ship.enqueue(**kwargs)
    with pytest.raises(InvalidInput, match=message):
        app.enqueue(ship.name, kwargs)
    with pytest.raises(InvalidInput, match=message):
        app.enqueue_many([{"task": "other", "payload": {}}, {"task": ship.name,
                                                              "payload": kwargs}])
    assert app.list_jobs("live") == []


def test_a_payload_edited_into_a_bad_shape_is_dead_lettered(app: App) -> None:
    seen: list[Any] = []
    _, ship_async = typed_tasks(app, seen)
    job = app.enqueue(ship_async.name, {"to": {"city": "Oslo", "zip": 1}})
    assert app.cancel(job) == "cancelled"
    app.resurrect(job, payload={"to": {"city": "Oslo"}})  # operators edit raw JSON
    assert drain(app).dead == 1
    dead = app.get_job(job)
    assert dead.reason == "permanent_error" and seen == []
    assert "payload argument 'to' is not a valid Address" in dead.errors[-1]["message"]


def test_a_typed_task_called_directly_takes_instances_or_dicts(app: App) -> None:
    seen: list[Any] = []
    ship, _ = typed_tasks(app, seen)
    assert ship(None, order=3, to={"city": "Oslo", "zip": 1}, item=Item("x")) == "1 x x to Oslo"
    assert seen[0][1] == Address(city="Oslo", zip=1)
    assert app.task(name=ship.name)(ship.fn.__wrapped__) is not None  # same function: fine


def test_progress_is_stored_on_the_job(app: App) -> None:
    errors: list[str] = []

    @app.task
    def slow(ctx: JobContext, steps: int) -> None:
        for i in range(1, steps + 1):
            ctx.progress(i / steps, f"step {i} of {steps}")
        for bad in (1.5, -0.1, float("nan"), "half", True):
            try:
                ctx.progress(bad)  # type: ignore[arg-type]
            except InvalidInput as exc:
                errors.append(str(exc))
        try:
            ctx.progress(0.5, "x" * 1001)
        except InvalidInput as exc:
            errors.append(str(exc))

    @app.task
    async def aslow(ctx: JobContext) -> None:
        await ctx.aprogress(0.25)

    a = slow.enqueue(steps=4)
    b = aslow.enqueue()
    assert drain(app).succeeded == 2
    pa, pb = app.get_progress(a), app.get_progress(b)
    assert pa is not None and (pa.fraction, pa.note, pa.attempt) == (1.0, "step 4 of 4", 1)
    assert pb is not None and (pb.fraction, pb.note) == (0.25, None)
    assert len(errors) == 6 and "from 0 to 1" in errors[0] and "1000 characters" in errors[-1]
    assert app.get_progress(app.enqueue("x")) is None


def test_progress_after_the_job_is_no_longer_ours_raises_lease_lost(app: App) -> None:
    outcome: list[str] = []

    @app.task
    def late(ctx: JobContext) -> None:
        with app.transaction() as conn:
            ctx.complete_in(conn)
        try:
            ctx.progress(1.0)
        except LeaseLost as exc:
            outcome.append(exc.operation)

    late.enqueue()
    drain(app)
    assert outcome == ["progress"]


def test_jobs_show_prints_the_progress(app: App, tmp_path: Path) -> None:
    @app.task
    def half(ctx: JobContext) -> None:
        ctx.progress(0.5, "halfway there")

    job = half.enqueue()
    drain(app)
    human = claimq_cli(app.url, "jobs", "show", str(job))
    assert "progress" in human and "50% halfway there (attempt 1" in human
    shown = claimq_cli(app.url, "jobs", "show", str(job), "--json")
    import json

    assert json.loads(shown)["progress"]["note"] == "halfway there"
    assert json.loads(claimq_cli(app.url, "jobs", "show", str(app.enqueue("x")), "--json")
                      )["progress"] is None


def test_containers_of_models_are_typed_too(app: App) -> None:
    seen: list[Any] = []

    @app.task
    def pack(items: list[Item], by_city: dict[str, Address]) -> int:
        seen.append((items, by_city))
        return sum(i.qty for i in items)

    job = pack.enqueue(items=[Item("a", 2), {"sku": "b"}],
                       by_city={"oslo": {"city": "Oslo", "zip": "150"}})
    assert app.get_job(job).payload == {
        "items": [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 1}],
        "by_city": {"oslo": {"city": "Oslo", "zip": 150}}}
    with pytest.raises(InvalidInput, match=r"argument 'items' is not a valid list\["):
        pack.enqueue(items=[{"qty": 1}], by_city={})
    assert drain(app).succeeded == 1 and app.get_job(job).result == 3
    [(items, by_city)] = seen
    assert items == [Item("a", 2), Item("b", 1)] and by_city == {"oslo": Address(city="Oslo",
                                                                                  zip=150)}


NO_PYDANTIC = '''
import dataclasses, sys
sys.modules["pydantic"] = None  # import pydantic now fails, as where it is not installed
from claimq import App
from claimq.errors import InvalidInput
from claimq.testing import drain

app = App(sys.argv[1])
app.migrate()

@dataclasses.dataclass
class Item:
    sku: str
    qty: int = 1

@app.task
def take(item: Item, spare: Item | None = None) -> str:
    assert isinstance(item, Item) and spare is None
    return f"{item.qty} {item.sku}"

job = take.enqueue(item={"sku": "tea"})
assert app.get_job(job).payload == {"item": {"sku": "tea", "qty": 1}}
try:
    take.enqueue(item={"colour": "red"})
except InvalidInput as exc:
    print("refused:", exc)
try:
    @app.task
    def many(items: list[Item]) -> None: ...
except InvalidInput as exc:
    print("registration:", exc)
assert drain(app).succeeded == 1 and app.get_job(job).result == "1 tea"
print("ok")
'''


def test_dataclasses_work_without_pydantic(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "no_pydantic.py"
    script.write_text(NO_PYDANTIC)
    done = subprocess.run([sys.executable, str(script), f"sqlite:///{tmp_path}/np.db"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "refused: argument 'item' is not a valid Item" in done.stdout
    assert "registration: parameter 'items' (list[" in done.stdout and "needs pydantic" in \
        done.stdout
    assert done.stdout.strip().endswith("ok")


def test_a_model_defined_in_a_function_is_found_through_the_handlers_closure(app: App) -> None:
    class Local(pydantic.BaseModel):  # a string annotation here (from __future__ import …)
        n: int

    @app.task
    def local(value: Local) -> int:
        assert isinstance(value, Local)
        return value.n

    with pytest.raises(InvalidInput, match="argument 'value' is not a valid Local"):
        local.enqueue(value={"n": "x"})
    job = local.enqueue(value=Local(n=4))
    assert drain(app).succeeded == 1 and app.get_job(job).result == 4
