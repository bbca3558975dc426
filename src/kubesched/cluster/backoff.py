"""Jittered exponential backoff, as client-go's wait.Backoff with jitter 1.0."""

from __future__ import annotations

import random


class Backoff:
    """Exponential delays from `initial` up to `cap`, each stretched by a random [1, 2) factor
    (client-go's jitter 1.0), so that clients cut off together do not come back together."""

    def __init__(self, initial: float, cap: float, rng: random.Random) -> None:
        self.initial = initial
        self.cap = cap
        self._rng = rng
        self._failures = 0

    def next(self) -> float:
        delay = min(self.cap, self.initial * 2.0**self._failures)
        self._failures += 1
        return delay * (1.0 + self._rng.random())

    def reset(self) -> None:
        self._failures = 0
