"""A PgBouncer of the test's own, in front of the shared PostgreSQL server.

    with PgBouncer(mode="transaction") as bouncer:   # on a free port, in a temp dir
        url = bouncer.url("claimq_test", "?schema=x&pooler=transaction")
        bouncer.restart()                            # stop (SIGINT: every link cut), start again

Debian's `pgbouncer` (1.18: no prepared statements in transaction mode, hence claimq's
`pooler=transaction`). It refuses to run as root, so as root it runs as the `postgres` OS user
(`-u postgres`) with its files in a directory that user can read. `require_pgbouncer()` fails the
test with the reason when PgBouncer cannot run (CI installs it: .ci/run), and skips it otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

BINARY = os.environ.get("CLAIMQ_PGBOUNCER", "/usr/sbin/pgbouncer")
OS_USER = "postgres"
SERVER = ("127.0.0.1", 5432)


def require_pgbouncer() -> None:
    if not Path(BINARY).exists():
        reason = f"{BINARY} not found (apt-get install pgbouncer)"
        if os.environ.get("CLAIMQ_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PgBouncer is required under CLAIMQ_REQUIRE_POSTGRES=1: {reason}")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgBouncer:
    def __init__(self, mode: str = "transaction", pool_size: int = 4) -> None:
        self.mode = mode
        self.pool_size = pool_size
        self.port = _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="claimq-pgbouncer-"))
        os.chmod(self.dir, 0o777)
        self.ini = self.dir / "pgbouncer.ini"
        self.log = self.dir / "pgbouncer.log"
        self.proc: subprocess.Popen[bytes] | None = None
        (self.dir / "users.txt").write_text('"postgres" ""\n')
        self.ini.write_text(
            "[databases]\n"
            f"* = host={SERVER[0]} port={SERVER[1]}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\n"
            f"unix_socket_dir = {self.dir}\n"
            "auth_type = trust\n"
            f"auth_file = {self.dir / 'users.txt'}\n"
            f"pool_mode = {mode}\n"
            # Few server connections for many clients: transactions of different clients share
            # them, which is what breaks session state.
            f"default_pool_size = {pool_size}\nmax_client_conn = 500\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.log}\n"
            f"pidfile = {self.dir / 'pgbouncer.pid'}\n"
        )
        for path in self.dir.iterdir():
            os.chmod(path, 0o666)

    def url(self, database: str, query: str = "") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}{query}"

    def start(self) -> None:
        as_user = ["-u", OS_USER] if os.geteuid() == 0 else []
        self.proc = subprocess.Popen(
            [BINARY, *as_user, str(self.ini)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"pgbouncer exited: {self._log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"pgbouncer did not listen on {self.port}: {self._log_tail()}")

    def stop(self) -> None:
        """SIGINT: PgBouncer's immediate shutdown, every client and server link cut at once."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def restart(self, down_for: float = 0.0) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def __enter__(self) -> PgBouncer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
