"""Where kube-scheduler v1.36.2 does what a trace record or a narrated step reports.

One table, `SITES`, names each upstream function or declaration kubesched follows, by the short
prefixes of the facts document (`S/` = `pkg/scheduler/`, `KS/` = `staging/src/k8s.io/kube-scheduler/`).
`citations(kind, details)` maps a trace record to the upstream sites that do the same thing; the
tracer stamps them on every record beside kubesched's own `module:line`. Records of things upstream
has no counterpart for in kube-scheduler (fake kubelets, the embedded store, drills) carry none, and
`OURS_ONLY` says why.

Every row names an excerpt of the source expected on one line of its span; `kubesched citations`
checks each row against digests of the v1.36.2 source shipped beside this module
(`upstream-v1.36.2.json`), or against a source tree given to it, and a test runs it on every row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PREFIXES = {
    "S/": "pkg/scheduler/",
    "KS/": "staging/src/k8s.io/kube-scheduler/",
    "CG/": "staging/src/k8s.io/client-go/",
}
STALE = ("internal/queue/", "internal/cache/")  # the queue and cache moved to backend/ after v1.31


TAG = "v1.36.2"  # the kube-scheduler every row is read at
MODULES = {"k8s.io/kubernetes": "v1.36.2", "k8s.io/kube-scheduler": "v0.36.2", "k8s.io/client-go": "v0.36.2"}


@dataclass(frozen=True)
class UpstreamSite:
    """One upstream function or declaration: `file` with its facts-document prefix, `lines` one
    line or a range, and `expect`, a short exact excerpt of the source found on one line of that
    span (the declaration, usually), which `kubesched citations` checks at tag v1.36.2."""

    symbol: str
    file: str
    lines: str
    expect: str

    @property
    def ours(self) -> str:
        """Where kubesched does the same (for the documents)."""
        return WHERE_IN_KUBESCHED.get(self.symbol, "")

    @property
    def cite(self) -> str:
        """`S/schedule_one.go:175-198`, as the facts document writes it."""
        return f"{self.file}:{self.lines}"

    @property
    def span(self) -> tuple[int, int]:
        """The first and last line cited."""
        first, _, last = self.lines.partition("-")
        return int(first), int(last or first)

    @property
    def path(self) -> str:
        """The file's path in kubernetes/kubernetes."""
        return full_path(self.file)


def full_path(cited: str) -> str:
    """A cited file (or citation) in kubernetes/kubernetes: `S/backend/...` → `pkg/scheduler/backend/...`."""
    for short, long in PREFIXES.items():
        if cited.startswith(short):
            return long + cited[len(short) :]
    return cited


def _site(symbol: str, cite: str, expect: str) -> UpstreamSite:
    file, _, lines = cite.rpartition(":")
    return UpstreamSite(symbol, file, lines, expect)


_INTERFACE = "KS/framework/interface.go"
_ONE = "S/schedule_one.go"
_QUEUE = "S/backend/queue/scheduling_queue.go"
_PREEMPTION = "S/framework/preemption"
_DEFAULT_PREEMPTION = "S/framework/plugins/defaultpreemption/default_preemption.go"
_RUNTIME = "S/framework/runtime/framework.go"
_SCHED = "func (sched *Scheduler) "
_FWK = "func (f *frameworkImpl) "
_PQ = "func (p *PriorityQueue) "

