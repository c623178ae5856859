"""The README's Quick start, as a newcomer runs it: a fresh `git clone` of this checkout, then
the commands of the Quick start block. `make demo` runs whole (it makes its own .venv and ends
with its checks against the database); `make test` is the command this suite itself runs under
(`.ci/run`), so here it is only checked to be the target CI calls, not run inside itself."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the Quick start has a sh block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()
            if line.split("#", 1)[0].strip()]


def test_the_quick_start_commands_are_the_two_make_targets() -> None:
    assert quick_start_commands() == ["make demo", "make test"]
    assert "exec make test" in (ROOT / ".ci" / "run").read_text()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras_requirements() -> set[str]:
    """The distributions claimq's extras (dev included) name, claimq itself left out."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    names = {canonical(re.split(r"[\[<>=!~ ;]", req, maxsplit=1)[0])
             for reqs in extras.values() for req in reqs}
    return names - {"claimq"}


def test_the_extras_are_known() -> None:
    assert {"psycopg", "pytest", "django", "starlette", "prometheus-client"} \
        <= extras_requirements()


def test_make_demo_from_a_fresh_clone(tmp_path: Path) -> None:
    """`make demo` in a fresh clone, as the Quick start says, ends with its checks passed, having
    installed only what the demo needs: claimq's core, none of its extras (issue 28, item 7).

    Slow: the fresh clone's `make demo` makes its own .venv and pip-installs claimq and its
    dependencies before the demo runs.
    """
    if not (ROOT / ".git").exists():
        pytest.fail("the quick start test clones this checkout: it must be a git clone")
    clone = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    assert not (clone / ".venv").exists()
    done = subprocess.run(["make", "demo"], cwd=clone, capture_output=True, text=True,
                          timeout=540, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "all checks passed" in output, output[-4000:]
    assert (clone / ".venv" / "bin" / "claimq").exists()
    # only what the demo needs: claimq and its own dependencies, no extra and no dev tool
    listed = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "pip", "list",
                             "--format=json"], capture_output=True, text=True, check=True)
    installed = {canonical(p["name"]) for p in json.loads(listed.stdout)}
    assert "claimq" in installed
    assert not installed & extras_requirements(), installed & extras_requirements()
    shutil.rmtree(clone, ignore_errors=True)
