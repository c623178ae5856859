"""Bad input, for every sub-command: exit 2 and a one-line `error: …` on stderr, decided
before the database is touched (the database here does not even exist, and stays absent)."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import Cli

APP_MODULE = """
from claimq import App
app = App("sqlite:///never-used.db")
not_an_app = 42
"""

# (arguments, a fragment the error message must contain)
BAD_INPUT: list[tuple[list[str], str]] = [
    # the root group and click's own checks
    (["frobnicate"], "No such command 'frobnicate'"),
    (["stats", "--frob"], "--frob"),
    (["migrate", "--force"], "--force"),
    # worker: APP, --queues and the numbers, all before anything starts
    (["worker"], "APP"),
    (["worker", "mytasks"], "module:attribute"),
    (["worker", "no_such_module_xyz:app"], "no_such_module_xyz"),
    (["worker", "mytasks:missing"], "no attribute 'missing'"),
    (["worker", "mytasks:not_an_app"], "not a claimq.App"),
    (["worker", "mytasks:app", "--concurrency", "0"], "--concurrency"),
    (["worker", "mytasks:app", "--concurrency", "-1"], "--concurrency"),
    (["worker", "mytasks:app", "--processes", "0"], "--processes"),
    (["worker", "mytasks:app", "--queues", "a,,b"], "empty queue name"),
    (["worker", "mytasks:app", "--queues", "ok,bad name!"], "bad name!"),
    (["worker", "mytasks:app", "--lease", "0"], "--lease"),
    (["worker", "mytasks:app", "--poll-interval", "-1"], "--poll-interval"),
    (["worker", "mytasks:app", "--grace", "nan"], "--grace"),
    # enqueue
    (["enqueue"], "TASK"),
    (["enqueue", "t", "--payload", "{not json"], "not valid JSON"),
    (["enqueue", "t", "--payload", "[1, 2]"], "JSON object"),
    (["enqueue", "t", "--payload", "@missing.json"], "cannot read"),
    (["enqueue", "t", "--priority", "99999999"], "--priority"),
    (["enqueue", "1-bad-task-name"], "task name"),
    (["enqueue", "t", "--queue", "no spaces"], "queue name"),
    (["enqueue", "t", "--key", "k", "--count", "2"], "--key"),
    (["enqueue", "t", "--delay", "-1"], "--delay"),
    (["enqueue", "t", "--max-attempts", "0"], "--max-attempts"),
    (["enqueue", "t", "--count", "0"], "--count"),
    (["enqueue", "t", "--tag", ""], "tag"),
    # numbers JSON storage would not keep as written (issue 12, defect 4)
    (["enqueue", "t", "--payload", '{"n": 1e400}'], "1e400 at ['n'] is too large"),
    (["enqueue", "t", "--payload", '{"n": 18446744073709551617}'], "signed 64-bit range"),
    (["enqueue", "t", "--payload", '{"n": [1' + "0" * 400 + "]}"], "at ['n'][0]"),
    (["enqueue", "t", "--payload", '{"n": 1' + "0" * 5000 + "}"], "signed 64-bit range"),
    (["enqueue", "t", "--payload", '{"n": NaN}'], "NaN at ['n']"),
    (["enqueue", "t", "--payload", '{"n": -Infinity}'], "Infinity"),
    (["enqueue", "t", "--payload", '{"n": 1e-400}'], "too small"),
    (["dead", "resurrect", "5", "--payload", '{"n": 1e999}'], "too large"),
    # times past 100 years (defect 8)
    (["enqueue", "t", "--delay", "1e15"], "at most 3155760000 seconds"),
    (["enqueue", "t", "--delay", "1e12"], "--delay"),
    (["queues", "set", "q", "--lease", "1e12"], "at most"),
    (["queues", "set", "q", "--timeout", "1e300"], "at most"),
    (["dead", "purge", "--older-than", "1e20", "--yes"], "at most"),
    (["jobs", "purge", "--older-than", "1e20", "--yes"], "at most"),
    # stats
    (["stats", "--watch", "--interval", "0"], "--interval"),
    # queues
    (["queues", "drain", "q"], "drain"),
    (["queues", "pause"], "QUEUE"),
    (["queues", "pause", "bad name!"], "bad name!"),
    (["queues", "deactivate", "bad name!"], "bad name!"),
    (["queues", "limit", "q", "0"], "from 1 to"),
    (["queues", "limit", "q", "lots"], "none"),
    (["queues", "set", "q"], "nothing to set"),
    (["queues", "set", "q", "--lease", "0"], "--lease"),
    (["queues", "set", "q", "--timeout", "soon"], "--timeout"),
    (["queues", "list", "--all"], "--all"),
    # jobs
    (["jobs", "list", "--status", "bogus"], "bogus"),
    (["jobs", "list", "--table", "archive", "--status", "pending"], "pending"),
    (["jobs", "list", "--table", "nowhere"], "nowhere"),
    (["jobs", "list", "--limit", "0"], "--limit"),
    (["jobs", "list", "--queue", "bad queue!"], "bad queue!"),
    (["jobs", "show", "abc"], "abc"),
    (["jobs", "show", "0"], "ID"),
    (["jobs", "cancel"], "ID"),
    (["jobs", "priority", "5", "99999999"], "N"),
    (["jobs", "priority", "5"], "N"),
    (["jobs", "purge"], "--yes"),  # no terminal to confirm on
    (["jobs", "purge", "--queue", "no good", "--yes"], "no good"),
    # one verb per action: dead letters are resurrected and purged under `dead` only
    (["jobs", "retry", "5"], "No such command 'retry'"),
    (["jobs", "purge", "--table", "dead", "--yes"], "No such option '--table'"),
    # dead letters
    (["dead", "list", "--reason", "bored"], "bored"),
    (["dead", "show"], "ID"),
    (["dead", "resurrect", "5", "--payload", "{"], "not valid JSON"),
    (["dead", "resurrect", "5", "--payload", "[1]"], "JSON object"),
    (["dead", "resurrect", "5", "--payload", "{oops"], "not valid JSON"),
    (["dead", "resurrect", "5", "--priority", "2000000"], "--priority"),
    (["dead", "purge"], "--yes"),
    (["dead", "purge", "--older-than", "-1", "--yes"], "--older-than"),
    (["dead", "purge", "--queue", "no good", "--yes"], "no good"),
]


def test_bad_input_exits_2_before_touching_the_database(tmp_path: Path) -> None:
    """Every bad input of BAD_INPUT: exit 2, one `error:` line, the database never created.

    Slow: about 90 `claimq` invocations, each a process of its own as an operator would run it,
    six at a time: process start-up (Python, claimq, click, rich) is nearly all of it (99 s
    with the 2-core machine under a load of 18).
    """
    database = tmp_path / "absent.db"
    cli = Cli(f"sqlite:///{database}", tmp_path)
    (tmp_path / "mytasks.py").write_text(APP_MODULE)
    results = cli.many(*(args for args, _ in BAD_INPUT))
    for result, (_, fragment) in zip(results, BAD_INPUT, strict=True):
        result.usage_error(fragment)
    assert not database.exists(), "bad input must not create or open the database"
    assert not (tmp_path / "never-used.db").exists()
