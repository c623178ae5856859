"""Every python block of the guide in docs/ runs as written: each page's blocks, in order, as
one script in a fresh directory on a fresh SQLite file (a block right after a
`<!-- not run: … -->` line is left out; it says where its tested version lives)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
pytestmark = pytest.mark.timeout(120)
BLOCK = re.compile(r"(?:^(<!-- not run[^\n]*-->)\n)?^```python\n(.*?)^```", re.S | re.M)


def blocks(page: str) -> list[str]:
    """The page's python blocks that run."""
    return [code for skip, code in BLOCK.findall((DOCS / page).read_text()) if not skip]


def test_the_index_lists_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    assert PAGES and all(f"]({page})" in index for page in PAGES), PAGES


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_examples_run(page: str, tmp_path: Path) -> None:
    code = blocks(page)
    assert code, f"{page} has no python example that runs"
    script = tmp_path / f"{page[:-3]}_guide.py"
    script.write_text("\n\n".join(code))
    env = {**os.environ, "CLAIMQ_DATABASE_URL": f"sqlite:///{tmp_path}/claimq.db",
           "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, script.name], cwd=tmp_path, env=env, timeout=100,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"{page}:\n{done.stdout}\n{done.stderr}"
