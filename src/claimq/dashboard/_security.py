"""Who may use the dashboard: tokens (read, admin), the loopback-only anonymous mode, and the
checks that keep other sites from acting through an operator's browser."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass
from typing import Literal

from starlette.requests import HTTPConnection, Request

from claimq.errors import InvalidInput

Role = Literal["read", "admin"]
COOKIE = "claimq_dashboard"
CSRF_HEADER = "x-claimq-csrf"
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "[::1]"}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking: `role` (what they may do) and `name` (what the audit table records)."""

    role: Role
    name: str
    secret: str  # what the CSRF token is derived from (the token, or "anonymous")

    @property
    def admin(self) -> bool:
        return self.role == "admin"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host part of a Host header (`[::1]:8000` -> `[::1]`, `a:80` -> `a`)."""
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Guard:
    """Decides, per request, who the caller is (None: refused)."""

    def __init__(self, read_token: str | None, admin_token: str | None,
                 allow_anonymous: bool) -> None:
        for value, name in ((read_token, "read_token"), (admin_token, "admin_token")):
            if value is not None and (not isinstance(value, str) or len(value) < 16):
                raise InvalidInput(f"{name} must be a string of at least 16 characters")
        if read_token is not None and read_token == admin_token:
            raise InvalidInput("read_token and admin_token must differ")
        if not (read_token or admin_token or allow_anonymous):
            raise InvalidInput("the dashboard needs a read or admin token, or allow_anonymous=True "
                             "(loopback only)")
        self._tokens: list[tuple[str, Role]] = []
        if admin_token:
            self._tokens.append((admin_token, "admin"))
        if read_token:
            self._tokens.append((read_token, "read"))
        self.allow_anonymous = allow_anonymous
        self._key = secrets.token_bytes(32)

    def token_caller(self, token: str | None) -> Caller | None:
        if not token:
            return None
        for known, role in self._tokens:
            if hmac.compare_digest(token.encode(), known.encode()):
                fingerprint = hashlib.sha256(known.encode()).hexdigest()[:8]
                return Caller(role, f"{role}-token:{fingerprint}", known)
        return None

    def session(self, caller: Caller) -> str:
        """The cookie value of a signed-in caller: derived from the token with this process's
        key, so the browser never stores the token itself and a restart ends every session."""
        return hmac.new(self._key, b"session:" + caller.secret.encode(),
                        hashlib.sha256).hexdigest()

    def session_caller(self, cookie: str) -> Caller | None:
        for known, _ in self._tokens:
            caller = self.token_caller(known)
            if caller is not None and hmac.compare_digest(
                    cookie.encode(), self.session(caller).encode()):
                return caller
        return None

    def caller(self, conn: HTTPConnection) -> Caller | None:
        auth = conn.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return self.token_caller(auth[7:].strip())  # a wrong token is refused, not anonymous
        cookie = conn.cookies.get(COOKIE)
        if cookie:
            return self.session_caller(cookie)
        if self.allow_anonymous and self._local(conn):
            return Caller("admin", "anonymous", "anonymous")
        return None

    @staticmethod
    def _local(conn: HTTPConnection) -> bool:
        """Anonymous callers only on a server bound to loopback, from loopback, naming a loopback
        host (a page of another site whose name resolves to 127.0.0.1 sends its own Host)."""
        server = conn.scope.get("server")
        client = conn.scope.get("client")
        return (
            server is not None and is_loopback(str(server[0]))
            and client is not None and is_loopback(str(client[0]))
            and is_loopback(_host_name(conn.headers.get("host", "")))
        )

    def csrf_token(self, caller: Caller) -> str:
        return hmac.new(self._key, caller.secret.encode(), hashlib.sha256).hexdigest()

    def same_origin(self, request: Request, caller: Caller) -> str | None:
        """Why a state-changing request is refused as possibly cross-site (None: it is not).
        Every action needs the CSRF header (a custom header: a page of another site cannot
        send it without a CORS preflight, which this app never grants), and a browser's
        Sec-Fetch-Site and Origin, when sent, must name this site."""
        sent = request.headers.get(CSRF_HEADER, "")
        if not hmac.compare_digest(sent.encode(), self.csrf_token(caller).encode()):
            return "missing or wrong CSRF token"
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return f"cross-site request (Sec-Fetch-Site: {site})"
        origin = request.headers.get("origin")
        if origin is not None:
            host = request.headers.get("host", "")
            if origin.split("://", 1)[-1] != host:
                return "cross-site request (Origin does not match Host)"
        return None
