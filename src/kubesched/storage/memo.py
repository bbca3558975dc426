"""Values made from objects, remembered by the object's identity: for objects that are never
changed in place (the store's), so what was made from one stays true of it."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """`make()`'s value for an object (and an extra key), made once. An entry holds its object, so
    an id seen again is the same object; the memo is emptied when it holds `size` entries."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: dict[tuple[int, Hashable], tuple[object, V]] = {}

    def get(self, obj: object, key: Hashable, make: Callable[[], V]) -> V:
        slot = (id(obj), key)
        found = self._entries.get(slot)
        if found is not None and found[0] is obj:
            return found[1]
        value = make()
        if len(self._entries) >= self._size:
            self._entries.clear()
        self._entries[slot] = (obj, value)
        return value
