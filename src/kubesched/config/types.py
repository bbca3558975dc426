"""KubeSchedulerConfiguration (`kubescheduler.config.k8s.io/v1`) as msgspec structs: strict (an
unknown field is an error naming it), with upstream's field names."""

from __future__ import annotations

from typing import Any

import msgspec

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"


class _Strict(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    pass


class Plugin(_Strict):
    name: str
    weight: int | None = None


class PluginSet(_Strict):
    enabled: list[Plugin] = []
    disabled: list[Plugin] = []


class Plugins(_Strict):
    preEnqueue: PluginSet | None = None
    queueSort: PluginSet | None = None
    preFilter: PluginSet | None = None
    filter: PluginSet | None = None
    postFilter: PluginSet | None = None
    preScore: PluginSet | None = None
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    preBind: PluginSet | None = None
    bind: PluginSet | None = None
    postBind: PluginSet | None = None
    multiPoint: PluginSet | None = None


class PluginConfig(_Strict):
    name: str
    args: dict[str, Any] | None = None  # Any: as the file spells them (msgspec's schemas know Any, not object)


class Profile(_Strict):
    schedulerName: str | None = None
    percentageOfNodesToScore: int | None = None
    plugins: Plugins | None = None
    pluginConfig: list[PluginConfig] = []


class LeaderElection(_Strict):
    leaderElect: bool = True
    leaseDuration: str = "15s"
    renewDeadline: str = "10s"
    retryPeriod: str = "2s"
    resourceLock: str = "leases"
    resourceName: str = "kube-scheduler"
    resourceNamespace: str = "kube-system"


class ClientConnection(_Strict):
    kubeconfig: str = ""
    acceptContentTypes: str = ""
    contentType: str = "application/vnd.kubernetes.protobuf"
    qps: float = 50.0
    burst: int = 100


class Configuration(_Strict):
    apiVersion: str = API_VERSION
    kind: str = KIND
    parallelism: int = 16
    percentageOfNodesToScore: int | None = None
    podInitialBackoffSeconds: int = 1
    podMaxBackoffSeconds: int = 10
    enableProfiling: bool = True
    enableContentionProfiling: bool = True
    delayCacheUntilActive: bool = False
    leaderElection: LeaderElection = msgspec.field(default_factory=LeaderElection)
    clientConnection: ClientConnection = msgspec.field(default_factory=ClientConnection)
    profiles: list[Profile] = []
    extenders: list[dict[str, Any]] = []  # Any: as the file spells them (msgspec's schemas know Any, not object)
