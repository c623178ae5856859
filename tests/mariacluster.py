"""A throwaway MariaDB server for tests that stop, restart or crash the database server.

    with MariaCluster() as server:        # mariadb-install-db + mariadbd on a free port
        url = server.url("chaos")         # mysql://root@127.0.0.1:<port>/chaos (created)
        server.restart()                  # clean shutdown (SIGTERM), then start again
        server.crash(); server.start()    # SIGKILL: InnoDB crash recovery at the next start

The server runs as a child process of the test (its own process group), as root with
`--user=root` (or as the calling user), with its unix socket, pid file and error log in the temp
dir, and `--no-defaults`, so nothing of the machine's own MariaDB configuration is read.
`require_server()` skips a test when no server can be made here, or fails it with the reason
under CLAIMQ_REQUIRE_MARIADB=1.
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

from pgcluster import Throwaway, require_or_skip

SERVER_NAMES = ("mariadbd", "mysqld")
INSTALL_NAMES = ("mariadb-install-db", "mysql_install_db")
SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin")


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN]))
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unavailable_reason() -> str | None:
    """Why no throwaway server can be made here, or None when one can."""
    if _find(SERVER_NAMES) is None:
        return f"none of {', '.join(SERVER_NAMES)} found (install mariadb-server)"
    if _find(INSTALL_NAMES) is None:
        return f"none of {', '.join(INSTALL_NAMES)} found (install mariadb-server)"
    try:
        import pymysql  # noqa: F401
    except ImportError:
        return "PyMySQL is not installed"
    return None


def require_server() -> None:
    """Skip the calling test when no server can be made; fail it under
    CLAIMQ_REQUIRE_MARIADB=1, so a CI run never passes by skipping."""
    require_or_skip(unavailable_reason(), "a throwaway MariaDB server", "CLAIMQ_REQUIRE_MARIADB")


class MariaCluster(Throwaway):
    """One MariaDB server of its own: data directory, port, socket, pid file and error log."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.base = Path(tempfile.mkdtemp(prefix="claimq-maria-"))
        self.data = self.base / "data"
        self.logfile = self.base / "server.log"
        self.socket = self.base / "mysqld.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self._initialized = False

    def _user(self) -> list[str]:
        return ["--user=root"] if os.geteuid() == 0 else []

    def install(self) -> None:
        tool = _find(INSTALL_NAMES)
        assert tool is not None, unavailable_reason()
        result = subprocess.run(
            [tool, "--no-defaults", f"--datadir={self.data}", *self._user(),
             "--auth-root-authentication-method=normal", "--skip-test-db"],
            capture_output=True, text=True, timeout=120, check=False, cwd=self.base,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed ({result.returncode}):\n{result.stdout}\n"
                               f"{result.stderr}")
        self._initialized = True

    def start(self, timeout: float = 60) -> None:
        """Start the server and wait until it answers."""
        if not self._initialized:
            self.install()
        assert self.proc is None or self.proc.poll() is not None, "already running"
        server = _find(SERVER_NAMES)
        assert server is not None, unavailable_reason()
        self.proc = subprocess.Popen(
            [server, "--no-defaults", f"--datadir={self.data}", *self._user(),
             f"--port={self.port}", "--bind-address=127.0.0.1", f"--socket={self.socket}",
             f"--pid-file={self.base / 'mysqld.pid'}", f"--log-error={self.logfile}",
             "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=48M",
             "--innodb-flush-log-at-trx-commit=2", "--max-connections=200", "--skip-log-bin",
             "--performance-schema=OFF"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd=self.base, start_new_session=True,
        )
        self.wait_ready(timeout)

    def stop(self, timeout: float = 60) -> None:
        """A clean shutdown (SIGTERM, as `mariadb-admin shutdown`), waited for."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError("mariadbd did not shut down in time:\n"
                               + self.server_log()[-3000:]) from None

    def crash(self) -> None:
        """SIGKILL the server: whatever it had not written is recovered from the redo log at
        the next start."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.kill()
        self.proc.wait(30)

    def restart(self) -> None:
        self.stop()
        self.start()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def server_log(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")
        except OSError:
            return ""

    # -- connecting ----------------------------------------------------------------------------

    def connect(self, database: str | None = None) -> Any:
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                               database=database, autocommit=True, connect_timeout=2)

    def url(self, database: str) -> str:
        """`mysql://root@127.0.0.1:<port>/<database>`, the database created when missing."""
        conn = self.connect()
        try:
            conn.cursor().execute(f"CREATE DATABASE IF NOT EXISTS `{database}`")
        finally:
            conn.close()
        return f"mysql://root@127.0.0.1:{self.port}/{database}"

    def wait_ready(self, timeout: float = 60) -> None:
        import pymysql

        deadline = time.monotonic() + timeout
        while True:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"mariadbd exited ({self.proc.returncode}):\n"
                                   + self.server_log()[-3000:])
            try:
                conn = self.connect()
                conn.close()
                return
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError("mariadbd did not answer in time:\n"
                                       + self.server_log()[-3000:]) from None
                time.sleep(0.1)

    # -- lifetime ------------------------------------------------------------------------------

    def destroy(self) -> None:
        """Kill the server (if running) and delete everything it had."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30)
        shutil.rmtree(self.base, ignore_errors=True)
