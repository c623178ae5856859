"""The pairwise matrix: every spec of specs.py on every backend that has its pause point. After
each: the invariants, the spec's check, and no deadlock between A and B (MariaDB retries one
unseen; issue 24 defect 3: locks in one order)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from interleave import World, interleave
from invariants import assert_invariants
from specs import Spec, cases, no_deadlock

_CASES = cases()


@pytest.mark.parametrize(("spec", "backend"), [pytest.param(s, b, id=f"{b}-{s.id()}")
                                               for s, b in _CASES])
def test_interleaving(spec: Spec, backend: str, open_world: Callable[[str], World]) -> None:
    world = open_world(backend)
    ctx = spec.world(world)
    assert_invariants(world)  # the world itself is sound
    outcome = interleave(world, lambda: spec.a(world, ctx), spec.point,
                         lambda: spec.b(world, ctx))
    assert outcome.reached, f"A never reached {spec.point}: the spec no longer tests it"
    if outcome.b_blocked is None:  # not a failure: say where B was, for whoever reads the log
        print(f"B neither finished nor was seen waiting for A's lock:\n{outcome.note}")
    outcome.raise_errors()
    assert_invariants(world)
    problems = spec.check(world, ctx, outcome) + no_deadlock(world, ctx, outcome)
    assert not problems, "\n".join(problems)
