"""QueueingHint functions of the in-tree plugins (upstream v1.36.2 behaviour) and their hint keys."""

import copy
from typing import Any

import pytest
from lightkube.models import core_v1, meta_v1
from lightkube.models import resource_v1 as resource_models
from lightkube.resources import resource_v1

from builders import make_node, make_pod
from kubesched.framework.events import NODE, POD, ActionType, ClusterEvent, QueueingHint
from kubesched.plugins import (
    node_affinity,
    node_name,
    node_ports,
    node_unschedulable,
    scheduling_gates,
    taint_toleration,
)
from kubesched.plugins import noderesources_fit as fit

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP
GPU = "example.com/gpu"
DEVICE_CLASS = "resource.k8s.io/DeviceClass"


def pod(name: str = "p", uid: str | None = None, node: str | None = None, nominated: str | None = None, **req: Any):
    b = make_pod(name)
    if req:
        b.req(**req)
    if node:
        b.node(node)
    p = b.obj
    p.metadata.uid = uid or f"uid-{name}"
    if nominated:
        p.status = core_v1.PodStatus(nominatedNodeName=nominated)
    return p


def node(name: str = "n", labels: dict[str, str] | None = None, **capacity: Any):
    n = make_node(name).capacity(**capacity).obj if capacity else make_node(name).obj
    if labels is not None:
        n.metadata.labels = {**n.metadata.labels, **labels}
    return n


def changed(obj: Any, **spec: Any) -> Any:
    """A deep copy with `spec` fields replaced (labels via `labels=`)."""
    out = copy.deepcopy(obj)
    labels = spec.pop("labels", None)
    if labels is not None:
        out.metadata.labels = labels
    for field, value in spec.items():
        setattr(out.spec, field, value)
    return out


def hints_of(plugin: Any) -> dict[ClusterEvent, Any]:
    return {r.event: r.hint for r in plugin.events_to_register()}


# -- NodeResourcesFit -------------------------------------------------------------------------------


def fit_hint(resource: str, args: fit.Args | None = None) -> Any:
    return next(r.hint for r in fit.new(args, None).events_to_register() if r.event.resource == resource)


def test_fit_registers_its_hints() -> None:
    registered = hints_of(fit.new(None, None))
    assert list(registered) == [
        ClusterEvent(POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        ClusterEvent(DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE),
    ]
    assert all(h is not None for h in registered.values())
    plugin = fit.new(None, None)  # the key: the pod's requests
    assert plugin.hint_key(pod("a", cpu="1")) == plugin.hint_key(pod("b", cpu="1"))
    assert plugin.hint_key(pod("a", cpu="1")) != plugin.hint_key(pod("c", cpu="2"))


def _scaled(p: Any, **req: Any) -> Any:
    out = copy.deepcopy(p)
    out.spec.containers[0].resources = core_v1.ResourceRequirements(requests={k: str(v) for k, v in req.items()})
    return out


BOUND = pod("bound", node="n", cpu="2", memory="2Gi", **{GPU: 2})


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("unscheduled pod deleted", pod("other", cpu="2"), None, SKIP),
        ("bound pod deleted", BOUND, None, QUEUE),
        ("nominated pod deleted", pod("nom", nominated="n", cpu="2"), None, QUEUE),
        ("bound pod scaled down in cpu", BOUND, _scaled(BOUND, cpu="1", memory="2Gi", **{GPU: 2}), QUEUE),
        ("bound pod scaled down in memory only", BOUND, _scaled(BOUND, cpu="2", memory="1Gi", **{GPU: 2}), SKIP),
        ("bound pod scaled down in a scalar", BOUND, _scaled(BOUND, cpu="2", memory="2Gi", **{GPU: 1}), QUEUE),
        ("bound pod dropped the cpu request", BOUND, _scaled(BOUND, memory="2Gi", **{GPU: 2}), QUEUE),
        ("unscheduled pod scaled down", pod("u", cpu="2"), _scaled(pod("u", cpu="2"), cpu="1"), SKIP),
    ],
)
def test_fit_pod_event(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    target = pod("target", cpu="1", **{GPU: 1})
    assert fit_hint(POD)(target, old, new) == want


def test_fit_pod_scaled_down_itself_is_queued() -> None:
    target = pod("target", cpu="3", memory="1Gi")
    assert fit_hint(POD)(target, target, _scaled(target, cpu="2", memory="1Gi")) == QUEUE
    other = pod("other", cpu="3", memory="1Gi")  # same requests, another pod: unscheduled, no room freed
    assert fit_hint(POD)(other, target, _scaled(target, cpu="2", memory="1Gi")) == SKIP


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("too small node added", None, node(cpu="1", memory="4Gi", pods=10), SKIP),
        ("big enough node added", None, node(cpu="4", memory="4Gi", pods=10), QUEUE),
        ("node added with no pod room", None, node(cpu="4", memory="4Gi", pods=0), SKIP),
        ("grew but still too small", node(cpu="1", memory="4Gi"), node(cpu="1500m", memory="4Gi"), SKIP),
        ("grew in cpu and now fits", node(cpu="1", memory="4Gi"), node(cpu="4", memory="4Gi"), QUEUE),
        ("fits, but only memory grew (not requested)", node(cpu="4", memory="1Gi"), node(cpu="4", memory="4Gi"), SKIP),
        ("fits, pod count grew", node(cpu="4", memory="4Gi", pods=1), node(cpu="4", memory="4Gi", pods=2), QUEUE),
        ("fits, nothing grew", node(cpu="4", memory="4Gi"), node(cpu="4", memory="4Gi"), SKIP),
    ],
)
def test_fit_node_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    assert fit_hint(NODE)(pod("p", cpu="2"), old, new) == want


