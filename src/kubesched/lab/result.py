"""What a lab reports: the steps it performed, each with kubesched's and upstream's code sites, and
its check — the claim stated, the evidence measured, and whether the claim held."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from kubesched.trace.narrate import Step


def site_of(fn: Callable[..., object]) -> str:
    """kubesched's `module:line` of a function, as the trace cites its own code."""
    return f"{fn.__module__}:{fn.__code__.co_firstlineno}"


@dataclass(frozen=True)
class Check:
    claim: str
    evidence: dict[str, object]
    passed: bool


@dataclass(frozen=True)
class LabResult:
    id: str
    title: str
    steps: list[Step] = field(default_factory=list)
    check: Check | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "steps": [asdict(s) for s in self.steps],
            "check": asdict(self.check) if self.check is not None else None,
        }

    def to_markdown(self) -> str:
        lines = [f"# {self.id} — {self.title}", ""]
        for s in self.steps:
            sites = " · ".join(x for x in (s.site, *s.upstream) if x)
            lines.append(f"- t+{s.time:g}s {s.text}" + (f" (`{sites}`)" if sites else ""))
        if self.check is not None:
            verdict = "PASS" if self.check.passed else "FAIL"
            lines += ["", f"**Check ({verdict}):** {self.check.claim}", ""]
            lines += [f"- {k}: `{v}`" for k, v in self.check.evidence.items()]
        return "\n".join(lines) + "\n"
