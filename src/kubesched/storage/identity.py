"""What a store stamps on the objects it creates: UIDs and generated names drawn from a seeded
generator (runs repeat), and timestamps to the second of its clock."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

from kubesched.clock import Clock

NAME_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_ATTEMPTS = 8  # the API server's tries at a free generated name
_UUID_CLEAR = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID_V4 = (0x4000 << 64) | (0x8000 << 48)


class Identities:
    """`seed` None draws from the system's randomness (a server that may restart over a new store
    must, lest two objects share a UID)."""

    def __init__(self, clock: Clock, seed: int | None) -> None:
        self._clock = clock
        self.rng = random.Random(seed)
        self._restored: set[str] = set()  # given, not drawn: a drawn one must not repeat them
        self._stamp: tuple[int, datetime] = (-1, datetime.fromtimestamp(0, UTC))

    def restored(self, uid: str) -> None:
        """Note a UID an object brought with it (from a snapshot), never to be drawn."""
        self._restored.add(uid)

    def uid(self) -> str:
        """A version-4 UUID, never one an object restored into the store has: a snapshot saved
        from a store of the same seed holds the very UIDs this store would draw first."""
        while True:
            h = f"{(self.rng.getrandbits(128) & _UUID_CLEAR) | _UUID_V4:032x}"
            uid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
            if uid not in self._restored:
                return uid

    def name(self, prefix: str, taken: Callable[[str], bool]) -> str:
        """`prefix` and a random suffix; a suffix already taken is drawn again, up to
        `GENERATE_NAME_ATTEMPTS` draws in all (the last one returned even if taken, for the
        create to fail with AlreadyExists)."""
        for _ in range(GENERATE_NAME_ATTEMPTS):
            name = prefix + "".join(self.rng.choice(NAME_SUFFIX_CHARS) for _ in range(5))
            if not taken(name):
                break
        return name

    def stamp(self, *, offset: int = 0) -> datetime:
        """The clock's second (plus `offset` seconds) as a timestamp."""
        second = int(self._clock.now()) + offset
        if offset == 0 and self._stamp[0] == second:
            return self._stamp[1]
        stamp = datetime.fromtimestamp(second, UTC)
        if offset == 0:
            self._stamp = (second, stamp)
        return stamp
