"""`Resource`: amounts of cpu (milli), memory, ephemeral storage, pods and scalar resources."""

from __future__ import annotations

from collections.abc import Mapping

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


class Resource:
    """Resource amounts as the scheduler counts them: cpu in milli-CPU, the rest in units."""

    __slots__ = ("cpu", "ephemeral", "memory", "pods", "scalar")

    def __init__(self, cpu: int = 0, memory: int = 0, ephemeral: int = 0, pods: int = 0) -> None:
        self.cpu = cpu
        self.memory = memory
        self.ephemeral = ephemeral
        self.pods = pods
        self.scalar: dict[str, int] = {}

    @classmethod
    def from_amounts(cls, amounts: Mapping[str, int]) -> Resource:
        """From `api.resources`-style amounts (cpu already in milli)."""
        r = cls()
        for name, value in amounts.items():
            r.set(name, value)
        return r

    def set(self, name: str, value: int) -> None:
        if name == CPU:
            self.cpu = value
        elif name == MEMORY:
            self.memory = value
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral = value
        elif name == PODS:
            self.pods = value
        else:
            self.scalar[name] = value

    def get(self, name: str) -> int:
        if name == CPU:
            return self.cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral
        if name == PODS:
            return self.pods
        return self.scalar.get(name, 0)

    def add(self, other: Resource, sign: int = 1) -> None:
        self.cpu += sign * other.cpu
        self.memory += sign * other.memory
        self.ephemeral += sign * other.ephemeral
        for name, value in other.scalar.items():
            self.scalar[name] = self.scalar.get(name, 0) + sign * value

    def clone(self) -> Resource:
        r = Resource(self.cpu, self.memory, self.ephemeral, self.pods)
        r.scalar = dict(self.scalar)
        return r

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resource) and (
            self.cpu,
            self.memory,
            self.ephemeral,
            self.pods,
            self.scalar,
        ) == (other.cpu, other.memory, other.ephemeral, other.pods, other.scalar)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        extra = f", scalar={self.scalar}" if self.scalar else ""
        return f"Resource(cpu={self.cpu}, memory={self.memory}, ephemeral={self.ephemeral}, pods={self.pods}{extra})"
