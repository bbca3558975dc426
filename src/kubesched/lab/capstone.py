"""The capstone (`kubesched capstone`): "a measurement and a story". Part one measures an out-of-tree plugin's
scheduler profile against the default one under contention (`kubesched compare`, its numbers and
its picture); part two narrates one preemption from the preemptor's entry to unschedulablePods to
its binding. Every claim cites kube-scheduler v1.36.2 through `trace.upstream.SITES`, and the whole
can be written as Markdown to hand in."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kubesched.config import SchedulerConfig
from kubesched.console import options
from kubesched.console.reports import print_reports
from kubesched.framework.registry import Registry
from kubesched.lab.drill.c2 import PreemptionStory, run_c2
from kubesched.lab.drill.story import list_of, mapping_of, print_citations, print_steps, strings_of
from kubesched.scheduler.describe import describe
from kubesched.trace import SITES, cite, extension_point
from kubesched.trace.narrate import Step
from kubesched.trace.upstream import symbol_of
from kubesched.workloads.compare import Report, compare, load_workload, summary

PACKAGE = "kubesched_scheduler_plugins"  # the out-of-tree package measured by default
DEFAULT_WORKLOAD = "workloads/gang-contention.yaml"
DEFAULT_CONFIG = "manifests/scheduler-config.yaml"
IN_TREE = "in-tree"


@dataclass(frozen=True)
class Citation:
    """A claim the report makes and the kube-scheduler v1.36.2 site that backs it."""

    claim: str
    site: str


@dataclass
class OutOfTree:
    """A plugin the measured profile enables that does not ship with kubesched."""

    name: str
    source: str
    points: list[str]


@dataclass
class Moment:
    """One of the moments the story must show, with when it happened (seconds after the
    preemptor arrived) and the step that shows it."""

    what: str
    time: float
    text: str
    upstream: tuple[str, ...] = ()


@dataclass
class Capstone:
    workload: str
    description: str
    reports: list[Report]
    plugins: list[OutOfTree]
    findings: list[str]  # what the measurement shows, in sentences
    story: PreemptionStory
    moments: list[Moment]
    why: list[str]  # why this node and these victims
    citations: list[Citation]

    def to_json(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "description": self.description,
            "configs": [r.to_json() for r in self.reports],
            "plugins": [asdict(p) for p in self.plugins],
            "findings": self.findings,
            "preemption": self.story.to_json(),
            "moments": [asdict(m) for m in self.moments],
            "why": self.why,
            "citations": [asdict(c) for c in self.citations],
        }


def default_inputs() -> tuple[Path, Path]:
    """The out-of-tree package's contention workload and its second scheduler's configuration."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise options.UsageError(
            f"the capstone measures an out-of-tree plugin package: install one (pip install "
            f"contrib/scheduler-plugins) or give --workload and --config (package {PACKAGE} not found)"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    return root / DEFAULT_WORKLOAD, root / DEFAULT_CONFIG


def _out_of_tree(registry: Registry, config: SchedulerConfig) -> list[OutOfTree]:
    out = []
    for info in describe(registry, config):
        if info.source == IN_TREE or not info.enabled:
            continue
        points = sorted({e["point"] for e in info.enabled}, key=info.points.index)
        out.append(OutOfTree(info.name, info.source, points))
    return out


def _findings(reports: list[Report]) -> list[str]:
    base, *others = reports
    out = []
    mine = base.bound
    for r in others:
        theirs = r.bound
        out.append(
            f"Each configuration ran on an identical fake cluster, the pods asking for its scheduler by "
            f"schedulerName ({base.scheduler_name}, then {r.scheduler_name}, the second scheduler). "
            f"{len(mine ^ theirs)} pods are bound under one and not the other: {len(theirs - mine)} only by "
            f"{r.config}, {len(mine - theirs)} only by {base.config} ({len(theirs)} bound against {len(mine)}; "
            f"{len(r.pending)} pending against {len(base.pending)}; {r.attempts} scheduling attempts against "
            f"{base.attempts})."
        )
        if base.groups or r.groups:
            counts = [" / ".join(str(c) for c in report.group_counts().values()) for report in (base, r)]
            out.append(
                f"PodGroups placed whole / in part / not at all: {base.config} {counts[0]}, {r.config} {counts[1]}."
            )
    return out


def _moments(story: PreemptionStory, preemptor: str) -> list[Moment]:
    mine = [s for s in story.lines if s.pod == preemptor]

    def first(what: str, match: Callable[[Step], bool]) -> Moment | None:
        step: Step | None = next((s for s in mine if match(s)), None)
        return Moment(what, step.time, step.text, step.upstream) if step else None

    wanted = [
        first("entered unschedulablePods", lambda s: s.kind == "queue.move" and "→ unschedulablePods" in s.text),
        first("was nominated", lambda s: s.kind == "nomination.set"),
        first(
            "was moved to activeQ by a QueueingHint",
            lambda s: s.kind == "queue.move" and s.text.startswith("unschedulablePods →") and "hint" in s.text,
        ),
        first("was bound", lambda s: s.kind == "bind.done"),
    ]
    return [m for m in wanted if m is not None]