def test_fit_node_change_scalar_resources() -> None:
    wants_gpu = pod("p", cpu="1", **{GPU: 2})
    assert fit_hint(NODE)(wants_gpu, None, node(cpu="4", **{GPU: 1})) == SKIP
    assert fit_hint(NODE)(wants_gpu, None, node(cpu="4", **{GPU: 2})) == QUEUE
    assert fit_hint(NODE)(wants_gpu, node(cpu="4", **{GPU: 1}), node(cpu="4", **{GPU: 2})) == QUEUE
    # Upstream's check ignores the plugin's ignoredResources: a node without the resource never fits.
    ignoring = fit.Args(ignored_resources=[GPU])
    assert fit_hint(NODE, ignoring)(wants_gpu, None, node(cpu="4")) == SKIP


def device_class(name: str, extended: str | None = None) -> Any:
    return resource_v1.DeviceClass(
        metadata=meta_v1.ObjectMeta(name=name), spec=resource_models.DeviceClassSpec(extendedResourceName=extended)
    )


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("class added for the implicit resource", None, device_class("gpus"), QUEUE),
        ("class added naming the requested resource", None, device_class("c", GPU), QUEUE),
        ("unrelated class added", None, device_class("c", "example.com/fpga"), SKIP),
        ("update keeping the resource name", device_class("c", GPU), device_class("c", GPU), SKIP),
        ("update to the requested resource", device_class("c"), device_class("c", GPU), QUEUE),
        ("update to another resource", device_class("c", GPU), device_class("c", "example.com/fpga"), SKIP),
    ],
)
def test_fit_device_class_event(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    target = pod("p", **{GPU: 1, "deviceclass.resource.kubernetes.io/gpus": 1})
    assert fit_hint(DEVICE_CLASS)(target, old, new) == want


# -- TaintToleration ----------------------------------------------------------------------------------


def taint(key: str, effect: str = "NoSchedule") -> core_v1.Taint:
    return core_v1.Taint(key=key, value="v", effect=effect)


def tainted(*taints: core_v1.Taint) -> Any:
    n = node()
    n.spec.taints = list(taints) or None
    return n


def tolerating(name: str, *keys: str, uid: str | None = None) -> Any:
    p = pod(name, uid=uid)
    p.spec.tolerations = [core_v1.Toleration(key=k, operator="Exists") for k in keys] or None
    return p


def test_taint_toleration_registers_its_hints() -> None:
    plugin = taint_toleration.TaintToleration()
    registered = hints_of(plugin)
    assert list(registered) == [
        ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
        ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION),
    ]
    assert all(h is not None for h in registered.values())
    tolerating = pod("b")
    tolerating.spec.tolerations = [core_v1.Toleration(operator="Exists")]
    assert plugin.hint_key(pod("a")) == plugin.hint_key(pod("c")) != plugin.hint_key(tolerating)


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("untainted node added", None, tainted(), QUEUE),
        ("node added with an untolerated taint", None, tainted(taint("a")), SKIP),
        ("node added with a tolerated taint", None, tainted(taint("ok")), QUEUE),
        ("node added with a PreferNoSchedule taint", None, tainted(taint("a", "PreferNoSchedule")), QUEUE),
        ("untolerated taint removed", tainted(taint("a")), tainted(), QUEUE),
        ("NoExecute taint removed", tainted(taint("a", "NoExecute")), tainted(), QUEUE),
        ("one of two untolerated taints removed", tainted(taint("a"), taint("b")), tainted(taint("b")), SKIP),
        ("tolerated taint added", tainted(), tainted(taint("ok")), SKIP),
        ("untolerated taint added", tainted(), tainted(taint("a")), SKIP),
        ("untolerated taint replaced by a tolerated one", tainted(taint("a")), tainted(taint("ok")), QUEUE),
    ],
)
def test_taint_toleration_node_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    registered = hints_of(taint_toleration.TaintToleration())
    hint = registered[ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)]
    assert hint(tolerating("p", "ok"), old, new) == want


