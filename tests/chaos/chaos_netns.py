"""A network namespace joined to the host by a veth pair on a private /30, for partitions.

    with NetNs() as net:                 # needs root and iproute2 (`ip netns`)
        net.host_ip, net.ns_ip           # 10.213.N.1 (host side), 10.213.N.2 (inside)
        WorkerProcess(..., prefix=net.prefix)   # runs a command inside the namespace
        net.partition(); net.heal()      # host end of the link down / up: packets are lost

Only this pair's own addresses are ever used; everything is deleted on exit.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import uuid


def unavailable_reason() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"`ip netns` does not work here: {probe.stderr.strip()}"
    return None


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {result.stderr.strip()}")


def _used_subnets() -> set[int]:
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True,
                         check=False).stdout
    return {int(part.split(".")[2]) for part in out.split() if part.startswith("10.213.")}


# Subnets this process has handed out: several NetNs may be made before any is entered (and
# only an entered one shows in `ip addr`), and two on one subnet route to one of them only.
_taken: set[int] = set()


class NetNs:
    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.name = f"cq{tag}"
        self.host_if = f"cqh{tag}"
        self.ns_if = f"cqn{tag}"
        free = sorted(set(range(1, 255)) - _used_subnets() - _taken)
        n = random.choice(free)
        _taken.add(n)
        self.subnet = n
        self.host_ip = f"10.213.{n}.1"
        self.ns_ip = f"10.213.{n}.2"
        self.prefix = ["ip", "netns", "exec", self.name]

    def __enter__(self) -> NetNs:
        try:
            _ip("netns", "add", self.name)
            _ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
            _ip("link", "set", self.ns_if, "netns", self.name)
            _ip("addr", "add", f"{self.host_ip}/30", "dev", self.host_if)
            _ip("link", "set", self.host_if, "up")
            _ip("netns", "exec", self.name, "ip", "addr", "add", f"{self.ns_ip}/30",
                "dev", self.ns_if)
            _ip("netns", "exec", self.name, "ip", "link", "set", self.ns_if, "up")
            _ip("netns", "exec", self.name, "ip", "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise
        return self

    def partition(self) -> None:
        """Take the host end of the link down: from now on every packet is lost."""
        _ip("link", "set", self.host_if, "down")

    def heal(self) -> None:
        _ip("link", "set", self.host_if, "up")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):
            _ip("link", "del", self.host_if)  # takes its peer with it
        with contextlib.suppress(RuntimeError):
            _ip("netns", "del", self.name)
        _taken.discard(self.subnet)

    def __exit__(self, *exc: object) -> None:
        self.close()
