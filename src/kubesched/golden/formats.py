"""The corpus's two formats (its README): a case's input in the compact form (§1) and its
expected outcome (§2; the table case's, §3), which the runner reports in the same shape."""

from __future__ import annotations

from typing import Required, TypedDict

Quantity = str | int  # a quantity string, or an integer


# -- input (`NAME.input.yaml`) -------------------------------------------------------------------


class NamespaceInput(TypedDict, total=False):
    name: Required[str]
    labels: dict[str, str]


class PriorityClassInput(TypedDict, total=False):
    name: Required[str]
    value: Required[int]
    globalDefault: bool
    preemptionPolicy: str
    description: str


class BudgetInput(TypedDict, total=False):
    name: Required[str]
    namespace: str
    selector: dict[str, object]  # a LabelSelector
    minAvailable: int | str
    maxUnavailable: int | str
    disruptionsAllowed: int


class NodeInput(TypedDict, total=False):
    name: Required[str]
    labels: dict[str, str]
    annotations: dict[str, str]
    taints: list[dict[str, object]]  # v1 Taints
    allocatable: dict[str, Quantity]
    capacity: dict[str, Quantity]
    unschedulable: bool
    images: list[dict[str, object]]  # v1 ContainerImages


class PodInput(TypedDict, total=False):
    name: Required[str]
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    nodeName: str
    requests: dict[str, Quantity]
    limits: dict[str, Quantity]
    priority: int
    priorityClassName: str
    preemptionPolicy: str
    nodeSelector: dict[str, str]
    tolerations: list[dict[str, object]]  # v1 Tolerations
    affinity: dict[str, object]  # a v1 Affinity
    topologySpreadConstraints: list[dict[str, object]]  # v1 TopologySpreadConstraints
    hostPorts: list[int]
    startTime: str  # RFC 3339
    spec: dict[str, object]  # a v1 PodSpec
    image: str
    schedulerName: str
    ownerReferences: list[dict[str, object]]  # v1 OwnerReferences
    nominatedNodeName: str
    phase: str


class CaseInput(TypedDict, total=False):
    description: str
    category: str
    percentageOfNodesToScore: int
    schedulerConfig: dict[str, object]  # a KubeSchedulerConfiguration
    namespaces: list[NamespaceInput]
    priorityClasses: list[PriorityClassInput]
    podDisruptionBudgets: list[BudgetInput]
    nodes: list[NodeInput]
    pods: list[PodInput]
    pod: PodInput
    nodeCounts: list[int]  # the table case's
    percentages: list[int]  # the table case's


# -- expected outcome (`NAME.expected.json`) ------------------------------------------------------


class StatusResult(TypedDict, total=False):
    code: Required[str]
    reasons: list[str]
    plugin: str
    stage: str


class ScoreResult(TypedDict):
    raw: int
    normalized: int
    weight: int
    weighted: int


class NodeResult(TypedDict, total=False):
    name: str
    snapshotIndex: int
    filter: StatusResult
    feasible: bool
    scored: bool
    scores: dict[str, ScoreResult]
    totalScore: int


class PreemptionResult(TypedDict):
    nominatedNodeName: str
    victims: list[str]


class TableRow(TypedDict):
    percentageOfNodesToScore: int
    numAllNodes: int
    numFeasibleNodesToFind: int


class CaseResult(TypedDict, total=False):
    """A scheduling case's outcome (§2), or the table case's (§3: name, category, description, rows)."""

    name: str
    category: str | None
    description: str | None
    profile: str
    config: str
    percentageOfNodesToScore: int
    scoreWeights: dict[str, int]
    numAllNodes: int
    preFilter: StatusResult
    numNodesAfterPreFilter: int
    numFeasibleNodesToFind: int
    preFilterResultNodes: list[str]
    nodes: list[NodeResult]
    skippedScorePlugins: list[str]
    scoringRunByScheduler: bool
    topNodes: list[str]
    selectedNode: str
    schedulable: bool
    evaluatedNodes: int
    feasibleNodes: int
    failureCode: str
    message: str
    postFilterMessage: str
    unschedulablePlugins: list[str]
    pendingPlugins: list[str]
    preemption: PreemptionResult
    events: list[str]
    rows: list[TableRow]
