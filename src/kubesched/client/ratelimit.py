"""Client-side rate limiting as client-go's token bucket (`flowcontrol.NewTokenBucketRateLimiter`)."""

from __future__ import annotations

import asyncio


class TokenBucket:
    """`qps` tokens a second, at most `burst` saved; the bucket starts full. Callers reserve a
    token in arrival order and sleep until it is due, as `rate.Limiter.Wait` does. Time is the
    running loop's, so the bucket runs on virtual time as well."""

    def __init__(self, qps: float, burst: int) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1 (got {qps}, {burst})")
        self.qps = qps
        self.burst = burst
        self._tokens = float(burst)
        self._last: float | None = None

    async def wait(self) -> None:
        """Take one token, sleeping until it is available."""
        now = asyncio.get_running_loop().time()
        if self._last is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return
        try:
            await asyncio.sleep(-self._tokens / self.qps)
        except asyncio.CancelledError:
            self._tokens += 1.0  # the reservation is given back
            raise
