"""A TCP proxy in front of PostgreSQL (MySQLCuttingProxy: MariaDB) that loses responses on
purpose.

Armed with `arm(n)`, it watches what clients send for a marker (a fragment only a completion
sends). On a connection that sent it, it forwards nothing more to the client, waits until
the server reports the transaction over (ReadyForQuery with status idle: the commit is done),
then cuts both sides. The client sent its completion, the server committed it, the response never
arrived: exactly "the connection cut right after sending it".

Clients must connect with sslmode=disable and gssencmode=disable, so that every server message
is a plain typed message (type byte, length) the proxy can follow.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable


class CuttingProxy:
    def __init__(self, target_port: int, marker: bytes, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.marker = marker
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.armed = 0
        self.cuts = 0
        self.connections = 0
        self.closed = threading.Event()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="proxy-accept").start()

    def arm(self, n: int) -> None:
        with self.lock:
            self.armed += n

    def _take(self) -> bool:
        with self.lock:
            if self.armed > 0:
                self.armed -= 1
                return True
            return False

    def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            socks = list(self._socks)
        for s in socks:
            _shut(s)

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                _shut(client)
                continue
            with self.lock:
                self.connections += 1
                self._socks += [client, server]
            doomed = threading.Event()
            threading.Thread(target=self._upstream, args=(client, server, doomed),
                             daemon=True).start()
            threading.Thread(target=self._downstream, args=(client, server, doomed),
                             daemon=True).start()

    def _upstream(self, client: socket.socket, server: socket.socket,
                  doomed: threading.Event) -> None:
        scan = self._scanner(client, doomed)
        try:
            while data := client.recv(65536):
                for chunk in scan(data):
                    server.sendall(chunk)
        except OSError:
            pass
        finally:
            if not doomed.is_set():
                _shut(client)
                _shut(server)

    def _scanner(self, client: socket.socket, doomed: threading.Event
                 ) -> Callable[[bytes], list[bytes]]:
        """What reads the client's bytes on their way to the server: it returns what to forward
        (here, all of it) after setting `doomed` when they hold the marker."""
        tail = b""

        def scan(data: bytes) -> list[bytes]:
            nonlocal tail
            window = tail + data
            if not doomed.is_set() and self.marker in window and self._take():
                doomed.set()  # before the server can see it, so no response slips through
            tail = window[-len(self.marker):]
            return [data]

        return scan

    def _downstream(self, client: socket.socket, server: socket.socket,
                    doomed: threading.Event) -> None:
        buf = b""
        out: list[bytes] = []  # held back while doomed, up to the next ReadyForQuery
        try:
            while data := server.recv(65536):
                buf += data
                while len(buf) >= 5:
                    kind = buf[:1]
                    (length,) = struct.unpack("!I", buf[1:5])
                    if len(buf) < 1 + length:
                        break
                    message, buf = buf[: 1 + length], buf[1 + length:]
                    out.append(message)
                    if doomed.is_set() and kind == b"Z":
                        if message[5:6] == b"I":
                            # The transaction that carried the marker is committed: cut, and
                            # the client never hears the answer to its last round trip.
                            with self.lock:
                                self.cuts += 1
                            _shut(client)
                            _shut(server)
                            return
                        client.sendall(b"".join(out))  # still inside the transaction
                        out = []
                if out and not doomed.is_set():
                    client.sendall(b"".join(out))
                    out = []
        except OSError:
            pass
        finally:
            _shut(client)
            _shut(server)


def _shut(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()


class MySQLCuttingProxy(CuttingProxy):
    """The same cut in front of MariaDB/MySQL, following the client protocol's packets (3-byte
    length, sequence byte, payload; no TLS, no compression: PyMySQL's defaults).

    A connection whose client sent a COM_QUERY holding the marker (a fragment only a completion
    sends) is doomed; when that client then sends `COMMIT`, the proxy forwards it, holds back
    whatever the server answers, and once the answer is an OK packet outside a transaction (the
    commit is done) cuts both sides. PyMySQL waits for each answer before its next command, so
    every byte the server sends after the COMMIT went through is the COMMIT's answer."""

    COM_QUERY = 0x03
    IN_TRANS = 0x0001  # SERVER_STATUS_IN_TRANS in an OK packet's status flags

    def __init__(self, target_port: int, marker: bytes, target_host: str = "127.0.0.1") -> None:
        self._commits: dict[int, threading.Event] = {}  # per client socket: COMMIT sent
        super().__init__(target_port, marker, target_host)

    def _scanner(self, client: socket.socket, doomed: threading.Event
                 ) -> Callable[[bytes], list[bytes]]:
        buf = b""
        committing = self._commit_sent(client)

        def scan(data: bytes) -> list[bytes]:
            """Whole packets only: each is looked at before it is forwarded."""
            nonlocal buf
            buf += data
            packets = []
            while len(buf) >= 4 and len(buf) >= 4 + (length := int.from_bytes(buf[:3], "little")):
                packet, buf = buf[: 4 + length], buf[4 + length:]
                payload = packet[4:]
                if payload[:1] == bytes([self.COM_QUERY]):
                    if not doomed.is_set() and self.marker in payload and self._take():
                        doomed.set()
                    elif doomed.is_set() and payload[1:].strip().upper() == b"COMMIT":
                        # Set before the server can see the COMMIT: every answer from now on
                        # is held back.
                        committing.set()
                packets.append(packet)
            return packets

        return scan

    def _commit_sent(self, client: socket.socket) -> threading.Event:
        with self.lock:
            return self._commits.setdefault(id(client), threading.Event())

    def _downstream(self, client: socket.socket, server: socket.socket,
                    doomed: threading.Event) -> None:
        committing = self._commit_sent(client)
        held = b""
        try:
            while data := server.recv(65536):
                if not committing.is_set():
                    client.sendall(data)
                    continue
                held += data
                if len(held) < 4 or len(held) < 4 + int.from_bytes(held[:3], "little"):
                    continue
                payload = held[4: 4 + int.from_bytes(held[:3], "little")]
                if payload[:1] == b"\x00" and not self._ok_status(payload) & self.IN_TRANS:
                    with self.lock:
                        self.cuts += 1
                return  # the COMMIT's answer (OK or an error) never reaches the client
        except OSError:
            pass
        finally:
            _shut(client)
            _shut(server)

    @staticmethod
    def _ok_status(payload: bytes) -> int:
        """The status flags of an OK packet: after its header byte, affected rows and last
        insert id (length-encoded integers)."""
        pos = 1
        for _ in range(2):
            first = payload[pos]
            pos += {0xFC: 3, 0xFD: 4, 0xFE: 9}.get(first, 1)
        return int.from_bytes(payload[pos: pos + 2], "little")
