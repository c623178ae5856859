"""Which servers the `mysql://` backend runs on: MariaDB 10.6 or later, the one it is tested
on. MySQL is refused at connect: its statements use `INSERT … RETURNING` and `DELETE …
RETURNING`, which MySQL lacks (no MySQL server could be installed where claimq is tested)."""

from __future__ import annotations

import re

from claimq.errors import InvalidInput

MINIMUM = (10, 6)
# "10.11.6-MariaDB-0+deb12u1", "11.4.2-MariaDB", or with the "5.5.5-" prefix MariaDB servers
# before 11 sent to old clients: "5.5.5-10.6.12-MariaDB-log".
_VERSION = re.compile(r"^(?:5\.5\.5-)?(\d+)\.(\d+)(?:\.(\d+))?")


def check_server(version: str, where: str = "") -> tuple[int, int]:
    """The (major, minor) of a MariaDB server's version string (the handshake's, as
    `SELECT VERSION()` answers it); raises InvalidInput for MySQL, for MariaDB before 10.6,
    and for a string that names neither."""
    at = f" at {where}" if where else ""
    text = version.strip() if isinstance(version, str) else ""
    found = _VERSION.match(text)
    if "mariadb" not in text.lower() or found is None:
        raise InvalidInput(
            f"the server{at} is {'MySQL ' + text if found else repr(version)}, not MariaDB: "
            f"claimq's mysql:// backend needs MariaDB {MINIMUM[0]}.{MINIMUM[1]} or later (it "
            "uses INSERT … RETURNING, which MySQL lacks; MySQL is not supported)")
    major, minor = int(found.group(1)), int(found.group(2))
    if (major, minor) < MINIMUM:
        raise InvalidInput(
            f"the server{at} is MariaDB {major}.{minor} ({text}): claimq needs MariaDB "
            f"{MINIMUM[0]}.{MINIMUM[1]} or later (SKIP LOCKED, RETURNING, JSON_TABLE)")
    return major, minor
