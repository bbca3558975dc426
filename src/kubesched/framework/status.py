"""`Status`: what a plugin says about a pod at an extension point.

Success is `None` throughout the framework (as a nil status is in upstream), so the common case
costs nothing; any other outcome is a `Status` with a code, reasons and the plugin that said it.
"""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    """Status codes, with upstream's values and names."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _NAMES[self]


_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
_REJECTIONS = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


class Status:
    """A non-success outcome. `reasons` join with ", " into the message; `plugin` is set by the
    framework when a plugin's status becomes the verdict."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin

    @classmethod
    def error(cls, message: str, *, plugin: str = "") -> Status:
        return cls(Code.ERROR, message, plugin=plugin)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in _REJECTIONS

    def with_plugin(self, plugin: str) -> Status:
        self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Status)
            and self.code == other.code
            and self.reasons == other.reasons
            and self.plugin == other.plugin
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code}, {self.reasons!r}{plugin})"


SKIP = Status(Code.SKIP)  # shared: plugins return it, nobody mutates it


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


class StatusError(Exception):
    """Raised by a plugin method that cannot return a status (Score) to report a failure."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status
