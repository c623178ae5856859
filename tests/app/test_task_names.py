"""A task's default name is the module a worker imports for it, also when its module runs as a
script (`__main__`): `python myapp.py` registers `myapp.f`, which `claimq worker myapp:app`
accepts, not `__main__.f`, which it would refuse (issue 12, the README's example)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MODULE = """
from claimq import App
app = App("sqlite:///never-used.db")

@app.task
def f() -> None: ...

print(",".join(app.tasks))
"""


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["myapp.py"], "myapp.f"),
        (["-m", "myapp"], "myapp.f"),
        (["pkg/jobs.py"], "pkg.jobs.f"),
        (["-m", "pkg.jobs"], "pkg.jobs.f"),
        (["-c", "import myapp"], "myapp.f"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else v,
)
def test_the_default_name_is_the_importable_module(
    tmp_path: Path, argv: list[str], name: str
) -> None:
    (tmp_path / "myapp.py").write_text(MODULE)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "jobs.py").write_text(MODULE)
    done = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == name
    assert not (tmp_path / "never-used.db").exists()