def _why(story: PreemptionStory) -> list[str]:
    p = story.preemption
    if p is None:
        return []
    found = [mapping_of(c, "a candidate") for c in list_of(p["candidates"], "the candidates")]
    candidates = "; ".join(
        f"{c['node']}: {', '.join(strings_of(c['victims'], 'its victims'))} ({c['pdbViolations']} PDB violation(s))"
        for c in found
    )
    out = [
        f"The dry run found {len(found)} candidate nodes: {candidates}.",
        f"{p['nominatedNode']} was chosen by {p['reason'] or 'being the only candidate'}.",
        f"On {p['nominatedNode']}, SelectVictimsOnNode removed every lower-priority pod, then put them back "
        "most important first (higher priority, then earlier start) while the preemptor still fit: "
        f"{', '.join(strings_of(p['reprieved'], 'the reprieved')) or 'none'} stayed, "
        f"{', '.join(strings_of(p['victims'], 'the victims'))} did not.",
    ]
    return out


def build(
    *,
    workload_path: str | Path,
    config_path: str | Path,
    registry: Registry,
    seed: int = 0,
) -> Capstone:
    """Measure `config_path`'s profile against the default one on the workload, then narrate a
    preemption. Raises UsageError, ConfigError, FrameworkError or WorkloadError for bad inputs."""
    measured = options.scheduler_config("--config", str(config_path), registry)
    workload = load_workload(workload_path)
    configs = [("default", options.scheduler_config("--config", None, registry)), (Path(config_path).stem, measured)]
    reports = compare(workload, configs, registry, seed=seed)
    plugins = _out_of_tree(registry, measured)
    story = run_c2()
    preemptor = "default/urgent"
    moments = _moments(story, preemptor)
    preempted = story.preemption
    victim = next(iter(strings_of(preempted.get("victims", []), "the victims") if preempted else ()), "?")
    citations = [
        *(
            Citation(f"{p.name} implements {point} (the extension point's interface)", extension_point(point))
            for p in plugins
            for point in p.points
        ),
        Citation("the pod is assumed in the cache before any API call", cite("assume")),
        Citation("the binding cycle runs asynchronously (the goroutine is started here)", cite("go runBindingCycle")),
        Citation("the binding cycle itself", cite("bindingCycle")),
        Citation(f"the victim {victim} was chosen by SelectVictimsOnNode", cite("SelectVictimsOnNode")),
        Citation("the node was chosen among the candidates", cite("pickOneNodeForPreemption")),
        *(
            Citation(f"the preemptor {m.what} ({symbol_of(site)})", site)
            for m in moments
            for site in m.upstream
            if "backend/queue" in site
        ),
    ]
    return Capstone(
        workload.spec.name,
        workload.spec.description,
        reports,
        plugins,
        _findings(reports),
        story,
        moments,
        _why(story),
        citations,
    )


def unresolved(citations: list[Citation]) -> list[Citation]:
    """The citations that are not sites of the mapping table (none, when the report is sound)."""
    known = {s.cite for s in SITES.values()}
    return [c for c in citations if c.site not in known]


# -- output ------------------------------------------------------------------------------------------


def print_capstone(console: Console, cap: Capstone) -> None:
    console.rule("[bold]Capstone, part one — a measurement")
    names = ", ".join(f"{p.name} ({', '.join(p.points)})" for p in cap.plugins) or "no out-of-tree plugin"
    console.print(f"Out-of-tree plugins of the measured profile: {escape(names)}\n", highlight=False)
    print_reports(console, cap.workload, cap.description, cap.reports)
    console.print()
    for finding in cap.findings:
        console.print(finding, highlight=False)
    console.rule("[bold]Capstone, part two — a story: one preemption")
    print_steps(console, cap.story.lines)
    console.print()
    for m in cap.moments:
        console.print(f"  t+{m.time:g} s: {m.what}: {escape(m.text)}", highlight=False)
    console.print()
    for sentence in cap.why:
        console.print(escape(sentence), highlight=False)
    print_citations(console, {c.claim: c.site for c in cap.citations})


def markdown(cap: Capstone, *, picture: str) -> str:
    """The report as Markdown, `picture` the file name of the SVG written beside it."""
    out = ["# Capstone: a measurement and a story", ""]
    out += ["## Part one — a measurement", "", f"**{cap.workload}**: {cap.description}", ""]
    for p in cap.plugins:
        out.append(f"- out-of-tree plugin **{p.name}** ({p.source}): {', '.join(p.points)}")
    out += ["", "| | " + " | ".join(f"{r.config} (`{r.scheduler_name}`)" for r in cap.reports) + " |"]
    out.append("|---|" + "---|" * len(cap.reports))
    for label, cells in summary(cap.reports):
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += ["", f"![CPU requested per node, each configuration side by side]({picture})", ""]
    out += [f"- {finding}" for finding in cap.findings]
    out += ["", "## Part two — a story: one preemption", ""]
    out += ["| t (s) | pod | what happened | kubesched | kube-scheduler v1.36.2 |", "|---|---|---|---|---|"]
    for s in cap.story.lines:
        out.append(f"| {s.time:g} | `{s.pod}` | {_cell(s.text)} | `{s.site}` | {_sites(s.upstream)} |")
    out += ["", "The moments that matter:", ""]
    out += [f"- t+{m.time:g} s, {m.what}: {_cell(m.text)} ({_sites(m.upstream)})" for m in cap.moments]
    out += ["", *cap.why, "", "## Citations", "", "| claim | kube-scheduler v1.36.2 |", "|---|---|"]
    out += [f"| {_cell(c.claim)} | `{c.site}` |" for c in cap.citations]
    out += ["", "`S/` = `pkg/scheduler/`, `KS/` = `staging/src/k8s.io/kube-scheduler/`, at tag v1.36.2.", ""]
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _sites(sites: Sequence[str]) -> str:
    return ", ".join(f"`{s}`" for s in sites) or "(no kube-scheduler counterpart)"


# -- the command -------------------------------------------------------------------------------------
