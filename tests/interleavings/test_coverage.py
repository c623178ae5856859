"""Every pause point in src/claimq is driven by at least one spec on each backend that has it
(or is listed in specs.AWAITING: a point whose spec is still to come), and every spec names a
point that exists. A new pause("…") without a spec fails here."""

from __future__ import annotations

import re

from specs import AWAITING, BACKENDS, SPECS, SRC, cases, points

_NAME = re.compile(r"[a-z_]+\.[a-z_]+")


def test_every_point_has_a_spec_on_every_backend_that_has_it() -> None:
    covered = {(s.point, b) for s, b in cases()}
    missing = sorted((p, b) for b, names in points().items() for p in names
                     if (p, b) not in covered and p not in AWAITING)
    assert not missing, (f"pause points without a spec (add one to specs.py, see README.md): "
                         f"{missing}")


def test_every_spec_runs_somewhere() -> None:
    where = points()
    dead = [s.id() for s in SPECS if not any(s.point in where[b] for b in s.backends)]
    assert not dead, f"specs whose pause point no backend has: {dead}"


def test_points_are_literal_and_named_operation_dot_point() -> None:
    bad = []
    for path in SRC.rglob("*.py"):
        for line in path.read_text().splitlines():
            call = re.search(r"(?<![\w.])pause\(([^)]*)\)", line)
            if call is None or line.lstrip().startswith(("def ", "#")):
                continue
            literal = re.fullmatch(r"""\s*["']([^"']*)["']\s*""", call.group(1))
            if literal is None or not _NAME.fullmatch(literal.group(1)):
                bad.append(f"{path.relative_to(SRC)}: {line.strip()}")
    assert not bad, f"pause() takes one literal '<operation>.<point>': {bad}"


def test_the_matrix_covers_every_backend() -> None:
    assert {b for _, b in cases()} == set(BACKENDS)
