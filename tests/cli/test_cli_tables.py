"""One table style across the CLI's commands (issue 28, item 7): every listing draws the same
box with a bold header (rich's default box; `schedules list` and `retention list` printed
box-less tables of their own), and every table comes from claimq.cli._render.new_table."""

from __future__ import annotations

import ast
from pathlib import Path

from cli_helpers import Cli

import claimq.cli
from claimq import App
from claimq.backends.base import WorkerRecord

CLI = Path(claimq.cli.__file__).parent


def _drawn_tables(out: str) -> list[str]:
    """The top lines of the boxed tables in `out`."""
    return [line for line in out.splitlines() if line.startswith("┏")]


def test_every_listing_draws_the_same_table(cli: Cli, app: App) -> None:
    app.enqueue("t", queue="mail")
    app.schedules.add("nightly", "t", every=3600)
    app.backend.register_worker(WorkerRecord("host-a:12:abc", "host-a", 12, None, 4, "9.9"))
    commands = (["queues", "list"], ["jobs", "list"], ["schedules", "list"],
                ["retention", "list"], ["workers"], ["stats"], ["dead", "list"])
    results = cli.many(*commands)
    for command, result in zip(commands, results, strict=True):
        out = result.ok().out
        assert _drawn_tables(out), (command, out)
        header = out.splitlines()[out.splitlines().index(_drawn_tables(out)[0]) + 1]
        assert header.startswith("┃"), (command, out)
    schedules = results[2].out
    assert "next run (UTC)" in schedules and "nightly" in schedules


def test_tables_are_made_in_one_place() -> None:
    """No module of the CLI builds a rich Table itself (grids for key/value views aside)."""
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Table"):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == ["_render.py:" + str(_new_table_line())], offenders


def _new_table_line() -> int:
    tree = ast.parse((CLI / "_render.py").read_text())
    (fn,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "new_table"]
    (call,) = [n for n in ast.walk(fn) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Name) and n.func.id == "Table"]
    return call.lineno
