"""A TCP forwarder in front of PostgreSQL that can stop answering without closing anything.

    proxy = BlackholeProxy(5432)              # listens on 127.0.0.1 (or `listen_host`)
    proxy.blackhole()   # every open connection goes silent for good; new ones are silent too
    proxy.resume()      # connections opened from now on forward again

While blackholed, bytes sent on a silenced connection are read and dropped, nothing is ever
sent back, and no side closes: the client's request is "sent", its answer never comes, and
there is no reset to tell it. A silenced connection stays silent after resume() (the network
state behind it is gone), so a client recovers only by giving up on it and connecting anew.

The proxy's own kernel still acknowledges TCP segments and keepalive probes: what this models is
a peer that stopped answering (a hung server or middlebox), which TCP keepalives cannot see; a
client notices only through its own deadline on each call. For lost packets (keepalives fail
too) run the client in a network namespace (chaos_netns) with the proxy listening on the host
end of the link, and take the link down.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field


@dataclass(eq=False)
class _Pair:
    client: socket.socket
    server: socket.socket | None
    silent: bool
    done: threading.Event = field(default_factory=threading.Event)


class BlackholeProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1",
                 listen_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((listen_host, 0))
        self.listener.listen(128)
        self.host, self.port = self.listener.getsockname()[:2]
        self.lock = threading.Lock()
        self.silent = False
        self.connections = 0
        self.silenced = 0
        self.closed = threading.Event()
        self._pairs: list[_Pair] = []
        threading.Thread(target=self._accept, daemon=True, name="blackhole-accept").start()

    def blackhole(self) -> None:
        """From now on nothing is answered on any connection open now or opened until resume()."""
        with self.lock:
            self.silent = True
            for p in self._pairs:
                if not p.silent:
                    p.silent = True
                    self.silenced += 1

    def resume(self) -> None:
        """Connections opened from now on forward normally (the silenced ones stay silent)."""
        with self.lock:
            self.silent = False

    def close(self) -> None:
        self.closed.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            pairs = list(self._pairs)
        for p in pairs:
            _shut(p.client)
            if p.server is not None:
                _shut(p.server)

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                silent = self.silent
            server = None
            if not silent:
                try:
                    server = socket.create_connection(self.target, timeout=5)
                    server.settimeout(None)
                except OSError:
                    _shut(client)
                    continue
            pair = _Pair(client, server, silent)
            with self.lock:
                self._pairs.append(pair)
                if silent:
                    self.silenced += 1
            threading.Thread(target=self._pump, args=(pair, True), daemon=True).start()
            if server is not None:
                threading.Thread(target=self._pump, args=(pair, False), daemon=True).start()

    def _pump(self, pair: _Pair, upstream: bool) -> None:
        """Copies one direction; once the pair is silent, reads and drops (never closes)."""
        src = pair.client if upstream else pair.server
        dst = pair.server if upstream else pair.client
        assert src is not None
        try:
            while data := src.recv(65536):
                if pair.silent or dst is None:
                    continue  # dropped: the sender never hears back, and nothing is closed
                dst.sendall(data)
        except OSError:
            pass
        finally:
            # A side that really closed (the client gave up, or the server ended) ends the
            # forwarding of a live pair; a silent pair stays as it is, open and mute.
            if not pair.silent and not pair.done.is_set():
                pair.done.set()
                _shut(pair.client)
                if pair.server is not None:
                    _shut(pair.server)


def _shut(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