SITES: dict[str, UpstreamSite] = {
    s.symbol: s
    for s in (
        # the plugin API: each extension point's interface
        _site("Code", f"{_INTERFACE}:48-104", "Success Code = iota"),
        _site("PreEnqueuePlugin", f"{_INTERFACE}:445-449", "type PreEnqueuePlugin interface {"),
        _site("QueueSortPlugin", f"{_INTERFACE}:457-461", "type QueueSortPlugin interface {"),
        _site("EnqueueExtensions", f"{_INTERFACE}:480-494", "type EnqueueExtensions interface {"),
        _site("PreFilterExtensions", f"{_INTERFACE}:499-506", "type PreFilterExtensions interface {"),
        _site("PreFilterPlugin", f"{_INTERFACE}:511-530", "type PreFilterPlugin interface {"),
        _site("FilterPlugin", f"{_INTERFACE}:540-565", "type FilterPlugin interface {"),
        _site("PostFilterPlugin", f"{_INTERFACE}:569-589", "type PostFilterPlugin interface {"),
        _site("PreScorePlugin", f"{_INTERFACE}:596-604", "type PreScorePlugin interface {"),
        _site("ScoreExtensions", f"{_INTERFACE}:607-612", "type ScoreExtensions interface {"),
        _site("ScorePlugin", f"{_INTERFACE}:617-626", "type ScorePlugin interface {"),
        _site("ReservePlugin", f"{_INTERFACE}:634-646", "type ReservePlugin interface {"),
        _site("PreBindPlugin", f"{_INTERFACE}:650-663", "type PreBindPlugin interface {"),
        _site("PostBindPlugin", f"{_INTERFACE}:667-674", "type PostBindPlugin interface {"),
        _site("PermitPlugin", f"{_INTERFACE}:678-687", "type PermitPlugin interface {"),
        _site("BindPlugin", f"{_INTERFACE}:691-700", "type BindPlugin interface {"),
        _site("MaxScore", f"{_INTERFACE}:329", "MaxScore int64 = 100"),
        # the default profile
        _site(
            "getDefaultPlugins", "S/apis/config/v1/default_plugins.go:30-58", "func getDefaultPlugins() *v1.Plugins {"
        ),
        _site("applyFeatureGates", "S/apis/config/v1/default_plugins.go:60-73", "func applyFeatureGates("),
        _site("applyDynamicResources", "S/apis/config/v1/default_plugins.go:75-91", "func applyDynamicResources("),
        _site("getValidScoreWeights", f"{_RUNTIME}:577-612", "func getValidScoreWeights("),
        # the framework running each point's plugins
        _site("RunFilterPlugins", f"{_RUNTIME}:1093-1126", f"{_FWK}RunFilterPlugins("),
        _site("RunPostFilterPlugins", f"{_RUNTIME}:1140-1187", f"{_FWK}RunPostFilterPlugins("),
        _site("RunPreScorePlugins", f"{_RUNTIME}:1288-1321", f"{_FWK}RunPreScorePlugins("),
        _site("RunScorePlugins", f"{_RUNTIME}:1339-1446", f"{_FWK}RunScorePlugins("),
        _site("RunPreBindPlugins", f"{_RUNTIME}:1611-1705", f"{_FWK}RunPreBindPlugins("),
        _site("RunPreBindPreFlights", f"{_RUNTIME}:1720-1762", f"{_FWK}RunPreBindPreFlights("),
        _site("RunBindPlugins", f"{_RUNTIME}:1775-1811", f"{_FWK}RunBindPlugins("),
        _site("RunPostBindPlugins", f"{_RUNTIME}:1824-1857", f"{_FWK}RunPostBindPlugins("),
        _site("RunReservePluginsReserve", f"{_RUNTIME}:1859-1925", f"{_FWK}RunReservePluginsReserve("),
        _site("RunPermitPlugins", f"{_RUNTIME}:1942-1987", f"{_FWK}RunPermitPlugins("),
        _site("WaitOnPermit", f"{_RUNTIME}:2053-2077", f"{_FWK}WaitOnPermit("),
        # one attempt
        _site("ScheduleOne", f"{_ONE}:67-96", f"{_SCHED}ScheduleOne("),
        _site("scheduleOnePod", f"{_ONE}:99-148", f"{_SCHED}scheduleOnePod("),
        _site("go runBindingCycle", f"{_ONE}:147", "go sched.runBindingCycle("),
        _site("runBindingCycle", f"{_ONE}:151-172", f"{_SCHED}runBindingCycle("),
        _site("schedulingCycle", f"{_ONE}:175-198", f"{_SCHED}schedulingCycle("),
        _site("prepareForBindingCycle", f"{_ONE}:202-253", f"{_SCHED}prepareForBindingCycle("),
        _site("schedulingAlgorithm", f"{_ONE}:256-309", f"{_SCHED}schedulingAlgorithm("),
        _site("assumeAndReserve", f"{_ONE}:313-361", f"{_SCHED}assumeAndReserve("),
        _site("unreserveAndForget", f"{_ONE}:364-394", f"{_SCHED}unreserveAndForget("),
        _site("bindingCycle", f"{_ONE}:397-503", f"{_SCHED}bindingCycle("),
        _site("Done before PreBind", f"{_ONE}:453", "sched.SchedulingQueue.Done(assumedPod.UID)"),
        _site("handleBindingCycleError", f"{_ONE}:505-536", f"{_SCHED}handleBindingCycleError("),
        _site("schedulePod", f"{_ONE}:570-626", f"{_SCHED}schedulePod("),
        _site("findNodesThatFitPod", f"{_ONE}:628-717", f"{_SCHED}findNodesThatFitPod("),
        _site("findNodesThatPassFilters", f"{_ONE}:777-860", f"{_SCHED}findNodesThatPassFilters("),
        _site("numFeasibleNodesToFind", f"{_ONE}:864-890", f"{_SCHED}numFeasibleNodesToFind("),
        _site("prioritizeNodes", f"{_ONE}:943-1104", "func prioritizeNodes("),
        _site("sortedNodeScores", f"{_ONE}:1056-1104", "type sortedNodeScores struct {"),
        _site("assume", f"{_ONE}:1108-1143", f"{_SCHED}assume("),
        _site("bind", f"{_ONE}:1148-1159", f"{_SCHED}bind("),
        _site("Scheduled event", f"{_ONE}:1186", '"Scheduled", "Binding", "Successfully assigned %v/%v to %v"'),
        _site("handleSchedulingFailure", f"{_ONE}:1200-1299", f"{_SCHED}handleSchedulingFailure("),
        _site("FailedScheduling event", f"{_ONE}:1289", '"FailedScheduling", "Scheduling", msg)'),
        _site("FitError.Error", "S/framework/types.go:926-978", "func (f *FitError) Error() string {"),
        _site("fitsRequest", "S/framework/plugins/noderesources/fit.go:678-765", "func fitsRequest("),
        _site(
            "PodTopologySpread.Filter",
            "S/framework/plugins/podtopologyspread/filtering.go:314-359",
            "func (pl *PodTopologySpread) Filter(",
        ),
        _site(
            "TaintToleration.Filter",
            "S/framework/plugins/tainttoleration/taint_toleration.go:119-132",
            "func (pl *TaintToleration) Filter(",
        ),
        # preemption
        _site(
            "DefaultPreemption.PostFilter", f"{_DEFAULT_PREEMPTION}:135-163", "func (pl *DefaultPreemption) PostFilter("
        ),
        _site(
            "SelectVictimsOnNode", f"{_DEFAULT_PREEMPTION}:251-353", "func (pl *DefaultPreemption) SelectVictimsOnNode("
        ),
        _site("Evaluator.Preempt", f"{_PREEMPTION}/preemption.go:103-170", "func (ev *Evaluator) Preempt("),
        _site("DryRunPreemption", f"{_PREEMPTION}/preemption.go:404-456", "func (ev *Evaluator) DryRunPreemption("),
        _site("pickOneNodeForPreemption", f"{_PREEMPTION}/preemption.go:311-397", "func pickOneNodeForPreemption("),
        _site("PreemptPod", f"{_PREEMPTION}/executor.go:103-160", "e.PreemptPod = func("),
        # the queue
        _site("runPreEnqueuePlugins", f"{_QUEUE}:598-658", f"{_PQ}runPreEnqueuePlugins("),
        _site("moveToActiveQ", f"{_QUEUE}:672-713", f"{_PQ}moveToActiveQ("),
        _site("Activate", f"{_QUEUE}:757-810", f"{_PQ}Activate("),
        _site("AddUnschedulableIfNotPresent", f"{_QUEUE}:905-965", f"{_PQ}AddUnschedulableIfNotPresent("),
        _site("flushBackoffQCompleted", f"{_QUEUE}:968-981", f"{_PQ}flushBackoffQCompleted("),
        _site("flushUnschedulablePodsLeftover", f"{_QUEUE}:985-1003", f"{_PQ}flushUnschedulablePodsLeftover("),
        _site("Done", f"{_QUEUE}:1051-1058", f"{_PQ}Done("),
        _site("Update", f"{_QUEUE}:1094-1199", f"{_PQ}Update("),
        _site("MoveAllToActiveOrBackoffQueue", f"{_QUEUE}:1253-1350", f"{_PQ}MoveAllToActiveOrBackoffQueue("),
        _site("isPodWorthRequeuing", f"{_QUEUE}:488-575", f"{_PQ}isPodWorthRequeuing("),
        _site(
            "determineSchedulingHintForInFlightPod",
            f"{_QUEUE}:818-861",
            f"{_PQ}determineSchedulingHintForInFlightPod(",
        ),
        _site("requeuePodWithQueueingStrategy", f"{_QUEUE}:1283-1306", f"{_PQ}requeuePodWithQueueingStrategy("),
        _site("unschedulablePods", "S/backend/queue/unschedulable_pods.go:27-112", "type unschedulablePods struct {"),
        _site(
            "backoff", "S/backend/queue/backoff_queue.go:189-260", "func (bq *backoffQueue) calculateBackoffDuration("
        ),
        _site("Pop", "S/backend/queue/active_queue.go:306-352", "func (aq *activeQueue) pop("),
        _site("buildQueueingHintMap", "S/scheduler.go:476-543", "func buildQueueingHintMap("),
        # leader election
        _site("LeaderElector", "CG/tools/leaderelection/leaderelection.go:188-222", "type LeaderElector struct {"),
    )
}

