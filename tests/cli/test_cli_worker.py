"""`claimq worker` as a real process (issue 12, defect 11 and the start line): the one app loader
(`module:attr.sub.app`) works in a supervisor's worker processes too, a second signal exits 130
through the supervisor as it does in one process, a worker process that cannot load the app
stops the supervisor (exit 2) instead of being respawned forever, and the start line shows at
the default --log-level."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import Cli, cli_env
from polling import archived, live, wait_until

from claimq import App

pytestmark = pytest.mark.timeout(120)

APP_MODULE = """
import asyncio
import logging
import multiprocessing
import os

from claimq import App

log = logging.getLogger("cliapp")


class _Registry:
    def __init__(self) -> None:
        self.app = App("sqlite:///never-used.db")  # the tests give --database


registry = _Registry()
app = registry.app


@app.task(name="cliapp.sleep")
async def sleep(seconds: float) -> None:
    log.info("handler-start pid=%s", os.getpid())
    await asyncio.sleep(seconds)


if os.environ.get("CLIAPP_EVERY_SECOND"):
    @app.periodic(every=1, name="cliapp.tick")
    def tick() -> None:
        pass


if os.environ.get("CLIAPP_FAIL_IN_CHILD") and multiprocessing.parent_process() is not None:
    raise RuntimeError("this module cannot be imported in a worker process")
