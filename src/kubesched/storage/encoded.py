"""A store table that keeps its objects encoded: for kinds with many objects that are seldom
read (Events, one or more per scheduled pod), a third of their decoded size. Reads decode a
fresh object each time; the watch history keeps the decoded objects it was given."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

import msgspec

from kubesched.api.objects import Served

_encode = msgspec.msgpack.Encoder().encode


class EncodedTable(MutableMapping[tuple[str, str], Served]):
    """Objects of `cls` by (namespace, name), held as msgpack."""

    def __init__(self, cls: type[Served]) -> None:
        self._decode = msgspec.msgpack.Decoder(cls).decode
        self._rows: dict[tuple[str, str], bytes] = {}

    def __getitem__(self, key: tuple[str, str]) -> Served:
        return self._decode(self._rows[key])

    def __setitem__(self, key: tuple[str, str], obj: object) -> None:
        self._rows[key] = _encode(obj)

    def __delitem__(self, key: tuple[str, str]) -> None:
        del self._rows[key]

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