def test_taint_toleration_pod_toleration_change() -> None:
    hint = hints_of(taint_toleration.TaintToleration())[ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION)]
    queued = tolerating("p")
    assert hint(queued, queued, tolerating("p", "a", uid=queued.metadata.uid)) == QUEUE
    assert hint(queued, tolerating("other"), tolerating("other", "a")) == SKIP


# -- NodeAffinity --------------------------------------------------------------------------------------


def affinity_pod(name: str = "p", selector: dict[str, str] | None = None, **required: list[str]) -> Any:
    """A pod with a nodeSelector and, per keyword, a required `key In values` term (ANDed)."""
    p = pod(name)
    p.spec.nodeSelector = selector
    if required:
        term = core_v1.NodeSelectorTerm(
            matchExpressions=[
                core_v1.NodeSelectorRequirement(key=k, operator="In", values=v) for k, v in required.items()
            ]
        )
        p.spec.affinity = core_v1.Affinity(
            nodeAffinity=core_v1.NodeAffinity(
                requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(nodeSelectorTerms=[term])
            )
        )
    return p


def affinity_hint(plugin: node_affinity.NodeAffinity | None = None) -> Any:
    (registration,) = (plugin or node_affinity.NodeAffinity()).events_to_register()
    assert registration.event == ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
    return registration.hint


