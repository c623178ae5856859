"""Process facts from /proc for the tests that start, kill and watch worker processes."""

from __future__ import annotations

from pathlib import Path


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (no psutil)."""
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return sorted(children)


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
