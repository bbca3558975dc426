"""Where kube-scheduler v1.36.2 does what a trace record or a narrated step reports.

One table, `SITES`, names each upstream function or declaration kubesched follows, by the short
prefixes of the facts document (`S/` = `pkg/scheduler/`, `KS/` = `staging/src/k8s.io/kube-scheduler/`).
`citations(kind, details)` maps a trace record to the upstream sites that do the same thing; the
tracer stamps them on every record beside kubesched's own `module:line`. Records of things upstream
has no counterpart for in kube-scheduler (fake kubelets, the embedded store, drills) carry none, and
`OURS_ONLY` says why.

Lines in `KS/framework/` were read at the `kubernetes/kube-scheduler` tag v0.36.2 (the staging mirror
of v1.36.2); the others are the facts document's, taken from a module vendoring `k8s.io/kubernetes
v1.36.2`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PREFIXES = {
    "S/": "pkg/scheduler/",
    "KS/": "staging/src/k8s.io/kube-scheduler/",
    "CG/": "staging/src/k8s.io/client-go/",
}
STALE = ("internal/queue/", "internal/cache/")  # the queue and cache moved to backend/ after v1.31


@dataclass(frozen=True)
class UpstreamSite:
    """One upstream function or declaration: `file` with its facts-document prefix, `lines` one
    line or a range, and what is found there."""

    symbol: str
    file: str
    lines: str

    @property
    def cite(self) -> str:
        """`S/schedule_one.go:175-198`, as the facts document writes it."""
        return f"{self.file}:{self.lines}"

    @property
    def path(self) -> str:
        """The file's path in kubernetes/kubernetes."""
        for short, long in PREFIXES.items():
            if self.file.startswith(short):
                return long + self.file[len(short) :]
        return self.file


def _site(symbol: str, cite: str) -> UpstreamSite:
    file, _, lines = cite.rpartition(":")
    return UpstreamSite(symbol, file, lines)


_INTERFACE = "KS/framework/interface.go"
_ONE = "S/schedule_one.go"
_QUEUE = "S/backend/queue/scheduling_queue.go"
_PREEMPTION = "S/framework/preemption"
_DEFAULT_PREEMPTION = "S/framework/plugins/defaultpreemption/default_preemption.go"
_RUNTIME = "S/framework/runtime/framework.go"