"""


class WorkerCli:
    """`claimq --database URL worker …` in its own process group, its output in a file."""

    def __init__(self, cli: Cli, args: list[str], **env: str) -> None:
        self.log_path = cli.cwd / f"worker-{len(list(cli.cwd.glob('worker-*.log')))}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            cli.argv(["worker", *args]), cwd=cli.cwd, env=cli_env(**env),
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_log(self, pattern: str, count: int = 1, timeout: float = 30.0) -> None:
        def found() -> bool:
            if len(re.findall(pattern, self.log())) >= count:
                return True
            if self.proc.poll() is not None:
                raise AssertionError(f"exited ({self.proc.returncode}):\n{self.log()[-4000:]}")
            return False

        try:
            wait_until(found, timeout, f"{pattern!r} x{count}")
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.log()[-4000:]}") from None

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running after {timeout}s:\n{self.log()[-4000:]}") \
                from None

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)
        self._log.close()


@pytest.fixture
def start(cli: Cli) -> Iterator[Callable[..., WorkerCli]]:
    (cli.cwd / "cliapp.py").write_text(APP_MODULE)
    started: list[WorkerCli] = []

    def run(*args: str, **env: str) -> WorkerCli:
        started.append(WorkerCli(cli, list(args), **env))
        return started[-1]

    yield run
    for worker in started:
        worker.close()
        print(f"--- {worker.log_path.name} ---\n{worker.log()[-6000:]}")


STARTED = r"worker \S+ started:"


def test_processes_load_a_dotted_app_path(app: App, start: Callable[..., WorkerCli]) -> None:
    ids = [app.enqueue("cliapp.sleep", {"seconds": 0.2}) for _ in range(6)]
    supervisor = start("cliapp:registry.app", "--processes", "2", "--concurrency", "2",
                       "--poll-interval", "0.1", "--grace", "5")
    supervisor.wait_log(STARTED, count=2)
    wait_until(lambda: len(archived(app)) == len(ids), 40, "every job archived")
    supervisor.signal(signal.SIGTERM)
    assert supervisor.wait(20) == 0
    log = supervisor.log()
    assert "starting another" not in log and "cannot start" not in log
    assert len(re.findall(r"worker \S+ stopped:", log)) == 2
    assert live(app) == []


def test_a_second_signal_exits_130_through_the_supervisor(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    for _ in range(2):
        app.enqueue("cliapp.sleep", {"seconds": 60})
    supervisor = start("cliapp:app", "--processes", "2", "--concurrency", "1",
                       "--poll-interval", "0.1", "--grace", "30", "--lease", "5")
    supervisor.wait_log(r"handler-start", count=2)
    supervisor.signal(signal.SIGTERM)
    supervisor.wait_log(r"stopping \(grace", count=2)
    supervisor.signal(signal.SIGTERM)
    assert supervisor.wait(15) == 130


def test_a_second_signal_exits_130_in_one_process(
    app: App, start: Callable[..., WorkerCli]
) -> None:
    app.enqueue("cliapp.sleep", {"seconds": 60})
    worker = start("cliapp:app", "--concurrency", "1", "--poll-interval", "0.1",
                   "--grace", "30", "--lease", "5")
    worker.wait_log(r"handler-start")
    worker.signal(signal.SIGTERM)
    worker.wait_log(r"stopping \(grace")
    worker.signal(signal.SIGTERM)
    assert worker.wait(15) == 130


@pytest.fixture
def sqlite_cli(tmp_path: Path) -> Cli:
    url = f"sqlite:///{tmp_path}/claimq.db"
    App(url).migrate()
    work = tmp_path / "cwd"
    work.mkdir()
    return Cli(url, work)


@pytest.fixture
def start_sqlite(sqlite_cli: Cli) -> Iterator[Callable[..., WorkerCli]]:
    (sqlite_cli.cwd / "cliapp.py").write_text(APP_MODULE)
    started: list[WorkerCli] = []

    def run(*args: str, **env: str) -> WorkerCli:
        started.append(WorkerCli(sqlite_cli, list(args), **env))
        return started[-1]

    yield run
    for worker in started:
        worker.close()
        print(f"--- {worker.log_path.name} ---\n{worker.log()[-6000:]}")


def test_a_worker_process_that_cannot_load_the_app_stops_the_supervisor(
    start_sqlite: Callable[..., WorkerCli],
) -> None:
    supervisor = start_sqlite("cliapp:app", "--processes", "2", CLIAPP_FAIL_IN_CHILD="1")
    assert supervisor.wait(60) == 2
    log = supervisor.log()
    assert "cannot be imported in a worker process" in log
    assert "could not start" in log and "starting another" not in log


def test_the_start_line_shows_at_the_default_log_level(
    sqlite_cli: Cli, start_sqlite: Callable[..., WorkerCli],
) -> None:
    worker = start_sqlite("cliapp:app", "--poll-interval", "0.1")
    worker.wait_log(r"INFO claimq.worker: worker \S+ started: queues=\* concurrency=10")
    worker.signal(signal.SIGTERM)
    assert worker.wait(20) == 0
    assert re.search(r"worker \S+ stopped:", worker.log())

    with App(sqlite_cli.url) as app:
        job_id = app.enqueue("cliapp.sleep", {"seconds": 0})
        quiet = start_sqlite("cliapp:app", "--poll-interval", "0.1", "--log-level", "warning")
        wait_until(lambda: [j.id for j in archived(app)] == [job_id], 30, "the job to run")
    quiet.signal(signal.SIGTERM)
    assert quiet.wait(20) == 0
    assert quiet.log() == ""


def test_a_worker_warns_of_queues_that_do_not_exist(
    sqlite_cli: Cli, start_sqlite: Callable[..., WorkerCli],
) -> None:
    """`--queues mail,typo` where only `mail` exists: a warning line naming `typo` and the
    queues there are; the worker still starts (the first enqueue may create the queue)."""
    with App(sqlite_cli.url) as app:
        app.enqueue("cliapp.sleep", {"seconds": 0}, queue="mail")
        worker = start_sqlite("cliapp:app", "--queues", "mail,typo", "--poll-interval", "0.1")
        worker.wait_log(STARTED)
        log = worker.log()
        assert re.search(r"WARNING claimq.worker: queue.unknown: --queues names 'typo', which "
                         r"does not exist yet \(queues: mail\)", log), log
        assert "'mail'" not in log
        job_id = app.enqueue("cliapp.sleep", {"seconds": 0}, queue="typo")
        wait_until(lambda: job_id in {j.id for j in archived(app)}, 30, "typo's job to run")
    worker.signal(signal.SIGTERM)
    assert worker.wait(20) == 0


def test_the_scheduler_does_not_log_every_tick_at_info(
    sqlite_cli: Cli, start_sqlite: Callable[..., WorkerCli],
) -> None:
    """A schedule every second: its jobs are enqueued and run, and the log at the default level
    holds the start and stop lines, not a line per tick."""
    worker = start_sqlite("cliapp:app", "--poll-interval", "0.1", CLIAPP_EVERY_SECOND="1")
    worker.wait_log(STARTED)
    with App(sqlite_cli.url) as app:
        wait_until(lambda: len([j for j in archived(app) if j.task.endswith("tick")]) >= 3, 30,
                   "three ticks to run")
    worker.signal(signal.SIGTERM)
    assert worker.wait(20) == 0
    log = worker.log()
    assert "scheduler:" not in log and "enqueued for" not in log, log
    assert len(log.strip().splitlines()) <= 4, log


@contextlib.contextmanager
def _two_ports() -> Iterator[tuple[int, socket.socket]]:
    """A free port P and a listening socket on P + 1."""
    for _ in range(50):
        with socket.create_server(("127.0.0.1", 0)) as probe:
            free = probe.getsockname()[1]
            try:
                taken = socket.create_server(("127.0.0.1", free + 1))
            except OSError:
                continue
        with taken:
            yield free, taken
        return
    raise AssertionError("no two adjacent free ports")


def test_a_port_in_use_exits_1_as_the_help_says(sqlite_cli: Cli) -> None:
    """`claimq dashboard --port P` and `claimq worker --metrics-port P` with P taken: one
    `error:` line and exit 1, the code `claimq --help` gives a port in use (uvicorn exited 3,
    the worker 2)."""
    (sqlite_cli.cwd / "cliapp.py").write_text(APP_MODULE)
    with _two_ports() as (free, taken):
        port = str(taken.getsockname()[1])
        dashboard, metrics, several = sqlite_cli.many(
            ["dashboard", "--port", port, "--allow-anonymous"],
            ["worker", "cliapp:app", "--metrics-port", port, "--metrics-host", "127.0.0.1"],
            # process 0 on the free port, process 1 on the taken one
            ["worker", "cliapp:app", "--processes", "2", "--metrics-port", str(free),
             "--metrics-host", "127.0.0.1"],
        )
    dashboard.failed(1, f"cannot listen on 127.0.0.1:{port} for the dashboard")
    metrics.failed(1, f"cannot listen on 127.0.0.1:{port} for /metrics")
    several.failed(1, f"cannot listen on 127.0.0.1:{port} for /metrics")
    assert "a port already in use" in " ".join(sqlite_cli("--help").ok().out.split())


def _workers(cli: Cli, *args: str) -> dict[str, dict[str, object]]:
    return {w["id"]: w for w in cli("workers", "--json", *args).json()}


def test_a_worker_killed_with_sigkill_is_not_listed_alive_with_jobs_in_flight(
    app: App, cli: Cli, start: Callable[..., WorkerCli]
) -> None:
    """A real `claimq worker` process running a job, killed with SIGKILL: it cannot mark its
    row, and no other worker runs to reap it. `claimq workers` shows it alive with its job in
    flight while it runs; once its row is older than --silent-after it is silent and its stale
    in-flight count is not shown; once its job's lease ran out, `claimq stats` counts the job
    past its lease and not running (issue 28, item 4)."""
    job_id = app.enqueue("cliapp.sleep", {"seconds": 600})
    worker = start("cliapp:app", "--concurrency", "2", "--poll-interval", "0.1",
                   "--lease", "2s")
    worker.wait_log("handler-start")
    # its row says 1 in flight once the next refresh (every 5 s) has run
    alive = wait_until(lambda: [w for w in _workers(cli).values() if w["in_flight"] == 1],
                       30, "the worker's row with its job in flight")
    (row,) = alive
    assert row["alive"] is True and row["pid"] == worker.proc.pid
    worker.proc.kill()  # SIGKILL: no handler runs, the row stays as it was
    worker.proc.wait(10)
    gone = wait_until(lambda: _workers(cli, "--silent-after", "1s")[row["id"]]["alive"] is False
                      or None, 30, "the killed worker shown silent")
    assert gone
    shown = _workers(cli, "--silent-after", "1s")[row["id"]]
    assert shown["dead_at"] is None  # no reaper ran: silent by its age alone
    out = cli("workers", "--silent-after", "1s").ok().out
    line = next(line for line in out.splitlines() if row["id"] in line)
    cells = [cell.strip() for cell in line.strip("│").split("│")]
    # worker │ state │ host │ pid │ queues │ version │ up for │ last seen │ in flight │ concurrency
    assert cells[1] == "silent" and cells[8] == "-", cells
    assert "0 alive, 1 gone" in out, out
    # its job, once past its 2 s lease, is reclaimable: `claimq stats` does not count it running
    wait_until(lambda: cli("stats", "--json").json()["queues"][0]["past_lease"] == 1, 30,
               "the killed worker's job past its lease")
    assert app.get_job(job_id).status.value == "processing"  # nothing reaped it
    line = next(line for line in cli("stats").ok().out.splitlines() if "│ default" in line)
    cells = [cell.strip() for cell in line.strip("│").split("│")]
    # queue │ state │ due │ scheduled │ running │ past lease │ oldest due │ dead
    assert cells[4:6] == ["0", "1"], cells
