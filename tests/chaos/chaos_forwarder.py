"""A plain TCP forwarder: listens on one address (e.g. the host end of a NetNs link) and relays
every connection to a server elsewhere (e.g. PostgreSQL on loopback), byte for byte.

Why not a proxy that simply stops forwarding, to fake a database that stops answering: the
proxy's own kernel still acknowledges every byte the client sends and answers its keepalive
probes, so TCP-level deadlines (keepalives, tcp_user_timeout) can never fire; only a link that
loses packets (NetNs.partition) makes a connection truly half-open. This forwarder only
bridges the namespace's link to a server that listens on loopback.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class Forwarder:
    def __init__(self, listen_host: str, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((listen_host, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="forwarder-accept").start()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            _shut(s)

    def _accept(self) -> None:
        while not self._closed.is_set():
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
            with self._lock:
                self.connections += 1
                self._socks += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _shut(src)
        _shut(dst)


def _shut(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