SITES: dict[str, UpstreamSite] = {
    s.symbol: s
    for s in (
        # the plugin API: each extension point's interface
        _site("Code", f"{_INTERFACE}:48-104"),
        _site("PreEnqueuePlugin", f"{_INTERFACE}:445-449"),
        _site("QueueSortPlugin", f"{_INTERFACE}:457-461"),
        _site("EnqueueExtensions", f"{_INTERFACE}:480-494"),
        _site("PreFilterExtensions", f"{_INTERFACE}:499-506"),
        _site("PreFilterPlugin", f"{_INTERFACE}:511-530"),
        _site("FilterPlugin", f"{_INTERFACE}:540-565"),
        _site("PostFilterPlugin", f"{_INTERFACE}:569-589"),
        _site("PreScorePlugin", f"{_INTERFACE}:596-604"),
        _site("ScoreExtensions", f"{_INTERFACE}:607-612"),
        _site("ScorePlugin", f"{_INTERFACE}:617-626"),
        _site("ReservePlugin", f"{_INTERFACE}:634-646"),
        _site("PreBindPlugin", f"{_INTERFACE}:650-663"),
        _site("PostBindPlugin", f"{_INTERFACE}:667-674"),
        _site("PermitPlugin", f"{_INTERFACE}:678-687"),
        _site("BindPlugin", f"{_INTERFACE}:691-700"),
        _site("MaxScore", f"{_INTERFACE}:329"),
        # the framework running each point's plugins
        _site("RunFilterPlugins", f"{_RUNTIME}:1093-1126"),
        _site("RunScorePlugins", f"{_RUNTIME}:1339-1446"),
        _site("RunPreBindPlugins", f"{_RUNTIME}:1611-1705"),
        _site("RunBindPlugins", f"{_RUNTIME}:1775-1811"),
        _site("RunPostBindPlugins", f"{_RUNTIME}:1824-1857"),
        _site("RunReservePluginsReserve", f"{_RUNTIME}:1859-1925"),
        _site("RunPermitPlugins", f"{_RUNTIME}:1942-1987"),
        _site("WaitOnPermit", f"{_RUNTIME}:2053-2077"),
        # one attempt
        _site("ScheduleOne", f"{_ONE}:67-96"),
        _site("scheduleOnePod", f"{_ONE}:99-148"),
        _site("go runBindingCycle", f"{_ONE}:147"),
        _site("runBindingCycle", f"{_ONE}:151-172"),
        _site("schedulingCycle", f"{_ONE}:175-198"),
        _site("prepareForBindingCycle", f"{_ONE}:202-362"),
        _site("schedulingAlgorithm", f"{_ONE}:256-309"),
        _site("RunPostFilterPlugins", f"{_ONE}:288-305"),
        _site("bindingCycle", f"{_ONE}:397-503"),
        _site("handleBindingCycleError", f"{_ONE}:505-536"),
        _site("schedulePod", f"{_ONE}:570-626"),
        _site("findNodesThatFitPod", f"{_ONE}:628-717"),
        _site("findNodesThatPassFilters", f"{_ONE}:777-860"),
        _site("numFeasibleNodesToFind", f"{_ONE}:864-890"),
        _site("prioritizeNodes", f"{_ONE}:943-1104"),
        _site("selectHost", f"{_ONE}:1056-1104"),
        _site("assume", f"{_ONE}:1108-1143"),
        _site("bind", f"{_ONE}:1148-1159"),
        _site("Scheduled event", f"{_ONE}:1186"),
        _site("handleSchedulingFailure", f"{_ONE}:1200-1299"),
        _site("FailedScheduling event", f"{_ONE}:1289"),
        _site("FitError.Error", "S/framework/types.go:926-978"),
        _site("fitsRequest", "S/framework/plugins/noderesources/fit.go:678-765"),
        _site("PodTopologySpread.Filter", "S/framework/plugins/podtopologyspread/filtering.go:314-359"),
        _site("TaintToleration.Filter", "S/framework/plugins/tainttoleration/taint_toleration.go:119-132"),
        # preemption
        _site("DefaultPreemption.PostFilter", f"{_DEFAULT_PREEMPTION}:135-163"),
        _site("SelectVictimsOnNode", f"{_DEFAULT_PREEMPTION}:251-353"),
        _site("Evaluator.Preempt", f"{_PREEMPTION}/preemption.go:103-170"),
        _site("DryRunPreemption", f"{_PREEMPTION}/preemption.go:404-456"),
        _site("pickOneNodeForPreemption", f"{_PREEMPTION}/preemption.go:311-397"),
        _site("PreemptPod", f"{_PREEMPTION}/executor.go:103-160"),
        # the queue
        _site("runPreEnqueuePlugins", f"{_QUEUE}:598-658"),
        _site("moveToActiveQ", f"{_QUEUE}:699-710"),
        _site("Activate", f"{_QUEUE}:757-810"),
        _site("AddUnschedulableIfNotPresent", f"{_QUEUE}:905-965"),
        _site("flushBackoffQCompleted", f"{_QUEUE}:968-981"),
        _site("flushUnschedulablePodsLeftover", f"{_QUEUE}:985-1003"),
        _site("Update", f"{_QUEUE}:1094-1199"),
        _site("MoveAllToActiveOrBackoffQueue", f"{_QUEUE}:1253-1350"),
        _site("isPodWorthRequeuing", f"{_QUEUE}:488-575"),
        _site("requeuePodWithQueueingStrategy", f"{_QUEUE}:1283-1306"),
        _site("unschedulablePods", "S/backend/queue/unschedulable_pods.go:27-112"),
        _site("backoff", "S/backend/queue/backoff_queue.go:189-260"),
        _site("Pop", "S/backend/queue/active_queue.go:306-352"),
        _site("buildQueueingHintMap", "S/scheduler.go:497-530"),
        # leader election
        _site("LeaderElector", "CG/tools/leaderelection/leaderelection.go:72-88"),
    )
}

_BY_CITE = {s.cite: s.symbol for s in SITES.values()}

# Extension points by the name kubesched's framework gives them, to their interface.
EXTENSION_POINTS: dict[str, str] = {
    "PreEnqueue": "PreEnqueuePlugin",
    "QueueSort": "QueueSortPlugin",
    "PreFilter": "PreFilterPlugin",
    "Filter": "FilterPlugin",
    "PostFilter": "PostFilterPlugin",
    "PreScore": "PreScorePlugin",
    "Score": "ScorePlugin",
    "Reserve": "ReservePlugin",
    "Permit": "PermitPlugin",
    "WaitOnPermit": "PermitPlugin",
    "PreBind": "PreBindPlugin",
    "Bind": "BindPlugin",
    "PostBind": "PostBindPlugin",
}

