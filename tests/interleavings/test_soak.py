"""The committed-state sampler under a multi-process soak, on every backend: a few seconds in
the normal suite, a minute under the `soak` marker."""

from __future__ import annotations

import os

import pytest
from dbs import fresh_db_url
from sampler import soak
from specs import BACKENDS


def _run(request: pytest.FixtureRequest, tmp_path: os.PathLike[str], backend: str,
         seconds: float) -> None:
    for url in fresh_db_url(request, backend, tmp_path):
        result = soak(backend, url, processes=3, seconds=seconds)
        assert not result.errors, "\n".join(result.errors)
        assert not result.violations, "\n".join(result.violations)
        print(f"\nSOAK {backend}: {result.samples} samples, {result.jobs} jobs")
        assert result.samples >= 2 and result.jobs > 0  # it sampled a load, not an idle base


@pytest.mark.parametrize("backend", BACKENDS)
def test_soak_short(request: pytest.FixtureRequest, tmp_path: os.PathLike[str],
                    backend: str) -> None:
    _run(request, tmp_path, backend, 3.0)


@pytest.mark.soak
@pytest.mark.parametrize("backend", BACKENDS)
def test_soak_long(request: pytest.FixtureRequest, tmp_path: os.PathLike[str],
                   backend: str) -> None:
    """The soak for a minute (`make test` leaves it out; test_soak_short runs 3 s).

    Slow: the sampler watches three worker processes for 60 s by design: a rare overlap of two
    owners shows only over a long run.
    """
    _run(request, tmp_path, backend, 60.0)
