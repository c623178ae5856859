"""Retry policy: exponential backoff with full jitter and a cap."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from typing import Any

from claimq._limits import MAX_SECONDS
from claimq.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """delay(n) = min(cap, base * factor**(n-1)), then jittered down by up to `jitter` of itself."""

    base: float = 1.0
    factor: float = 2.0
    cap: float = 3600.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        for name in ("base", "factor", "cap", "jitter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidInput(f"RetryPolicy {name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise InvalidInput(f"RetryPolicy {name} must be finite, got {value!r}")
        if self.base < 0 or self.cap < 0 or self.factor < 1 or not 0 <= self.jitter <= 1:
            raise InvalidInput(
                "RetryPolicy needs base >= 0, cap >= 0, factor >= 1 and 0 <= jitter <= 1"
            )
        if self.base > MAX_SECONDS or self.cap > MAX_SECONDS:
            raise InvalidInput(
                f"RetryPolicy base and cap must be at most {MAX_SECONDS:.0f} seconds (100 years)"
            )

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        exponent = min(max(attempt - 1, 0), 64)  # bounded so factor**exponent cannot overflow
        raw = min(self.cap, self.base * self.factor**exponent)
        spread = (rng or random).random() * self.jitter
        return raw * (1.0 - spread)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetryPolicy:
        unknown = set(data) - {"base", "factor", "cap", "jitter"}
        if unknown:
            raise InvalidInput(f"unknown retry policy option(s): {sorted(unknown)}")
        try:
            values = {k: float(v) for k, v in data.items()}
        except (TypeError, ValueError):
            raise InvalidInput(f"retry policy values must be numbers, got {data!r}") from None
        return cls(**values)


DEFAULT_RETRY = RetryPolicy()
