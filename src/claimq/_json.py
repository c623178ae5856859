"""JSON decoding for rows read on the hot path: orjson when present (several times faster on
the small documents a claim returns), the standard library otherwise."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

loads: Callable[[str | bytes], Any]
try:
    import orjson

    loads = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps vendored use working
    loads = json.loads
