"""Every python block of the guide in docs/ runs as written: each page's blocks, in order, as
one script in a fresh directory on a fresh database of each backend the page claims (all of
them, SQLite, PostgreSQL and MariaDB, unless a `<!-- backends: … -->` line says fewer). A
block right after a `<!-- not run: … -->` line is left out; it says where its tested version
lives. A failure names the page's own line and the jobs that did not finish."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_runner import BLOCK, Script, claimed_backends, run

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
CASES = [(page, backend) for page in PAGES
         for backend in claimed_backends((DOCS / page).read_text())]
pytestmark = pytest.mark.timeout(120)


def blocks(page: str) -> list[str]:
    """The page's python blocks that run."""
    return [code for skip, code in BLOCK.findall((DOCS / page).read_text()) if not skip]


def test_the_index_lists_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    assert PAGES and all(f"]({page})" in index for page in PAGES), PAGES


@pytest.mark.parametrize(("page", "db_url"), CASES, indirect=["db_url"])
def test_the_pages_examples_run(page: str, db_url: str, tmp_path: Path) -> None:
    script = Script.of_blocks(DOCS / page, (DOCS / page).read_text())
    assert script.parts, f"{page} has no python example that runs"
    assert script.code == "\n\n".join(blocks(page))
    name = f"{page[:-3].replace('-', '_')}_guide.py"
    (tmp_path / name).write_text(script.code)
    backend = db_url.split(":", 1)[0].replace("mysql", "mariadb")
    run(script, [name], tmp_path, db_url, backend, name)
