"""What every drill tells the same way: steps from the trace (told by `trace.narrate`) with
kubesched's and upstream's code sites, the events `kubectl describe` would show, and a pod's attempt
explained."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, dataclass

from lightkube.resources import core_v1
from rich.console import Console
from rich.markup import escape

from kubesched.api.objects import present
from kubesched.console.attempts import print_attempt
from kubesched.storage import MemoryStore
from kubesched.trace.narrate import Step
from kubesched.whatif.documents import listed, mapping, string


def print_steps(console: Console, told: Iterable[Step]) -> None:
    for step in told:
        sites = " · ".join([step.site, *step.upstream])
        console.print(
            f"[dim]t+{step.time:7.3f}s[/dim] [cyan]{escape(step.pod):<16}[/cyan] {escape(step.text)}  "
            f"[dim]{escape(sites)}[/dim]",
            soft_wrap=True,
            highlight=False,
        )


@dataclass(frozen=True)
class EventSeen:
    """An event as `kubectl describe pod` lists it."""

    pod: str
    type: str
    reason: str
    message: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def _events(store: MemoryStore) -> list[core_v1.Event]:
    """Every stored event, oldest first."""
    return sorted(store.list(core_v1.Event).items, key=lambda e: int(e.metadata.resourceVersion or 0))


def events_of(store: MemoryStore, pods: Collection[str]) -> list[EventSeen]:
    """The events recorded on the named pods (namespace `default`), oldest first."""
    return [
        EventSeen(present(e.involvedObject.name, "an event's object"), e.type or "", e.reason or "", e.message or "")
        for e in _events(store)
        if e.involvedObject.name in pods
    ]


def failed_scheduling(store: MemoryStore) -> dict[str, str]:
    """Each pod's (namespace `default`) FailedScheduling message, the latest where there are several."""
    return {
        present(e.involvedObject.name, "an event's object"): e.message or ""
        for e in _events(store)
        if e.reason == "FailedScheduling"
    }


def print_events(console: Console, events: Iterable[EventSeen]) -> None:
    console.print("Events, as kubectl describe shows them:")
    for e in events:
        console.print(f"  {e.pod:<10} {e.type:<8} {e.reason:<17} {escape(e.message)}", soft_wrap=True, highlight=False)


def print_explained(console: Console, document: Mapping[str, object], *, last: int = 2) -> None:
    """What `kubesched explain --attempt N` prints of the pod's `last` attempts (`document` is
    `explain_pod`'s)."""
    attempts = attempts_of(document)
    pod = string_of(document["pod"], "the explained pod")
    if not attempts:
        console.print(f"{pod}: no attempt recorded")
        return
    for attempt in attempts[-last:]:
        console.print(f"$ kubesched explain {pod} --attempt {attempt['attempt']}", style="bold", highlight=False)
        print_attempt(console, pod, attempt, kept=len(attempts))


# Reading `explain_pod`'s document: each value narrowed to what the drills and labs read of it
# (TypeError, naming it, for any other).

mapping_of, list_of, string_of = mapping, listed, string  # whatif's readers of decoded documents


def attempts_of(document: Mapping[str, object]) -> list[dict[str, object]]:
    """The document's attempts, oldest first."""
    return [mapping_of(a, "an attempt") for a in list_of(document["attempts"], "the attempts")]


def strings_of(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{what} is not a list of strings: {value!r}")
    return value


def int_of(value: object, what: str) -> int:
    if not isinstance(value, int):
        raise TypeError(f"{what} is not an integer: {value!r}")
    return value


def print_citations(console: Console, citations: dict[str, str]) -> None:
    """What happened, and where kube-scheduler v1.36.2 does it (`trace.upstream.SITES`)."""
    console.print("\n[bold]Where kube-scheduler v1.36.2 does each of these[/bold]")
    for what, where in citations.items():
        console.print(f"  {escape(what)}: {where}", highlight=False)