# Where kubesched does what each row's upstream site does (docs/upstream-map.md shows both).
WHERE_IN_KUBESCHED: dict[str, str] = {
    "Code": "`framework/status.py`",
    "PreEnqueuePlugin": "`framework/interface.py`",
    "QueueSortPlugin": "`framework/interface.py`",
    "EnqueueExtensions": "`framework/interface.py`",
    "PreFilterExtensions": "`framework/interface.py`",
    "PreFilterPlugin": "`framework/interface.py`",
    "FilterPlugin": "`framework/interface.py`",
    "PostFilterPlugin": "`framework/interface.py`",
    "PreScorePlugin": "`framework/interface.py`",
    "ScoreExtensions": "`framework/interface.py`",
    "ScorePlugin": "`framework/interface.py`",
    "ReservePlugin": "`framework/interface.py`",
    "PreBindPlugin": "`framework/interface.py`",
    "PostBindPlugin": "`framework/interface.py`",
    "PermitPlugin": "`framework/interface.py`",
    "BindPlugin": "`framework/interface.py`",
    "MaxScore": "`framework/interface.py`",
    "getDefaultPlugins": "`config` defaults (`default_profile`)",
    "applyFeatureGates": "`config` defaults (`default_profile`)",
    "applyDynamicResources": "`config` defaults (`default_profile`)",
    "getValidScoreWeights": "`build_frameworks` (`scheduler/profiles.py`)",
    "RunFilterPlugins": "`Framework.run_filter`",
    "RunPostFilterPlugins": "`Framework.run_post_filter`",
    "RunPreScorePlugins": "`Framework.run_pre_score`",
    "RunScorePlugins": "`Framework.run_score`",
    "RunPreBindPlugins": "`Framework.run_pre_bind`",
    "RunPreBindPreFlights": "not run (docs/deviations.md)",
    "RunBindPlugins": "`Framework.run_bind`",
    "RunPostBindPlugins": "`Framework.run_post_bind`",
    "RunReservePluginsReserve": "`Framework.run_reserve`",
    "RunPermitPlugins": "`Framework.run_permit`",
    "WaitOnPermit": "`Framework.wait_on_permit`",
    "ScheduleOne": "`Scheduler.run` / `schedule_one`",
    "scheduleOnePod": "`Scheduler.schedule_one`",
    "go runBindingCycle": "`Scheduler.schedule_one` (`_spawn(binding_cycle)`)",
    "runBindingCycle": "`Scheduler.binding_cycle`",
    "schedulingCycle": "`Scheduler.scheduling_cycle`",
    "prepareForBindingCycle": "`Scheduler.scheduling_cycle`",
    "schedulingAlgorithm": "`Scheduler.find_host`",
    "assumeAndReserve": "`Scheduler.scheduling_cycle`",
    "unreserveAndForget": "`Scheduler._binding_failed`",
    "bindingCycle": "`Scheduler.binding_cycle`",
    "Done before PreBind": "`Scheduler.binding_cycle`",
    "handleBindingCycleError": "`Scheduler.binding_cycle`",
    "schedulePod": "`Algorithm.schedule_pod`",
    "findNodesThatFitPod": "`Algorithm.find_nodes_that_fit`",
    "findNodesThatPassFilters": "`Algorithm.find_nodes_that_pass_filters`",
    "numFeasibleNodesToFind": "`fit_error.num_feasible_nodes_to_find`",
    "prioritizeNodes": "`Algorithm.prioritize`",
    "sortedNodeScores": "`Algorithm.schedule_pod`",
    "assume": "`Scheduler.scheduling_cycle` → `Cache.assume_pod`",
    "bind": "`Scheduler.binding_cycle` → `Framework.run_bind`",
    "Scheduled event": "`Scheduler.binding_cycle`",
    "handleSchedulingFailure": "`Failures.handle_failure`",
    "FailedScheduling event": "`Failures._report_failure`",
    "FitError.Error": "`FitError.message` (`scheduler/fit_error.py`)",
    "fitsRequest": "`plugins/noderesources_fit.py`",
    "PodTopologySpread.Filter": "`plugins/pod_topology_spread/`",
    "TaintToleration.Filter": "`plugins/taint_toleration.py`",
    "DefaultPreemption.PostFilter": "`plugins/default_preemption.py`",
    "SelectVictimsOnNode": "`DefaultPreemption.select_victims_on_node`",
    "Evaluator.Preempt": "`framework/preemption.py`",
    "DryRunPreemption": "`framework/preemption.py`",
    "pickOneNodeForPreemption": "`framework/preemption.py`",
    "PreemptPod": "`framework/preemption.py`",
    "runPreEnqueuePlugins": "`SchedulingQueue._pre_enqueue`",
    "moveToActiveQ": "`SchedulingQueue._to_active`",
    "Activate": "`SchedulingQueue.activate`",
    "AddUnschedulableIfNotPresent": "`SchedulingQueue.add_unschedulable_if_not_present`",
    "flushBackoffQCompleted": "`SchedulingQueue._flush_backoff`",
    "flushUnschedulablePodsLeftover": "`SchedulingQueue._flush_unschedulable`",
    "Done": "`SchedulingQueue.done`",
    "Update": "`SchedulingQueue.update`",
    "MoveAllToActiveOrBackoffQueue": "`SchedulingQueue.move_all_to_active_or_backoff`",
    "isPodWorthRequeuing": "`queue/hints.py` (`decide`)",
    "determineSchedulingHintForInFlightPod": "`SchedulingQueue._in_flight_decision`",
    "requeuePodWithQueueingStrategy": "`SchedulingQueue._requeue`",
    "unschedulablePods": "`queue/pool.py`",
    "backoff": "`SchedulingQueue.backoff_duration`",
    "Pop": "`SchedulingQueue.pop`",
    "buildQueueingHintMap": "`framework/runtime.py` (`_with_taint_updates`), `queue/hints.py`",
    "LeaderElector": "`scheduler/leader.py`",
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
    "cycle.selected": ("schedulingCycle", "sortedNodeScores"),
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


def queue_move_sites(details: Mapping[str, object]) -> tuple[str, ...]:
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


def citations(kind: str, details: Mapping[str, object]) -> tuple[str, ...]:
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