@pytest.mark.parametrize(
    ("name", "p", "old", "new", "want"),
    [
        ("unconstrained pod, node added", affinity_pod(), None, node(), QUEUE),
        ("matching node added", affinity_pod(selector={"zone": "a"}), None, node(labels={"zone": "a"}), QUEUE),
        ("non-matching node added", affinity_pod(selector={"zone": "a"}), None, node(labels={"zone": "b"}), SKIP),
        (
            "labels changed to match",
            affinity_pod(selector={"zone": "a"}),
            node(labels={"zone": "b"}),
            node(labels={"zone": "a"}),
            QUEUE,
        ),
        (
            "labels changed, matched already",
            affinity_pod(selector={"zone": "a"}),
            node(labels={"zone": "a"}),
            node(labels={"zone": "a", "x": "y"}),
            SKIP,
        ),
        (
            "labels changed, still no match",
            affinity_pod(selector={"zone": "a"}),
            node(labels={"zone": "b"}),
            node(labels={"zone": "c"}),
            SKIP,
        ),
        ("required affinity matches new node", affinity_pod(disk=["ssd"]), None, node(labels={"disk": "ssd"}), QUEUE),
        ("required affinity does not match", affinity_pod(disk=["ssd"]), None, node(labels={"disk": "hdd"}), SKIP),
        (
            "affinity label added",
            affinity_pod(disk=["ssd", "nvme"]),
            node(),
            node(labels={"disk": "nvme"}),
            QUEUE,
        ),
        (
            "selector matches but affinity does not",
            affinity_pod(selector={"zone": "a"}, disk=["ssd"]),
            None,
            node(labels={"zone": "a"}),
            SKIP,
        ),
    ],
)
def test_node_affinity_node_change(name: str, p: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert affinity_hint()(p, old, new) == want


def test_node_affinity_takes_added_affinity_into_account() -> None:
    added = core_v1.NodeAffinity(
        requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(
            nodeSelectorTerms=[
                core_v1.NodeSelectorTerm(
                    matchExpressions=[core_v1.NodeSelectorRequirement(key="pool", operator="In", values=["batch"])]
                )
            ]
        )
    )
    hint = affinity_hint(node_affinity.NodeAffinity(node_affinity.NodeAffinityArgs(addedAffinity=added)))
    p = affinity_pod(selector={"zone": "a"})
    assert hint(p, None, node(labels={"zone": "a"})) == SKIP  # the profile's affinity is not met
    assert hint(p, None, node(labels={"zone": "a", "pool": "batch"})) == QUEUE
    assert hint(p, node(labels={"zone": "a"}), node(labels={"zone": "a", "pool": "batch"})) == SKIP  # matched before


def test_node_affinity_match_fields() -> None:
    p = pod("p")
    term = core_v1.NodeSelectorTerm(
        matchFields=[core_v1.NodeSelectorRequirement(key="metadata.name", operator="In", values=["n1"])]
    )
    p.spec.affinity = core_v1.Affinity(
        nodeAffinity=core_v1.NodeAffinity(
            requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(nodeSelectorTerms=[term])
        )
    )
    assert affinity_hint()(p, None, node("n1")) == QUEUE
    assert affinity_hint()(p, None, node("n2")) == SKIP


def test_node_affinity_malformed_term_is_an_error() -> None:
    p = affinity_pod(selector={"zone": "a"})
    bad = core_v1.NodeSelectorTerm(
        matchExpressions=[core_v1.NodeSelectorRequirement(key="disk", operator="Bogus", values=["x"])]
    )
    p.spec.affinity = core_v1.Affinity(
        nodeAffinity=core_v1.NodeAffinity(
            requiredDuringSchedulingIgnoredDuringExecution=core_v1.NodeSelector(nodeSelectorTerms=[bad])
        )
    )
    with pytest.raises(ValueError):  # upstream returns an error: the queue requeues
        affinity_hint()(p, None, node(labels={"zone": "a"}))
    assert affinity_hint()(p, None, node(labels={"zone": "b"})) == SKIP  # the nodeSelector decides first


# -- NodeName ------------------------------------------------------------------------------------------


def test_node_name_has_no_hint() -> None:
    registered = hints_of(node_name.NodeName())
    assert registered == {ClusterEvent(NODE, ActionType.ADD): None}


# -- NodeUnschedulable -------------------------------------------------------------------------------


def cordoned(flag: bool) -> Any:
    n = node()
    n.spec.unschedulable = flag
    return n


@pytest.mark.parametrize(
    ("name", "old", "new", "want"),
    [
        ("schedulable node added", None, cordoned(False), QUEUE),
        ("cordoned node added", None, cordoned(True), SKIP),
        ("node uncordoned", cordoned(True), cordoned(False), QUEUE),
        ("node cordoned", cordoned(False), cordoned(True), SKIP),
        ("node stays cordoned", cordoned(True), cordoned(True), SKIP),
        ("node stays schedulable", cordoned(False), cordoned(False), SKIP),
    ],
)
def test_node_unschedulable_node_change(name: str, old: Any, new: Any, want: QueueingHint) -> None:
    plugin = node_unschedulable.NodeUnschedulable()
    hint = hints_of(plugin)[ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)]
    assert hint(pod(), old, new) == want


def test_node_unschedulable_pod_toleration_change() -> None:
    plugin = node_unschedulable.NodeUnschedulable()
    assert plugin.hint_key(pod("a")) == plugin.hint_key(pod("b"))
    hint = hints_of(plugin)[ClusterEvent(POD, ActionType.UPDATE_POD_TOLERATION)]
    queued = tolerating("p")
    uid = queued.metadata.uid
    assert hint(queued, queued, tolerating("p", "node.kubernetes.io/unschedulable", uid=uid)) == QUEUE
    assert hint(queued, queued, tolerating("p", "something-else", uid=uid)) == SKIP
    assert hint(queued, tolerating("other"), tolerating("other", "node.kubernetes.io/unschedulable")) == SKIP


# -- NodePorts -----------------------------------------------------------------------------------------


def with_ports(p: Any, *ports: tuple[str | None, str | None, int]) -> Any:
    p.spec.containers[0].ports = [
        core_v1.ContainerPort(containerPort=port, hostPort=port, hostIP=ip, protocol=proto) for ip, proto, port in ports
    ]
    return p


def ports_hint() -> Any:
    registered = hints_of(node_ports.NodePorts())
    assert registered[ClusterEvent(NODE, ActionType.ADD)] is None  # a new node always requeues
    return registered[ClusterEvent(POD, ActionType.DELETE)]


