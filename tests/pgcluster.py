"""A throwaway PostgreSQL cluster for tests that stop, restart or crash the database server.

    with PgCluster() as cluster:          # initdb + start on a free port, in a temp dir
        url = cluster.url("?schema=x")
        cluster.restart()                 # pg_ctl restart -m fast
        cluster.stop("immediate"); cluster.start()

The server binaries refuse to run as root, so as root every command runs as the `postgres` OS
user (`runuser -u postgres --`) in a directory that user owns. `require_cluster()` skips a test
when no cluster can be made, or fails it with the reason under CLAIMQ_REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, TypeVar

import psycopg
from psycopg_pool import PoolTimeout

from claimq.errors import DatabaseUnavailable

PG_BIN = Path(os.environ.get("CLAIMQ_PG_BIN", "/usr/lib/postgresql/15/bin"))
OS_USER = "postgres"


def _as_user() -> list[str]:
    return ["runuser", "-u", OS_USER, "--"] if os.geteuid() == 0 else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unavailable_reason() -> str | None:
    """Why no throwaway cluster can be made here, or None when one can."""
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).exists():
            return f"{PG_BIN / tool} not found (set CLAIMQ_PG_BIN)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(OS_USER)
        except KeyError:
            return f"running as root and there is no {OS_USER!r} OS user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and `runuser` is not installed"
        probe = subprocess.run(
            [*_as_user(), "true"], capture_output=True, text=True, timeout=30, check=False
        )
        if probe.returncode != 0:
            return f"`runuser -u {OS_USER} -- true` failed: {probe.stderr.strip()}"
    return None


def require_cluster() -> None:
    """Skip the calling test when no cluster can be made; fail it under
    CLAIMQ_REQUIRE_POSTGRES=1, so a CI run never passes by skipping."""
    require_or_skip(unavailable_reason(), "a throwaway PostgreSQL cluster",
                    "CLAIMQ_REQUIRE_POSTGRES")


def require_or_skip(reason: str | None, what: str, required_by: str) -> None:
    """Nothing when `reason` is None; else skip the calling test, or fail it when the
    environment variable `required_by` is 1 (CI: a run never passes by skipping)."""
    import pytest

    if reason is None:
        return
    message = f"cannot start {what}: {reason}"
    if os.environ.get(required_by) == "1":
        pytest.fail(f"{message} ({required_by}=1)")
    pytest.skip(message)


class Throwaway:
    """A server of a test's own as a context manager: started on entry (removed again if that
    fails), destroyed on exit."""

    def start(self) -> None:
        raise NotImplementedError

    def destroy(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


class PgCluster(Throwaway):
    """One PostgreSQL server of its own: data directory, port, socket directory and log."""

    def __init__(self, port: int | None = None, settings: dict[str, Any] | None = None) -> None:
        self.port = port or _free_port()
        self.settings = {
            "listen_addresses": "127.0.0.1",
            "fsync": "off",  # nothing here needs to survive a machine crash
            "full_page_writes": "off",
            "max_connections": "100",
            **(settings or {}),
        }
        self.base = Path(tempfile.mkdtemp(prefix="claimq-pg-"))
        self.data = self.base / "data"
        self.logfile = self.base / "server.log"
        if os.geteuid() == 0:
            user = pwd.getpwnam(OS_USER)
            os.chown(self.base, user.pw_uid, user.pw_gid)
        os.chmod(self.base, 0o700)
        self._initialized = False

    # -- commands ------------------------------------------------------------------------------

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*_as_user(), *args], capture_output=True, text=True, timeout=timeout, check=False,
            cwd=self.base,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n"
                f"{result.stderr}\n{self.server_log()[-3000:]}"
            )
        return result

    def _options(self) -> str:
        opts = [f"-p {self.port}", f"-k {self.base}"]
        opts += [f"-c {k}={v}" for k, v in self.settings.items()]
        return " ".join(opts)

    def initdb(self) -> None:
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-sync", "--no-instructions",
        )
        self._initialized = True

    def start(self) -> None:
        if not self._initialized:
            self.initdb()
        self._run(
            str(PG_BIN / "pg_ctl"), "start", "-D", str(self.data), "-w", "-t", "60",
            "-l", str(self.logfile), "-o", self._options(),
        )

    def stop(self, mode: str = "fast") -> None:
        """pg_ctl stop -m fast|smart|immediate (immediate: a crash, recovered at next start)."""
        self._run(str(PG_BIN / "pg_ctl"), "stop", "-D", str(self.data), "-w", "-t", "60",
                  "-m", mode)

    def restart(self, mode: str = "fast") -> None:
        self._run(
            str(PG_BIN / "pg_ctl"), "restart", "-D", str(self.data), "-w", "-t", "60",
            "-m", mode, "-l", str(self.logfile), "-o", self._options(),
        )

    def running(self) -> bool:
        result = subprocess.run(
            [*_as_user(), str(PG_BIN / "pg_ctl"), "status", "-D", str(self.data)],
            capture_output=True, text=True, timeout=30, check=False,
        )
        return result.returncode == 0

    def server_log(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")
        except OSError:
            return ""

    # -- connecting ----------------------------------------------------------------------------

    def url(self, suffix: str = "", dbname: str = "postgres") -> str:
        """`postgresql://postgres@127.0.0.1:<port>/<dbname><suffix>`, e.g. suffix `?schema=x`."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}{suffix}"

    def wait_ready(self, timeout: float = 30) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.url(), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    # -- lifetime ------------------------------------------------------------------------------

    def destroy(self) -> None:
        """Stop the server (if running) and delete everything it had."""
        if self._initialized and self.running():
            with contextlib.suppress(Exception):
                self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)



T = TypeVar("T")


def through_outage(call: Callable[[], T], timeout: float = 60) -> T:
    """A test's own database calls, retried while the server is away."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except (psycopg.OperationalError, PoolTimeout, DatabaseUnavailable):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
