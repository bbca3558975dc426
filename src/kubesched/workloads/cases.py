"""upstream's scheduler_perf test cases, by their names, as kubesched runs them: the operations of
each test case's workload template, and its workloads (sizes, labels, CI threshold).

Read from `test/integration/scheduler_perf/*/performance-config.yaml` in kubernetes/kubernetes: the
newest stored `misc/`, `default_preemption/` and `topology_spreading/` files (commits fde22c3f,
d7ce957d, 05377107) and `affinity/` (1bd6a8f3). A threshold is upstream's CI minimum for the
workload's average SchedulingThroughput (pods/s, compared strictly: the average must exceed it);
upstream's feature-gate twins of a workload (`_QueueingHintsEnabled`, `_AsyncAPICallsEnabled`) run
what kubesched runs anyway and are not repeated. Test cases kubesched cannot reproduce are listed in
`NOT_REPRODUCED` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.workloads.templates import ZONE

Count = int | str  # a number, or "$param"


@dataclass(frozen=True)
class CreateNodes:
    count: Count
    template: str = ""  # "" = scheduler_perf's makeBaseNode
    label_key: str = ""  # labelNodePrepareStrategy: values given round-robin
    label_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNamespaces:
    prefix: str
    count: Count
    template: str = ""  # namespaceTemplatePath ("" = an empty Namespace)


@dataclass(frozen=True)
class CreatePods:
    count: Count
    template: str = ""  # "" = the test case's default pod template
    namespace: str = ""  # "" = namespace-<op index>, as scheduler_perf names it
    collect_metrics: bool = False
    skip_wait: bool = False  # skipWaitToCompletion


@dataclass(frozen=True)
class CreatePodSets:
    """`count` copies of `pods`, one per namespace `<namespace_prefix>-<i>`, unrolled into
    createPods ops before the workload runs (the later ops' indices shift, as upstream's)."""

    count: Count
    namespace_prefix: str
    pods: CreatePods


@dataclass(frozen=True)
class DeletePods:
    """Delete the pods of `namespace` (matching `labels`) that exist when the op starts:
    `per_second` a second, or all at once with 0; `skip_wait` deletes in the background."""

    namespace: str
    per_second: int = 0
    skip_wait: bool = False
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CreateAny:
    """`count` objects of the template at `template` (any kind), in `namespace`."""

    template: str
    namespace: str = ""
    count: Count = 1


@dataclass(frozen=True)
class Churn:
    """Objects of `templates` made every `interval` seconds while the test runs: `create` keeps
    making them (up to `number`, 0 = no limit); `recreate` keeps `number` of each, deleting the
    oldest to make the next."""

    mode: str
    templates: tuple[str, ...]
    interval: float
    number: int = 0


SCHEDULED = "Scheduled"
ATTEMPTED = "Attempted"


@dataclass(frozen=True)
class Barrier:
    """Wait until every pod created so far is scheduled, or with `stage` Attempted, scheduled or
    tried (a pod with a PodScheduled condition, as a gated pod has from its creation)."""

    stage: str = SCHEDULED


Op = CreateNodes | CreateNamespaces | CreatePods | CreatePodSets | DeletePods | CreateAny | Churn | Barrier


@dataclass(frozen=True)
class Workload:
    name: str
    params: dict[str, int]
    labels: tuple[str, ...] = ()
    threshold: float = 0.0  # upstream's CI minimum average pods/s (0: none)
    note: str = ""  # where kubesched's workload differs from upstream's


@dataclass(frozen=True)
class TestCase:
    name: str
    ops: tuple[Op, ...]
    workloads: tuple[Workload, ...]
    default_pod_template: str = "pod-default.yaml"

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise KeyError(name)


def _sizes(
    *rows: tuple[str, tuple[int, ...], tuple[str, ...], float],
    keys: tuple[str, ...] = ("initNodes", "initPods", "measurePods"),
) -> tuple[Workload, ...]:
    return tuple(
        Workload(name, dict(zip(keys, values, strict=True)), labels, threshold)
        for name, values, labels, threshold in rows
    )


SHORT = ("integration-test", "short")
PERF = ("performance",)
PERF_SHORT = ("performance", "short")
MOONS = ("moon-1", "moon-2", "moon-3")

_NODES = CreateNodes("$initNodes")
_INIT = CreatePods("$initPods")
_MEASURE = CreatePods("$measurePods", collect_metrics=True)
_SCHED_NS = CreateNamespaces("sched", 2)
_IN_NS = (
    _SCHED_NS,
    CreatePods("$initPods", namespace="sched-0"),
    CreatePods("$measurePods", namespace="sched-1", collect_metrics=True),
)

CASES: dict[str, TestCase] = {
    c.name: c
    for c in (
        TestCase(
            "SchedulingBasic",
            (_NODES, _INIT, _MEASURE),
            (
                *_sizes(
                    ("5Nodes", (5, 5, 10), SHORT, 0),
                    ("500Nodes", (500, 500, 1000), (), 0),
                    ("5000Nodes", (5000, 1000, 1000), (), 0),
                    ("5000Nodes_10000Pods", (5000, 1000, 10000), PERF, 680),
                    ("5000Nodes_50000Pods", (5000, 5000, 50000), PERF, 790),
                ),
                Workload(
                    "15000Nodes_10000Pods",
                    {"initNodes": 15000, "initPods": 1000, "measurePods": 10000},
                    note="kubesched's own size: upstream has no SchedulingBasic at 15,000 nodes",
                ),
            ),
        ),
        TestCase(
            "SchedulingPodAntiAffinity",
            (_NODES, *_IN_NS),
            _sizes(
                ("5Nodes", (5, 1, 4), SHORT, 0),
                ("500Nodes", (500, 100, 400), (), 0),
                ("5000Nodes", (5000, 1000, 1000), PERF_SHORT, 0),
                ("5000Nodes_2000Pods", (5000, 1000, 2000), PERF, 60),
            ),
            default_pod_template="pod-with-pod-anti-affinity.yaml",
        ),
        TestCase(
            "SchedulingPodAffinity",
            (CreateNodes("$initNodes", "node-default.yaml", ZONE, ("zone1",)), *_IN_NS),
            _sizes(
                ("5Nodes", (5, 5, 10), SHORT, 0),
                ("500Nodes", (500, 500, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 1000), PERF_SHORT, 0),
                ("5000Nodes_5000Pods", (5000, 5000, 5000), PERF, 35),
            ),
            default_pod_template="pod-with-pod-affinity.yaml",
        ),
        TestCase(
            "SchedulingPreferredPodAffinity",
            (_NODES, *_IN_NS),
            _sizes(
                ("5Nodes", (5, 5, 10), SHORT, 0),
                ("500Nodes", (500, 500, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 1000), PERF, 0),
                ("5000Nodes_5000Pods", (5000, 5000, 5000), PERF, 90),
            ),
            default_pod_template="pod-with-preferred-pod-affinity.yaml",
        ),
        TestCase(
            "SchedulingPreferredPodAntiAffinity",
            (_NODES, *_IN_NS),
            _sizes(
                ("5Nodes", (5, 5, 10), SHORT, 0),
                ("500Nodes", (500, 500, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 1000), PERF_SHORT, 0),
                ("5000Nodes_5000Pods", (5000, 5000, 5000), PERF, 90),
            ),
            default_pod_template="pod-with-preferred-pod-anti-affinity.yaml",
        ),
        TestCase(
            "SchedulingNodeAffinity",
            (CreateNodes("$initNodes", "node-default.yaml", ZONE, ("zone1",)), _INIT, _MEASURE),
            _sizes(
                ("5Nodes", (5, 5, 10), SHORT, 0),
                ("500Nodes", (500, 500, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 1000), PERF_SHORT, 0),
                ("5000Nodes_10000Pods", (5000, 5000, 10000), PERF, 220),
            ),
            default_pod_template="pod-with-node-affinity.yaml",
        ),
        TestCase(
            "SchedulingSecrets",
            (_NODES, _INIT, _MEASURE),
            _sizes(
                ("5Nodes", (5, 5, 10), SHORT, 0),
                ("500Nodes", (500, 500, 1000), PERF_SHORT, 0),
                ("5000Nodes", (5000, 5000, 1000), PERF_SHORT, 0),
                ("5000Nodes_10000Pods", (5000, 5000, 10000), PERF, 260),
            ),
            default_pod_template="pod-with-secret-volume.yaml",
        ),
        TestCase(
            "MixedSchedulingBasePod",
            (
                CreateNodes("$initNodes", "node-default.yaml", ZONE, ("zone1",)),
                CreateNamespaces("sched", 1),
                *(
                    CreatePods("$initPods", template, namespace="sched-0")
                    for template in (
                        "pod-default.yaml",
                        "pod-with-pod-affinity.yaml",
                        "pod-with-pod-anti-affinity.yaml",
                        "pod-with-preferred-pod-affinity.yaml",
                        "pod-with-preferred-pod-anti-affinity.yaml",
                    )
                ),
                _MEASURE,
            ),
            _sizes(
                ("5Nodes", (5, 2, 10), SHORT, 0),
                ("500Nodes", (500, 200, 1000), (), 0),
                ("5000Nodes", (5000, 2000, 1000), PERF, 0),
                ("5000Nodes_5000Pods", (5000, 2000, 5000), PERF, 140),
            ),
        ),
        TestCase(
            "TopologySpreading",
            (
                CreateNodes("$initNodes", "node-default.yaml", ZONE, MOONS),
                CreatePods("$initPods", "pod-default.yaml"),
                CreatePods("$measurePods", "pod-with-topology-spreading.yaml", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (5, 10, 10), SHORT, 0),
                ("500Nodes", (500, 1000, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 2000), PERF_SHORT, 0),
                ("5000Nodes_5000Pods", (5000, 5000, 5000), PERF, 460),
            ),
        ),
        TestCase(
            "PreferredTopologySpreading",
            (
                CreateNodes("$initNodes", "node-default.yaml", ZONE, MOONS),
                CreatePods("$initPods", "pod-default.yaml"),
                CreatePods("$measurePods", "pod-with-preferred-topology-spreading.yaml", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (5, 10, 10), SHORT, 0),
                ("500Nodes", (500, 1000, 1000), (), 0),
                ("5000Nodes", (5000, 5000, 2000), PERF, 0),
                ("5000Nodes_5000Pods", (5000, 5000, 5000), PERF, 340),
            ),
        ),
        TestCase(
            "SchedulingWithNodeInclusionPolicy",
            (
                CreateNodes("$normalNodes"),
                CreateNodes("$taintNodes", "node-with-taint.yaml"),
                CreatePods("$measurePods", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (1, 4, 4), SHORT, 0),
                ("500Nodes", (100, 400, 400), (), 0),
                ("5000Nodes", (1000, 4000, 4000), PERF, 270),
                keys=("taintNodes", "normalNodes", "measurePods"),
            ),
            default_pod_template="pod-with-node-inclusion-policy.yaml",
        ),
        TestCase(
            "SchedulingDaemonset",
            (
                CreateNodes(1, "node-with-name.yaml"),
                CreateNodes("$initNodes", "node-default.yaml"),
                CreatePods("$measurePods", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (5, 10), SHORT, 0),
                ("15000Nodes", (15000, 30000), PERF, 1100),
                keys=("initNodes", "measurePods"),
            ),
            default_pod_template="daemonset-pod.yaml",
        ),
        TestCase(
            "PreemptionBasic",
            (
                _NODES,
                CreatePods("$initPods", "pod-low-priority.yaml"),
                CreatePods("$measurePods", "default_preemption/pod-high-priority.yaml", collect_metrics=True),
            ),
            _sizes(("5Nodes", (5, 20, 5), SHORT, 0), ("1000Nodes", (1000, 4000, 1000), PERF, 0)),
        ),
        TestCase(
            "PreemptionAsync",
            (
                _NODES,
                CreatePods("$initPods", "pod-low-priority.yaml"),
                Churn("create", ("default_preemption/pod-high-priority.yaml",), 0.2),
                CreatePods("$measurePods", "pod-default.yaml", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (5, 20, 5), SHORT, 0),
                ("500Nodes", (500, 2000, 500), PERF, 0),
                ("5000Nodes", (5000, 20000, 5000), PERF, 570),
            ),
        ),
        TestCase(
            "Unschedulable",
            (
                _NODES,
                _INIT,
                Churn("create", ("pod-high-priority-large-cpu.yaml",), 0.2),
                CreatePods("$measurePods", "pod-default.yaml", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes/1Init/10Pods", (5, 1, 10), SHORT, 0),
                ("500Nodes/10Init/1kPods", (500, 10, 1000), PERF, 0),
                ("5kNodes/100Init/1kPods", (5000, 100, 1000), PERF, 0),
                ("5kNodes/100Init/10kPods", (5000, 100, 10000), PERF, 590),
                ("5kNodes/20kInit/10kPods", (5000, 20000, 10000), PERF, 600),
            ),
        ),
        TestCase(
            "SchedulingWithMixedChurn",
            (
                _NODES,
                Churn(
                    "recreate",
                    ("churn/node-default.yaml", "pod-high-priority-large-cpu.yaml", "churn/service-default.yaml"),
                    1.0,
                    1,
                ),
                CreatePods("$measurePods", "pod-default.yaml", collect_metrics=True),
            ),
            _sizes(
                ("10Nodes", (10, 100), SHORT, 0),
                ("1000Nodes", (1000, 1000), (), 0),
                ("5000Nodes", (5000, 2000), (), 0),
                ("5000Nodes_10000Pods", (5000, 10000), PERF, 710),
                keys=("initNodes", "measurePods"),
            ),
        ),
        *(
            TestCase(
                name,
                (
                    CreateNodes("$initNodes", "", *zone),
                    CreateNamespaces("init-ns", "$initNamespaces", "namespace-with-labels.yaml"),
                    CreateNamespaces("measure-ns", 1, "namespace-with-labels.yaml"),
                    CreatePodSets("$initNamespaces", "init-ns", CreatePods("$initPodsPerNamespace")),
                    CreatePods("$measurePods", namespace="measure-ns-0", collect_metrics=True),
                ),
                _sizes(*rows, keys=("initNodes", "initPodsPerNamespace", "initNamespaces", "measurePods")),
                default_pod_template=template,
            )
            for name, template, zone, rows in (
                (
                    "SchedulingRequiredPodAntiAffinityWithNSSelector",
                    "pod-anti-affinity-ns-selector.yaml",
                    (),
                    (
                        ("10Nodes", (10, 2, 2, 6), SHORT, 0),
                        ("500Nodes", (500, 4, 10, 100), (), 0),
                        ("5000Nodes", (5000, 40, 100, 1000), PERF, 0),
                        ("5000Nodes_2000Pods", (6000, 40, 100, 2000), PERF, 24),  # 6,000 nodes, as upstream's
                    ),
                ),
                (
                    "SchedulingPreferredAntiAffinityWithNSSelector",
                    "pod-preferred-anti-affinity-ns-selector.yaml",
                    (),
                    (
                        ("10Nodes", (10, 2, 2, 10), SHORT, 0),
                        ("500Nodes", (500, 4, 10, 100), (), 0),
                        ("5000Nodes", (5000, 40, 100, 1000), PERF, 0),
                        ("5000Nodes_2000Pods", (5000, 40, 100, 2000), PERF, 55),
                    ),
                ),
                (
                    "SchedulingRequiredPodAffinityWithNSSelector",
                    "pod-affinity-ns-selector.yaml",
                    (ZONE, ("zone1",)),
                    (
                        ("10Nodes", (10, 2, 2, 10), SHORT, 0),
                        ("500Nodes", (500, 4, 10, 100), (), 0),
                        ("5000Nodes", (5000, 50, 100, 1000), PERF, 0),
                        ("5000Nodes_2000Pods", (5000, 50, 100, 2000), PERF, 35),
                    ),
                ),
                (
                    "SchedulingPreferredAffinityWithNSSelector",
                    "pod-preferred-affinity-ns-selector.yaml",
                    (),
                    (
                        ("10Nodes", (10, 2, 2, 10), SHORT, 0),
                        ("500Nodes", (500, 4, 10, 100), (), 0),
                        ("5000Nodes", (5000, 50, 100, 1000), (), 0),
                        ("5000Nodes_5000Pods", (5000, 50, 100, 5000), PERF, 90),
                    ),
                ),
            )
        ),
        TestCase(
            "SchedulingPodMatchingAntiAffinity",
            (
                _NODES,
                _SCHED_NS,
                CreatePods("$initPods", namespace="sched-0"),
                CreatePods(
                    "$measurePods", "pod-with-pod-anti-affinity-label.yaml", namespace="sched-1", collect_metrics=True
                ),
            ),
            (
                *_sizes(("5Nodes", (5, 1, 4), SHORT, 0), ("500Nodes", (500, 100, 400), (), 0)),
                Workload(
                    "5000Nodes_5000Pods",
                    {"initNodes": 5000, "initPods": 1000, "measurePods": 5000},
                    PERF,
                    543,
                    note="threshold of the QueueingHints twin (upstream's other twin: 595)",
                ),
            ),
            default_pod_template="pod-with-pod-anti-affinity.yaml",
        ),
        TestCase(
            "SchedulingGatedPodsWithPodAffinityImpactForThroughput",
            (
                CreateNodes(1, "node-with-name.yaml"),
                CreatePods("$gatedPods", "gated-pod-with-pod-affinity.yaml", skip_wait=True),
                Barrier(ATTEMPTED),
                CreatePods("$measurePods", collect_metrics=True),
            ),
            _sizes(
                ("1Node_10GatedPods", (10, 10), SHORT, 0),
                ("1Node_10000GatedPods", (10000, 20000), PERF, 110),
                keys=("gatedPods", "measurePods"),
            ),
            default_pod_template="pod-with-label.yaml",
        ),
        TestCase(
            "SchedulingWhileGated",
            (
                CreateNodes(1, "node-with-name.yaml"),
                CreatePods("$gatedPods", "gated-pod.yaml", skip_wait=True),
                Barrier(ATTEMPTED),
                CreatePods("$deletingPods"),
                DeletePods("namespace-3", 50, skip_wait=True),
                CreatePods("$measurePods", collect_metrics=True),
            ),
            _sizes(
                ("1Node_10GatedPods", (10, 10, 10), SHORT, 0),
                ("1Node_10000GatedPods", (10000, 20000, 20000), PERF, 910),
                keys=("gatedPods", "deletingPods", "measurePods"),
            ),
            default_pod_template="light-pod.yaml",
        ),
        TestCase(
            "SchedulingDeletedPodsWithFinalizers",
            (
                _NODES,
                CreatePods("$deletingPods", "pod-with-finalizer.yaml", skip_wait=True),
                DeletePods("namespace-1", 100, skip_wait=True),
                CreatePods("$measurePods", collect_metrics=True),
            ),
            _sizes(
                ("10Node_100DeletingPods", (10, 10, 10), SHORT, 0),
                ("1000Node_1000DeletingPods", (1000, 1000, 1000), (), 0),
                ("5000Node_5000DeletingPods", (5000, 5000, 5000), PERF, 830),
                keys=("initNodes", "deletingPods", "measurePods"),
            ),
            default_pod_template="light-pod.yaml",
        ),
        TestCase(
            "DefaultTopologySpreading",
            (
                CreateNodes("$initNodes", "node-default.yaml", ZONE, MOONS),
                CreateAny("service.yaml", namespace="service-ns"),
                CreatePods("$initPods", "pod-default.yaml"),
                CreatePods("$measurePods", "pod-with-label.yaml", namespace="service-ns", collect_metrics=True),
            ),
            _sizes(
                ("5Nodes", (5, 10, 10), SHORT, 0),
                ("500Nodes", (500, 1000, 1000), (), 0),
                ("5000Nodes_10000Pods", (5000, 5000, 10000), PERF, 0),
                ("5000Nodes_50000Pods", (5000, 5000, 50000), PERF, 160),
            ),
        ),
    )
}

NOT_REPRODUCED: dict[str, str] = {
    "PreemptionPVs": "persistent volumes and claims (no volume binding in kubesched)",
    "SchedulingInTreePVs": "persistent volumes (no volume binding in kubesched)",
    "SchedulingMigratedInTreePVs": "persistent volumes and CSI migration (no volume binding in kubesched)",
    "SchedulingCSIPVs": "CSI persistent volumes (no volume binding in kubesched)",
    "SchedulingWithExtendedResource": "DRA extended resources (DeviceClasses and ResourceSlices are not modelled)",
    "PreemptionPodGroupDisruptionMode": "alpha pod groups (GenericWorkload) are not modelled",
}


@dataclass(frozen=True)
class Selected:
    """A test case and one of its workloads, sizes overridden by `params`."""

    case: TestCase
    workload: Workload
    params: dict[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.case.name}/{self.workload.name}"

    def count(self, value: Count) -> int:
        if isinstance(value, int):
            return value
        return self.params[value.removeprefix("$")]


def select(name: str, overrides: dict[str, int] | None = None) -> Selected:
    """`TestCase/Workload` (or a test case alone: its first performance workload). KeyError with a
    one-line reason for a name that is not a workload."""
    case_name, _, workload_name = name.partition("/")
    case = CASES.get(case_name)
    if case is None:
        why = NOT_REPRODUCED.get(case_name)
        raise KeyError(f"{case_name}: not reproduced: {why}" if why else f"{case_name}: no such test case")
    if not workload_name:
        chosen = next((w for w in case.workloads if w.threshold), case.workloads[-1])
    else:
        try:
            chosen = case.workload(workload_name)
        except KeyError:
            known = ", ".join(w.name for w in case.workloads)
            raise KeyError(f"{case_name}: no workload {workload_name!r} (it has {known})") from None
    params = dict(chosen.params)
    for key, value in (overrides or {}).items():
        if key not in params:
            raise KeyError(f"--param {key}: {case.name}/{chosen.name} has {', '.join(params)}")
        params[key] = value
    return Selected(case, chosen, params)