@pytest.mark.parametrize(
    ("name", "deleted", "want"),
    [
        ("unscheduled pod with the port deleted", with_ports(pod("d"), (None, "TCP", 80)), SKIP),
        ("bound pod without host ports deleted", pod("d", node="n"), SKIP),
        ("bound pod with the port deleted", with_ports(pod("d", node="n"), (None, "TCP", 80)), QUEUE),
        ("nominated pod with the port deleted", with_ports(pod("d", nominated="n"), (None, "TCP", 80)), QUEUE),
        ("bound pod with another port deleted", with_ports(pod("d", node="n"), (None, "TCP", 81)), SKIP),
        ("bound pod with another protocol deleted", with_ports(pod("d", node="n"), (None, "UDP", 80)), SKIP),
        ("bound pod on a specific IP deleted", with_ports(pod("d", node="n"), ("10.0.0.1", "TCP", 80)), QUEUE),
    ],
)
def test_node_ports_pod_deleted(name: str, deleted: Any, want: QueueingHint) -> None:
    queued = with_ports(pod("p"), (None, None, 80))
    assert ports_hint()(queued, deleted, None) == want


# -- SchedulingGates ---------------------------------------------------------------------------------


def test_scheduling_gates_hint() -> None:
    plugin = scheduling_gates.SchedulingGates()
    assert plugin.hint_key(pod("a")) == plugin.hint_key(pod("b"))
    hint = hints_of(plugin)[ClusterEvent(POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)]
    queued = make_pod("p").gates("g").obj
    queued.metadata.uid = "uid-p"
    ungated = changed(queued, schedulingGates=None)
    assert hint(queued, queued, ungated) == QUEUE
    other = pod("other")
    assert hint(queued, changed(other, schedulingGates=[core_v1.PodSchedulingGate(name="g")]), other) == SKIP


# -- hint keys -----------------------------------------------------------------------------------------


def test_node_affinity_equal_keys_give_equal_hints() -> None:
    plugin = node_affinity.NodeAffinity()
    a = affinity_pod("a", selector={"zone": "a"}, disk=["ssd"])
    b = affinity_pod("b", selector={"zone": "a"}, disk=["ssd"])
    b.metadata.labels = {"app": "other"}
    b.spec.containers[0].resources = core_v1.ResourceRequirements(requests={"cpu": "3"})
    c = affinity_pod("c", selector={"zone": "b"}, disk=["ssd"])
    assert plugin.hint_key(a) == plugin.hint_key(b)
    assert plugin.hint_key(a) != plugin.hint_key(c)
    assert plugin.hint_key(affinity_pod("x")) == plugin.hint_key(affinity_pod("y", selector={}))
    hint = affinity_hint(plugin)
    events = [
        (None, node(labels={"zone": "a", "disk": "ssd"})),
        (None, node(labels={"zone": "a"})),
        (node(labels={"zone": "a"}), node(labels={"zone": "a", "disk": "ssd"})),
        (node(labels={"zone": "a", "disk": "ssd"}), node(labels={"zone": "a", "disk": "ssd", "x": "y"})),
    ]
    assert [hint(a, old, new) for old, new in events] == [hint(b, old, new) for old, new in events]
    assert [hint(a, old, new) for old, new in events] == [QUEUE, SKIP, QUEUE, SKIP]


def test_node_ports_equal_keys_give_equal_hints() -> None:
    plugin = node_ports.NodePorts()
    a = with_ports(pod("a"), (None, "TCP", 80), (None, "UDP", 53))
    b = with_ports(pod("b", cpu="1"), (None, "UDP", 53), ("0.0.0.0", "TCP", 80))  # same ports, another order
    assert plugin.hint_key(a) == plugin.hint_key(b)
    assert plugin.hint_key(a) != plugin.hint_key(with_ports(pod("c"), (None, "TCP", 80)))
    hint = ports_hint()
    deleted = [
        with_ports(pod("d1", node="n"), (None, "TCP", 80)),
        with_ports(pod("d2", node="n"), (None, "UDP", 80)),
        with_ports(pod("d3", node="n"), (None, "UDP", 53)),
        with_ports(pod("d4"), (None, "TCP", 80)),
    ]
    assert [hint(a, d, None) for d in deleted] == [hint(b, d, None) for d in deleted]
    assert [hint(a, d, None) for d in deleted] == [QUEUE, SKIP, QUEUE, SKIP]