# Trace kinds and the sites that do the same upstream (queue.move depends on its event, below).
TRACE_KINDS: dict[str, tuple[str, ...]] = {
    "queue.pop": ("Pop",),
    "queue.stayed": ("isPodWorthRequeuing",),
    "cycle.start": ("ScheduleOne", "scheduleOnePod"),
    "cycle.filtered": ("findNodesThatFitPod", "RunFilterPlugins"),
    "cycle.scored": ("prioritizeNodes", "RunScorePlugins"),
    "cycle.selected": ("schedulingCycle", "selectHost"),
    "cycle.reserved": ("prepareForBindingCycle", "RunReservePluginsReserve"),
    "cycle.permitted": ("prepareForBindingCycle", "RunPermitPlugins"),
    "cycle.failed": ("handleSchedulingFailure", "FitError.Error"),
    "cache.assumed": ("assume",),
    "bind.started": ("go runBindingCycle", "WaitOnPermit"),
    "bind.prebound": ("bindingCycle", "RunPreBindPlugins"),
    "bind.done": ("bind", "RunBindPlugins", "Scheduled event"),
    "bind.postbound": ("bindingCycle", "RunPostBindPlugins"),
    "bind.failed": ("handleBindingCycleError",),
    "nomination.set": ("handleSchedulingFailure",),
    "preemption.chosen": ("pickOneNodeForPreemption", "SelectVictimsOnNode"),
    "preemption.victim": ("PreemptPod",),
    "leader.acquired": ("LeaderElector",),
    "leader.released": ("LeaderElector",),
    "leader.lost": ("LeaderElector",),
}

# Trace kinds with no kube-scheduler counterpart, and why.
OURS_ONLY: dict[str, str] = {
    "plugin.raised": "a Python plugin raising is caught and becomes an Error status; Go plugins return errors",
    "informer.retry": "client-go's reflector retries inside the informer; kubesched traces it",
    "informer.relist": "client-go's reflector relists on 410 Gone; kubesched traces it",
    "informer.not_served": "the API server does not serve a resource kind the scheduler watches",
    "informer.failed": "an informer gave up; client-go retries forever",
    "kubelet.admitted": "fake kubelets stand in for the kubelet",
    "kubelet.rejected": "fake kubelets stand in for the kubelet",
    "kubelet.running": "fake kubelets stand in for the kubelet",
    "kubelet.killed": "fake kubelets stand in for the kubelet",
    "kubelet.exited": "fake kubelets stand in for the kubelet",
    "kubelet.restarted": "fake kubelets stand in for the kubelet",
    "disruption.status": "the disruption controller runs in kube-controller-manager",
    "minimal.invalid": "the from-scratch scheduler is kubesched's own",
    "minimal.unschedulable": "the from-scratch scheduler is kubesched's own",
    "minimal.picked": "the from-scratch scheduler is kubesched's own",
    "minimal.bind_failed": "the from-scratch scheduler is kubesched's own",
    "drill.crash": "a drill's own step",
}
OURS_ONLY_PREFIXES = ("store.",)  # the embedded API server's store


def queue_move_sites(details: Mapping[str, Any]) -> tuple[str, ...]:
    """The upstream sites of one queue transition, by the event that caused it and where it went."""
    event = str(details.get("event", ""))
    to = details.get("to")
    if event == "ScheduleAttemptFailure":
        why: tuple[str, ...] = ("AddUnschedulableIfNotPresent",)
    elif event == "BackoffComplete":
        why = ("flushBackoffQCompleted",)
    elif event == "UnschedulableTimeout":
        why = ("flushUnschedulablePodsLeftover",)
    elif event == "ForceActivate":
        why = ("Activate",)
    elif event == "PodAdd" and not details.get("from"):
        why = ("moveToActiveQ",)
    elif event.startswith("UnschedulablePod"):
        why = ("Update",)
    else:
        why = ("MoveAllToActiveOrBackoffQueue",)
    if details.get("plugin"):
        why += ("isPodWorthRequeuing",)
    if details.get("hint_fn") is False:  # Node/UpdateNodeTaint, added for a plugin that registered Node/Add
        why += ("buildQueueingHintMap",)
    if to == "gated":
        return (*why, "runPreEnqueuePlugins")
    if to == "unschedulablePods":
        return (*why, "unschedulablePods")
    if to == "backoffQ":
        return (*why, "backoff")
    return why


def citations(kind: str, details: Mapping[str, Any]) -> tuple[str, ...]:
    """The upstream `file:line` of each site a trace record corresponds to (empty when none does)."""
    symbols = queue_move_sites(details) if kind == "queue.move" else TRACE_KINDS.get(kind, ())
    return tuple(SITES[s].cite for s in symbols)


def symbol_of(citation: str) -> str:
    """The symbol of a citation the table holds (KeyError for one it does not)."""
    return _BY_CITE[citation]


def cite(symbol: str) -> str:
    """`SITES[symbol].cite`; a KeyError names a symbol the table lacks."""
    return SITES[symbol].cite


def extension_point(point: str) -> str:
    """The interface declaration of an extension point, by its name in a configuration (`filter`)
    or upstream's (`Filter`): e.g. KS/framework/interface.go:540-565."""
    return SITES[EXTENSION_POINTS[point[:1].upper() + point[1:]]].cite


def is_ours_only(kind: str) -> bool:
    return kind in OURS_ONLY or kind.startswith(OURS_ONLY_PREFIXES)
