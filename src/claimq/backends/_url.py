"""The one parser of PostgreSQL URLs: claimq's own options out, libpq's deadlines in.

`postgresql://user:password@host:port/db?schema=claimq&pool_size=10&pooler=transaction&…` —
`schema`, `pool_size` and `pooler` are claimq's; every other query parameter goes to libpq
unchanged. `pooler=transaction` says a pooler in transaction mode (PgBouncer's
`pool_mode = transaction`) stands between claimq and the server: no statement is prepared by
name, nothing relies on session state, and the worker polls instead of LISTENing.

Client-side deadlines (CLIENT_DEADLINES) are added to every connection claimq opens (the pool,
the worker's async connections, its listener) unless the URL sets that parameter itself, so a
database that stops answering is noticed within seconds rather than hanging a worker:

- `connect_timeout=5`: a connection attempt gives up after 5 s (a server that is down or a
  link that drops packets, rather than waiting for the kernel's minutes-long SYN retries);
- `keepalives=1`, `keepalives_idle=5`, `keepalives_interval=2`, `keepalives_count=3`: an idle
  connection (a listener, a pooled one) whose peer vanished without a reset is found dead
  after about 5 + 2 × 3 = 11 s;
- `tcp_user_timeout=10000` (ms): a connection with data sent but unacknowledged for 10 s (a
  statement sent into a link that lost its packets) fails at once rather than after the
  kernel's ~15 minutes of retransmissions.

A server that is merely slow still answers keepalives and acknowledges what it is sent, so none
of these cut a long statement short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlparse, urlunparse

from claimq.errors import InvalidInput

CLIENT_DEADLINES: dict[str, str] = {
    "connect_timeout": "5",
    "keepalives": "1",
    "keepalives_idle": "5",
    "keepalives_interval": "2",
    "keepalives_count": "3",
    "tcp_user_timeout": "10000",
}
DEFAULT_SCHEMA = "claimq"
DEFAULT_POOL_SIZE = 10
CLAIMQ_OPTIONS = ("schema", "pool_size", "pooler")
POOLERS = ("none", "session", "transaction")
_SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class PostgresURL:
    url: str  # as given
    schema: str
    pool_size: int
    conninfo: str  # for libpq: claimq's options removed, the deadlines added where unset
    database: str  # the database name the URL names ("" when libpq's default applies)
    pooler: str = "none"  # one of POOLERS: what stands between claimq and the server


def parse_postgres_url(url: str, *, pool_size: int | None = None) -> PostgresURL:
    """Checks claimq's options (InvalidInput when wrong) and builds the libpq URL."""
    try:
        parsed = urlparse(url)
        query = parse_qsl(parsed.query)
    except ValueError as exc:
        raise InvalidInput(f"invalid database URL: {exc}") from None
    if parsed.scheme.lower() not in ("postgresql", "postgres"):
        raise InvalidInput(f"not a PostgreSQL URL: {redact(url)!r}")
    options = dict(query)
    schema = options.pop("schema", DEFAULT_SCHEMA)
    if not _SCHEMA_RE.fullmatch(schema):
        raise InvalidInput(f"schema must be a lower-case SQL identifier, got {schema!r}")
    size = options.pop("pool_size", None)
    try:
        chosen = pool_size or int(size or DEFAULT_POOL_SIZE)
    except ValueError:
        chosen = 0
    if not 1 <= chosen <= 10_000:
        raise InvalidInput(f"pool_size must be a whole number from 1 to 10000, got {size!r}")
    pooler = options.pop("pooler", "none").lower()
    if pooler not in POOLERS:
        raise InvalidInput(f"pooler must be one of {', '.join(POOLERS)}, got {pooler!r}")
    libpq = {**CLIENT_DEADLINES, **options}  # the user's own settings win
    # quote, not quote_plus: libpq decodes %20 but leaves "+" as it is
    query_text = urlencode(libpq, quote_via=quote)
    conninfo = urlunparse(parsed._replace(scheme="postgresql", query=query_text))
    database = options.get("dbname") or parsed.path.lstrip("/")
    return PostgresURL(url, schema, chosen, conninfo, database, pooler)


def with_option(url: str, name: str, value: str) -> str:
    """`url` with query parameter `name` set to `value` (e.g. a fresh schema for a run)."""
    parsed = urlparse(url)
    options = dict(parse_qsl(parsed.query))
    options[name] = value
    return urlunparse(parsed._replace(query=urlencode(options, quote_via=quote)))


def redact(url: str) -> str:
    """`url` with its password (if any) replaced by ***, for messages and logs."""
    try:
        parsed = urlparse(url)
        if parsed.password:
            netloc = parsed.netloc.replace(f":{parsed.password}@", ":***@", 1)
            return urlunparse(parsed._replace(netloc=netloc))
    except ValueError:
        pass
    return url
