"""A pg_auto_failover formation of the test's own: a monitor, a primary and a synchronous
standby (Debian's postgresql-15-auto-failover), each `pg_autoctl … --run` in a process group
of its own, on free loopback ports, in a temp dir.

    with Formation() as f:
        url = f.url("?schema=x")      # both nodes, target_session_attrs=read-write
        f.kill(f.primary())           # SIGKILL to the node's whole group: keeper and postgres
        f.wait_promoted(other)        # the monitor promotes the standby

The server refuses to run as root, so as root everything runs as the `postgres` OS user.
`require_failover()` fails the test with the reason under CLAIMQ_REQUIRE_POSTGRES=1 (CI installs
the package: .ci/run), and skips it otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

PG_BIN = Path(os.environ.get("CLAIMQ_PG_BIN", "/usr/lib/postgresql/15/bin"))
PG_AUTOCTL = shutil.which("pg_autoctl") or "/usr/bin/pg_autoctl"
OS_USER = "postgres"
FAST_MONITOR = {  # milliseconds
    "health_check_period": 1000, "health_check_timeout": 1000, "health_check_max_retries": 1,
    "health_check_retry_delay": 500, "node_considered_unhealthy_timeout": 4000,
    # A promoted standby refuses writes until the old primary would have demoted itself.
    "primary_demote_timeout": 4000,
}


def require_failover() -> None:
    reason = None
    if not Path(PG_AUTOCTL).exists():
        reason = "pg_autoctl not found (apt-get install postgresql-15-auto-failover)"
    elif os.geteuid() == 0 and shutil.which("runuser") is None:
        reason = "running as root and `runuser` is not installed"
    if reason:
        if os.environ.get("CLAIMQ_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"pg_auto_failover is required under CLAIMQ_REQUIRE_POSTGRES=1: {reason}")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Formation:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="claimq-paf-"))
        os.chmod(self.dir, 0o777)
        self.monitor_port = _free_port()
        self.ports = [_free_port(), _free_port()]
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.env = {**os.environ, "PATH": f"{PG_BIN}:{os.environ['PATH']}",
                    "PG_AUTOCTL_DEBUG": "0"}
        for key in ("PGHOST", "PGPORT", "PGDATABASE", "PGUSER"):
            self.env.pop(key, None)

    # -- processes -----------------------------------------------------------------------------

    def _run(self, name: str, *args: str) -> None:
        as_user = ["runuser", "-u", OS_USER, "--"] if os.geteuid() == 0 else []
        log = open(self.dir / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        self.procs[name] = subprocess.Popen(
            [*as_user, PG_AUTOCTL, *args, "--run"], cwd=self.dir, env=self.env,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: a kill reaches its postgres too
        )

    def start(self) -> None:
        monitor = self.dir / "monitor"
        self._run("monitor", "create", "monitor", "--pgdata", str(monitor),
                  "--pgport", str(self.monitor_port), "--hostname", "127.0.0.1",
                  "--auth", "trust", "--no-ssl")
        self._wait_ready(self.monitor_port, 60)
        # Notice a dead node within seconds rather than the production defaults' 20-30 s.
        deadline = time.monotonic() + 60
        while not self._query(self.monitor_port, "SELECT count(*) > 0 FROM pg_database"
                              " WHERE datname = 'pg_auto_failover'"):
            assert time.monotonic() < deadline, f"the monitor has no database: {self.logs()}"
            time.sleep(0.2)
        with psycopg.connect(host="127.0.0.1", port=self.monitor_port, user="postgres",
                             dbname="pg_auto_failover", autocommit=True) as conn:
            for name, value in FAST_MONITOR.items():
                conn.execute(f"ALTER SYSTEM SET pgautofailover.{name} = {value}")
            conn.execute("SELECT pg_reload_conf()")
        uri = f"postgres://autoctl_node@127.0.0.1:{self.monitor_port}/pg_auto_failover"
        for n, port in enumerate(self.ports):
            self._run(f"node{n}", "create", "postgres", "--pgdata", str(self.dir / f"node{n}"),
                      "--pgport", str(port), "--hostname", "127.0.0.1", "--monitor", uri,
                      "--auth", "trust", "--no-ssl", "--name", f"node{n}")
            if n == 0:
                self.wait_primary_is(0, 90)
        self.wait_sync_standby(90)

    def kill(self, node: int) -> None:
        proc = self.procs.pop(f"node{node}")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        # The keeper's postgres may have a group of its own: its postmaster.pid names it.
        pid_file = self.dir / f"node{node}" / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self._answers(self.ports[node]):
            time.sleep(0.1)
        assert not self._answers(self.ports[node]), f"node{node} still answers after the kill"

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        self.procs.clear()
        # postgres processes that left their group
        subprocess.run(["pkill", "-9", "-f", str(self.dir)], check=False)

    # -- state ---------------------------------------------------------------------------------

    def url(self, query: str = "", database: str = "postgres") -> str:
        hosts = ",".join(f"127.0.0.1:{p}" for p in self.ports)
        sep = "&" if query else "?"
        return (f"postgresql://postgres@{hosts}/{database}{query}"
                f"{sep}target_session_attrs=read-write")

    def _answers(self, port: int) -> bool:
        try:
            psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                            connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def _wait_ready(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._answers(port):
            assert time.monotonic() < deadline, f"port {port} not ready: {self.logs()}"
            time.sleep(0.2)

    def _query(self, port: int, sql: str) -> object:
        with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres",
                             connect_timeout=2, autocommit=True) as conn:
            row = conn.execute(sql).fetchone()
            return row[0] if row else None

    def is_primary(self, node: int) -> bool:
        try:
            # read-write as libpq's target_session_attrs sees it: out of recovery, and writes
            # allowed (a promoted node refuses them until the old primary's demote timeout)
            return self._query(self.ports[node], "SELECT NOT pg_is_in_recovery() AND"
                               " current_setting('transaction_read_only') = 'off'") is True
        except psycopg.Error:
            return False

    def wait_primary_is(self, node: int, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while not self.is_primary(node):
            assert time.monotonic() < deadline, f"node{node} not primary: {self.logs()}"
            time.sleep(0.2)

    def wait_sync_standby(self, timeout: float) -> None:
        """Until the primary replicates synchronously to the standby (a commit it
        acknowledges is on both)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                state = self._query(self.ports[0], "SELECT string_agg(sync_state, ',')"
                                    " FROM pg_stat_replication")
            except psycopg.Error:
                state = None
            if state in ("sync", "quorum"):
                return
            assert time.monotonic() < deadline, f"no synchronous standby ({state}): {self.logs()}"
            time.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-1500:]}"
                         for p in sorted(self.dir.glob("*.log")))

    def __enter__(self) -> Formation:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
