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
from typing import Any

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
    """`netns=True`: each node in a network namespace of its own (chaos_netns.NetNs), with its
    own address; the host forwards between the namespaces, the monitor stays on the host."""

    def __init__(self, netns: bool = False) -> None:
        self.nets: list[Any] = []
        if netns:
            from chaos_netns import NetNs

            self.nets = [NetNs(), NetNs()]
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

    def host(self, node: int) -> str:
        return self.nets[node].ns_ip if self.nets else "127.0.0.1"

    def _run(self, name: str, *args: str, prefix: list[str] | None = None) -> None:
        as_user = ["runuser", "-u", OS_USER, "--"] if os.geteuid() == 0 else []
        as_user = [*(prefix or []), *as_user]
        log = open(self.dir / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        self.procs[name] = subprocess.Popen(
            [*as_user, PG_AUTOCTL, *args, "--run"], cwd=self.dir, env=self.env,
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: a kill reaches its postgres too
        )

    def _link(self) -> None:
        for net in self.nets:
            net.__enter__()
            subprocess.run([*net.prefix, "ip", "route", "add", "default", "via", net.host_ip],
                           check=True)
        self._forward = Path("/proc/sys/net/ipv4/ip_forward").read_text().strip()
        Path("/proc/sys/net/ipv4/ip_forward").write_text("1")

    def _unlink(self) -> None:
        for net in self.nets:
            net.close()
        if self.nets and getattr(self, "_forward", None) is not None:
            Path("/proc/sys/net/ipv4/ip_forward").write_text(self._forward)

    def start(self) -> None:
        if self.nets:
            self._link()
        monitor = self.dir / "monitor"
        # The monitor listens on every address (each node reaches it at its own link's host
        # end); nodes and the test reach it there too.
        self._run("monitor", "create", "monitor", "--pgdata", str(monitor),
                  "--pgport", str(self.monitor_port), "--hostname",
                  self.nets[0].host_ip if self.nets else "127.0.0.1",
                  "--auth", "trust", "--no-ssl")
        self._wait_ready(self.monitor_port, 60)
        if self.nets:
            self._open_hba("monitor")
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
        for n, port in enumerate(self.ports):
            monitor_host = self.nets[n].host_ip if self.nets else "127.0.0.1"
            uri = f"postgres://autoctl_node@{monitor_host}:{self.monitor_port}/pg_auto_failover"
            self._run(f"node{n}", "create", "postgres", "--pgdata", str(self.dir / f"node{n}"),
                      "--pgport", str(port), "--hostname", self.host(n), "--monitor", uri,
                      "--auth", "trust", "--no-ssl", "--name", f"node{n}",
                      prefix=self.nets[n].prefix if self.nets else None)
            if self.nets:
                self._open_hba(f"node{n}")
            if n == 0:
                self.wait_primary_is(0, 90)
        self.wait_sync_standby(90)

    def _open_hba(self, name: str, timeout: float = 60) -> None:
        """pg_autoctl grants its own /30 link only: let the host (the test, the workers) and
        the other namespace in, then reload."""
        data = self.dir / name
        deadline = time.monotonic() + timeout
        while not ((data / "pg_hba.conf").exists() and (data / "postmaster.pid").exists()):
            assert time.monotonic() < deadline, f"{name} never started: {self.logs()}"
            time.sleep(0.1)
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write("host all all 10.213.0.0/16 trust\n"
                      "host replication all 10.213.0.0/16 trust\n")
        # A server that starts from now on reads the file anyway; one running now must reload.
        while True:
            try:
                os.kill(int((data / "postmaster.pid").read_text().split()[0]), signal.SIGHUP)
                return
            except (OSError, ValueError, IndexError):
                assert time.monotonic() < deadline, f"{name} has no server: {self.logs()}"
                time.sleep(0.1)

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
        while time.monotonic() < deadline and self._answers(self.ports[node], self.host(node)):
            time.sleep(0.1)
        assert not self._answers(self.ports[node], self.host(node)), (
            f"node{node} still answers after the kill")

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        self.procs.clear()
        # postgres processes that left their group
        subprocess.run(["pkill", "-9", "-f", str(self.dir)], check=False)
        self._unlink()

    # -- state ---------------------------------------------------------------------------------

    def url(self, query: str = "", database: str = "postgres") -> str:
        hosts = ",".join(f"{self.host(n)}:{p}" for n, p in enumerate(self.ports))
        sep = "&" if query else "?"
        return (f"postgresql://postgres@{hosts}/{database}{query}"
                f"{sep}target_session_attrs=read-write")

    def _answers(self, port: int, host: str = "127.0.0.1") -> bool:
        try:
            psycopg.connect(host=host, port=port, user="postgres", dbname="postgres",
                            connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    def _wait_ready(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._answers(port):
            assert time.monotonic() < deadline, f"port {port} not ready: {self.logs()}"
            time.sleep(0.2)

    def _query(self, port: int, sql: str, host: str = "127.0.0.1") -> object:
        with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres",
                             connect_timeout=2, autocommit=True) as conn:
            row = conn.execute(sql).fetchone()
            return row[0] if row else None

    def is_primary(self, node: int) -> bool:
        try:
            # read-write as libpq's target_session_attrs sees it: out of recovery, and writes
            # allowed (a promoted node refuses them until the old primary's demote timeout)
            return self._query(self.ports[node], "SELECT NOT pg_is_in_recovery() AND"
                               " current_setting('transaction_read_only') = 'off'",
                               self.host(node)) is True
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
                                    " FROM pg_stat_replication", self.host(0))
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
