"""The lab book: the curriculum's 37 labs by id (`5.1.1` … `5.6.5`), with the seed's titles, what
each needs, and — for those kubesched runs as a lab — the function that performs it and checks its
claim. The drills and the capstone keep their own commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from kubesched.lab import (
    archaeology,
    artifact,
    cycles,
    distributions,
    drills,
    floor,
    gates,
    insufficient,
    late_failure,
    leases,
    measured,
    one_post,
    owned,
    plugin_set,
    points,
    preemption,
    profiles,
    queue_moves,
    refusals,
    revert,
    shared_state,
    stale_cache,
    state_machine,
    tour,
    unprivileged,
    victim_deletion,
)
from kubesched.lab.references import DOCUMENTS, UPSTREAM
from kubesched.lab.result import LabResult
from kubesched.trace.documents import document
from kubesched.trace.upstream import cite

MEMORY = "memory cluster, virtual time"
LIVE = "a live cluster (cluster up)"
LIVE_RBAC = "a live cluster deciding by RBAC (cluster up --authorization rbac)"
EITHER = "memory cluster, virtual time; or a live cluster (--kubeconfig)"
MODULES = {
    "5.1": "The framework as a table of contents",
    "5.2": "Build artifact 1: the from-scratch scheduler",
    "5.3": "The real scheduling cycle",
    "5.4": "The queue",
    "5.5": "Preemption, and build artifact 2",
    "5.6": "Scoring and preemption at scale",
}


class Listed(TypedDict):
    """A lab as `kubesched lab list --output json` lists it."""

    id: str
    title: str
    module: str
    needs: str
    runnable: bool
    command: str
    upstream: list[str]
    documents: list[dict[str, str]]


@dataclass(frozen=True)
class Lab:
    id: str
    title: str
    needs: str
    run: Callable[..., LabResult] | None = None  # performs the lab and checks its claim
    command: str = ""  # the command that runs it, for a drill or the capstone

    @property
    def module(self) -> str:
        return self.id.rsplit(".", 1)[0]

    @property
    def live(self) -> bool:
        """Whether it runs against a live cluster (`--kubeconfig`) rather than the memory one."""
        return self.needs in (LIVE, LIVE_RBAC)

    @property
    def takes_cluster(self) -> bool:
        """Whether it runs against a live cluster when given `--kubeconfig` (always, when `live`)."""
        return self.live or self.needs == EITHER

    @property
    def runnable(self) -> bool:
        return self.run is not None

    def to_json(self) -> Listed:
        return {
            "id": self.id,
            "title": self.title,
            "module": f"{self.module} {MODULES[self.module]}",
            "needs": self.needs,
            "runnable": self.runnable,
            "command": self.command or (f"kubesched lab run {self.id}" + _kubeconfig(self) if self.runnable else ""),
            "upstream": [cite(s) for s in UPSTREAM[self.id]],
            "documents": [{"cite": document(k).cite, "url": document(k).url} for k in DOCUMENTS[self.id]],
        }


def _kubeconfig(lab: Lab) -> str:
    return " --kubeconfig K" if lab.live else " [--kubeconfig K]" if lab.takes_cluster else ""


BOOK: tuple[Lab, ...] = (
    Lab("5.1.1", tour.TOUR_TITLE, MEMORY, tour.run_tour),
    Lab("5.1.2", points.TITLE, MEMORY, points.run),
    Lab("5.1.3", cycles.CYCLES_TITLE, MEMORY, cycles.run_cycles),
    Lab("5.1.4", plugin_set.TITLE, MEMORY, plugin_set.run),
    Lab("5.1.5", profiles.FILTER_TITLE, MEMORY, profiles.run_filter),
    Lab("5.1.6", refusals.TITLE, MEMORY, refusals.run),
    Lab("5.2.1", stale_cache.MEMORY_BURST.title, EITHER, stale_cache.run_memory),
    Lab("5.2.2", one_post.TITLE, LIVE, one_post.run),
    Lab("5.2.3", artifact.TITLE, MEMORY, artifact.run),
    Lab("5.2.4", drills.RACE_TITLE, MEMORY, drills.run_race, command="kubesched drill c4"),
    Lab("5.2.5", stale_cache.CPU_BURST.title, EITHER, stale_cache.run),
    Lab("5.3.1", tour.DETAIL_TITLE, MEMORY, tour.run_detail),
    Lab("5.3.2", cycles.WHILE_TITLE, MEMORY, cycles.run_while_bound),
    Lab("5.3.3", shared_state.TITLE, MEMORY, shared_state.run),
    Lab("5.3.4", insufficient.TITLE, MEMORY, insufficient.run),
    Lab("5.3.5", "The knob that cannot move here", MEMORY, floor.run_below_floor),
    Lab("5.3.6", "Above the floor at last: a hundred nodes that do not exist", MEMORY, floor.run_above_floor),
    Lab("5.4.1", archaeology.TITLE, MEMORY, archaeology.run),
    Lab("5.4.2", state_machine.TITLE, MEMORY, state_machine.run),
    Lab("5.4.3", queue_moves.PATH_TITLE, MEMORY, queue_moves.run_path),
    Lab("5.4.4", queue_moves.BACKOFF_TITLE, MEMORY, queue_moves.run_backoff),
    Lab("5.4.5", drills.BACKLOG_TITLE, MEMORY, drills.run_backlog, command="kubesched drill c1"),
    Lab("5.4.6", queue_moves.RETRY_TITLE, MEMORY, queue_moves.run_retries),
    Lab("5.4.7", gates.TITLE, MEMORY, gates.run),
    Lab("5.5.1", preemption.CLAIM_TITLE, MEMORY, preemption.run_claim),
    Lab("5.5.2", preemption.BUDGET_TITLE, MEMORY, preemption.run_budget),
    Lab("5.5.3", victim_deletion.TITLE, MEMORY, victim_deletion.run),
    Lab("5.5.4", owned.TITLE, EITHER, owned.run),
    Lab("5.5.5", late_failure.TITLE, MEMORY, late_failure.run),
    Lab("5.5.6", unprivileged.TITLE, LIVE_RBAC, unprivileged.run),
    Lab("5.5.7", profiles.PROFILES_TITLE, MEMORY, profiles.run_profiles),
    Lab("5.5.8", leases.TITLE, LIVE, leases.run),
    Lab("5.6.1", revert.TITLE, EITHER, revert.run),
    Lab("5.6.2", distributions.TITLE, MEMORY, distributions.run),
    Lab("5.6.3", drills.VICTIM_TITLE, MEMORY, drills.run_victim, command="kubesched drill c2"),
    Lab("5.6.4", drills.SPREAD_TITLE, MEMORY, drills.run_spread, command="kubesched drill c3"),
    Lab("5.6.5", measured.TITLE, MEMORY, measured.run, command="kubesched capstone"),
)
LABS = {lab.id: lab for lab in BOOK}
