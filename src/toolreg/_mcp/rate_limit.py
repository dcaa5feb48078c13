"""A token bucket: at most ``rate`` events a second, in bursts of at most ``burst``.

What keeps a flood (log messages, progress reports from a server or a pack
that is not trusted) from reaching the host at the rate it is sent.
"""

from __future__ import annotations

import time


class TokenBucket:
    """``take()`` says whether one more event may pass now; not thread-safe (hold a lock)."""

    __slots__ = ("rate", "burst", "tokens", "stamp")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> bool:
        self._refill()
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def wait_time(self) -> float:
        """Seconds until ``take`` would pass (0.0 if it would now)."""
        self._refill()
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate
