"""A TCP proxy in front of PostgreSQL that loses responses on purpose.

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
        tail = b""
        try:
            while data := client.recv(65536):
                window = tail + data
                if not doomed.is_set() and self.marker in window and self._take():
                    doomed.set()  # before the server can see it, so no response slips through
                tail = window[-len(self.marker):]
                server.sendall(data)
        except OSError:
            pass
        finally:
            if not doomed.is_set():
                _shut(client)
                _shut(server)

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
