"""A resurrected dead letter keeps its idempotency key's uniqueness (issue 24: the sampler found
two pending holders of one key after a resurrection). The key free or still the job's own: the
job takes it back (its row points at the job, its window cleared). Another job holding it:
KeyHeld, naming the key and the holder, and nothing moves."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from interleave import World, fail
from invariants import one_live_holder
from specs import BACKENDS

from claimq.errors import KeyHeld


def _dead_keyed(w: World, unique: str = "active") -> int:
    [job_id] = w.enqueue(1, queue="q", idempotency_key="i", unique=unique)
    [job] = w.claim(queues=["q"], limit=1)
    assert fail(w.b, [job], permanent=True).dead == {job_id}
    return job_id


def _key_row(w: World) -> list[tuple[object, ...]]:
    table = "idempotency_keys" if w.kind == "postgresql" else "idempotency"
    return [tuple(r) for r in w.rows(f"SELECT job_id, finished_at FROM {w.table(table)}")]


@pytest.mark.parametrize("backend", BACKENDS)
def test_resurrect_beside_a_new_holder_of_the_key(
        backend: str, open_world: Callable[[str], World]) -> None:
    w = open_world(backend)
    first = _dead_keyed(w)
    [second] = w.enqueue(1, queue="q", idempotency_key="i", unique="active")  # the key is free
    with pytest.raises(KeyHeld, match=rf"'i' is held by job {second}") as raised:
        w.b.resurrect(first)
    assert (raised.value.job_id, raised.value.key, raised.value.holder_id) == (first, "i", second)
    assert one_live_holder(w) == []
    assert [int(r[0]) for r in w.rows(f"SELECT id FROM {w.table('dead')}")] == [first]
    assert _key_row(w) == [(second, None)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("pruned", [False, True], ids=["own key", "key pruned"])
def test_resurrect_takes_its_key_back(
        backend: str, pruned: bool, open_world: Callable[[str], World]) -> None:
    w = open_world(backend)
    first = _dead_keyed(w)
    if pruned:  # a key whose window ran out is deleted by the pruner
        w.clock.advance(10)
        assert w.b.backend.prune_idempotency_keys(1.0, 100) == 1
    w.b.resurrect(first)
    assert _key_row(w) == [(first, None)]
    # the key's holder again: a new job of the key is refused, in every scope
    for unique in ("pending", "active", "until_done"):
        again = w.b.enqueue("t.work", {"n": 2}, queue="q", idempotency_key="i", unique=unique)
        assert int(again) == first
    assert one_live_holder(w) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_resurrect_takes_the_key_of_a_holder_whose_window_ran_out(
        backend: str, open_world: Callable[[str], World]) -> None:
    w = open_world(backend)
    first = _dead_keyed(w)
    second = _dead_keyed(w)  # took the key over (unique="active"), and died too
    w.clock.advance(w.b.idempotency_retention + 10)
    w.b.resurrect(first)
    assert _key_row(w) == [(first, None)]
    with pytest.raises(KeyHeld, match=rf"held by job {first}"):
        w.b.resurrect(second)
