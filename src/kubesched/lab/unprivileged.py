"""5.5.6 — stage 2, shape one: a Deployment nobody privileged. Against a live cluster whose API
server decides by RBAC (`kubesched cluster up --authorization rbac`): all of deploy/ applied as
the admin — namespace, ServiceAccount, roles and bindings, the ConfigMap, the Deployment and its
PodDisruptionBudget. The cluster's controllers make the Deployment's two pods; the fake kubelets
run no containers, so the lab starts what each pod's container declares: its command and args
(`$(POD_IP)` expanded to the loopback address), the configuration read from the ConfigMap its
volume mounts, and a token for the pod's ServiceAccount from the TokenRequest API (what the
kubelet projects into a pod) — and nothing else. The two replicas elect a leader on the Lease
deploy/'s configuration names; the leader must schedule everything a scheduler does — bind,
report a pod that fits nowhere, preempt — with exactly that RBAC, and a request outside it must be
refused with kube-apiserver's 403."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypedDict, TypeVar

import yaml
from lightkube.resources import apps_v1, coordination_v1, core_v1, scheduling_v1

import kubesched
from kubesched.api.objects import decoded, meta_of, name_of, present
from kubesched.api.quantity import milli_value
from kubesched.client import KubeCluster
from kubesched.cluster import AlreadyExists, ApiError, NotFound
from kubesched.console import options
from kubesched.lab.live import connect
from kubesched.lab.result import Check, LabResult
from kubesched.sim.nodes import HOSTNAME_LABEL
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.whatif.documents import listed, mapping
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.6", "Stage 2, shape one: a Deployment nobody privileged"
NAMESPACE = ACCOUNT = SCHEDULER = "kubesched"
HIGH = "lab-unprivileged-high"
WAIT = 30.0
RBAC_KINDS = {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
T = TypeVar("T")
Document = dict[str, object]  # an object of deploy/'s YAML, as read


class _Seen(TypedDict, total=False):
    """What the lab saw: where lab-fits and lab-urgent went (None: nowhere in time), lab-nowhere's
    FailedScheduling message, the node lab-urgent was pinned to, the Lease's holder, and the code
    and message a request outside the RBAC got."""

    fits: str | None
    urgent: str | None
    nowhere: str
    node: str
    holder: str
    denied: tuple[int, str]


def deploy_dir() -> Path:
    """deploy/ of the checkout kubesched runs from; UsageError when it is not there."""
    found = Path(kubesched.__file__).resolve().parents[2] / "deploy"
    if not (found / "10-rbac.yaml").is_file():
        raise options.UsageError(f"lab {ID} applies deploy/ of a kubesched checkout; none at {found}")
    return found


def _documents(path: Path) -> list[Document]:
    return [mapping(d, str(path)) for d in yaml.safe_load_all(path.read_text()) if d]


def _without(docs: list[Document], resource: str) -> list[Document]:
    """`docs` with every ClusterRole rule naming `resource` taken out."""
    out = []
    for d in docs:
        if d["kind"] == "ClusterRole":
            rules = [mapping(r, "a ClusterRole rule") for r in listed(d["rules"], "a ClusterRole's rules")]
            d = {**d, "rules": [r for r in rules if resource not in listed(r.get("resources", []), "its resources")]}
        out.append(d)
    return out


async def _apply(admin: KubeCluster, docs: list[Document]) -> None:
    """Create each object; RBAC objects already there are replaced, anything else kept."""
    for doc in docs:
        obj = decoded(doc)
        if doc["kind"] in RBAC_KINDS:
            with contextlib.suppress(NotFound):
                await admin.delete(type(obj), name_of(obj), namespace=meta_of(obj).namespace)
        with contextlib.suppress(AlreadyExists):
            await admin.create(obj)


async def _token(admin: KubeCluster, account: str = ACCOUNT) -> str:
    path = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{account}/token"
    body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}).encode()
    _, answer = await admin.transport.request("POST", path, body=body)
    return str(json.loads(answer)["status"]["token"])


def _kubeconfig_as(admin_kubeconfig: str, token: str, path: Path) -> Path:
    """The admin's kubeconfig with the ServiceAccount's token as its user."""
    config = yaml.safe_load(Path(admin_kubeconfig).read_text())
    for user in config.get("users", []):
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


async def _eventually(probe: Callable[[], Awaitable[T]], wait: float) -> T:
    deadline = time.monotonic() + wait
    while not (found := await probe()) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return found


async def _scenario(admin: KubeCluster, *, wait: float) -> _Seen:
    """A pod that fits, one that fits nowhere, and one that must preempt a pod on a node of its own."""
    nodes = (await admin.list(core_v1.Node)).items
    if not nodes:
        raise options.UsageError(f"lab {ID}: the cluster has no node")
    node = nodes[0]
    cpu = milli_value(node.status.allocatable["cpu"]) if node.status and node.status.allocatable else 1000
    most = f"{cpu * 6 // 10}m"
    with contextlib.suppress(AlreadyExists):
        await admin.create(decoded(_priority_class()))
    pinned = {"nodeSelector": {HOSTNAME_LABEL: name_of(node)}}
    await admin.create(make_pod("lab-filler", {"cpu": most}, nodeName=name_of(node)))
    await admin.create(make_pod("lab-fits", {"cpu": "10m"}, schedulerName=SCHEDULER))
    await admin.create(make_pod("lab-nowhere", {"cpu": "100000"}, schedulerName=SCHEDULER))
    await admin.create(make_pod("lab-urgent", {"cpu": most}, schedulerName=SCHEDULER, priorityClassName=HIGH, **pinned))

    async def node_of(name: str) -> str | None:
        pod = await admin.get(core_v1.Pod, name, namespace="default")
        return pod.spec.nodeName if pod.spec else None

    async def refused() -> str:
        events = (await admin.list(core_v1.Event, namespace="default")).items
        return next(
            (
                e.message or ""
                for e in events
                if e.involvedObject.name == "lab-nowhere" and e.reason == "FailedScheduling"
            ),
            "",
        )

    fits, urgent, nowhere = await asyncio.gather(
        _eventually(lambda: node_of("lab-fits"), wait),
        _eventually(lambda: node_of("lab-urgent"), wait),
        _eventually(refused, wait),
    )
    return {"fits": fits, "urgent": urgent, "nowhere": nowhere, "node": name_of(node)}


async def _replicas(admin: KubeCluster, deployment: Document, *, wait: float) -> list[core_v1.Pod]:
    """The pods the controllers made for `deployment`, once there are as many as it asks for."""
    spec = mapping(deployment["spec"], "the Deployment's spec")
    labels = mapping(mapping(spec["selector"], "its selector")["matchLabels"], "its selector's labels")
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    wanted = _replicas_of(deployment, default=1)

    async def made() -> list[core_v1.Pod]:
        pods = (await admin.list(core_v1.Pod, namespace=NAMESPACE, label_selector=selector)).items
        return pods if len(pods) >= wanted else []

    pods = await _eventually(made, wait)
    if not pods:
        raise options.UsageError(f"lab {ID}: the Deployment's pods were not made within {wait:g} s (controllers off?)")
    return sorted(pods, key=name_of)[:wanted]


def _replicas_of(deployment: Document, *, default: int | None = None) -> int:
    """The replicas the Deployment asks for (`default` when it does not say)."""
    replicas = mapping(deployment["spec"], "the Deployment's spec").get("replicas", default)
    if not isinstance(replicas, int | str):
        raise TypeError(f"the Deployment's replicas: {replicas!r}")
    return int(replicas)


def _expand(arg: str, env: dict[str, str]) -> str:
    """`$(NAME)` references in a container argument, expanded as the kubelet does."""
    for name, value in env.items():
        arg = arg.replace(f"$({name})", value)
    return arg


def container_command(pod: core_v1.Pod, config_dir: Path, kubeconfig: Path) -> list[str]:
    """What the pod's first container runs, run here: its command and args, the config volume at
    `config_dir`, the pod's address the loopback one, each replica's endpoints on a port of its own,
    and the API server reached through `kubeconfig` (what in-cluster configuration gives a pod)."""
    container = present(pod.spec, "the pod's spec").containers[0]
    env = {e.name: "127.0.0.1" for e in container.env or () if e.valueFrom and e.valueFrom.fieldRef}
    mounts = {m.mountPath: config_dir for m in container.volumeMounts or () if m.name == "config"}
    args = [_expand(a, env) for a in [*(container.command or ())[1:], *(container.args or ())]]
    for mount, local in mounts.items():
        args = [a.replace(mount, str(local)) for a in args]
    args = ["127.0.0.1:0" if a.startswith("127.0.0.1:") else a for a in args]  # two replicas, one host
    return [sys.executable, "-m", "kubesched", *args, "--kubeconfig", str(kubeconfig)]


async def _lease_holder(admin: KubeCluster) -> str:
    with contextlib.suppress(ApiError):
        lease = await admin.get(coordination_v1.Lease, SCHEDULER, namespace=NAMESPACE)
        return str(lease.spec.holderIdentity or "") if lease.spec else ""
    return ""


def _priority_class() -> Document:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": HIGH}, "value": 1000}


async def _denied(cluster: KubeCluster) -> tuple[int, str]:
    """A request outside the ServiceAccount's RBAC: its code and message."""
    try:
        await cluster.list(core_v1.Secret, namespace=NAMESPACE)
    except ApiError as e:
        return e.code, str(e)
    return 200, ""


async def _clean(admin: KubeCluster) -> None:
    for name in ("lab-filler", "lab-fits", "lab-nowhere", "lab-urgent"):
        with contextlib.suppress(ApiError):
            await admin.delete(core_v1.Pod, name, namespace="default", grace_period_seconds=0)
    with contextlib.suppress(ApiError):
        await admin.delete(apps_v1.Deployment, "kubesched", namespace=NAMESPACE)
    for made in (await admin.list(apps_v1.ReplicaSet, namespace=NAMESPACE)).items:
        with contextlib.suppress(ApiError):
            await admin.delete(apps_v1.ReplicaSet, name_of(made), namespace=NAMESPACE)
    for pod in (await admin.list(core_v1.Pod, namespace=NAMESPACE)).items:
        with contextlib.suppress(ApiError):
            await admin.delete(core_v1.Pod, name_of(pod), namespace=NAMESPACE, grace_period_seconds=0)
    with contextlib.suppress(ApiError):
        await admin.delete(coordination_v1.Lease, SCHEDULER, namespace=NAMESPACE)
    with contextlib.suppress(ApiError):
        await admin.delete(scheduling_v1.PriorityClass, HIGH)


def run(*, seed: int = 1, kubeconfig: str, drop: str = "", wait: float = WAIT) -> LabResult:
    """deploy/ against the RBAC cluster of `kubeconfig` (its admin's), and the Deployment's
    replicas run as their pods declare, given `wait` seconds to do each thing. With `drop` naming a
    resource (`pods/binding`), the ClusterRole loses the rules that grant it, which makes the
    claim false. `seed` is unused."""
    deploy = deploy_dir()
    rbac = [*_documents(deploy / "00-namespace.yaml"), *_documents(deploy / "10-rbac.yaml")]
    workload = [*_documents(deploy / "20-config.yaml"), *_documents(deploy / "30-deployment.yaml")]
    workload += _documents(deploy / "40-poddisruptionbudget.yaml")
    deployment = next(d for d in workload if d["kind"] == "Deployment")
    with tempfile.TemporaryDirectory() as directory:
        here = Path(directory)
        applied = [*(_without(rbac, drop) if drop else rbac), *workload]
        try:
            commands = asyncio.run(_replica_commands(kubeconfig, here, applied, deployment, wait=wait))
        except BaseException:
            if drop:
                asyncio.run(_restore(kubeconfig, rbac))
            raise
        processes = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in commands]
        try:
            seen = asyncio.run(_perform(kubeconfig, str(here / "replica-0.kubeconfig"), wait=wait))
        finally:
            output = _stopped(processes)
        if drop:  # put deploy/'s RBAC back as it is
            asyncio.run(_restore(kubeconfig, rbac))
    return _result(len(commands), seen, output, replicas=_replicas_of(deployment), drop=drop)


async def _replica_commands(
    kubeconfig: str, here: Path, documents: list[Document], deployment: Document, *, wait: float
) -> list[list[str]]:
    """deploy/ applied as the admin and, once its replicas are placed, the command each would run
    in its container: its config mounted under `here`, its ServiceAccount's token in a kubeconfig."""
    admin = connect(kubeconfig)
    try:
        await _apply(admin, documents)
        commands = []
        for i, pod in enumerate(await _replicas(admin, deployment, wait=wait)):
            spec = present(pod.spec, "the pod's spec")
            volume = next(v for v in present(spec.volumes, "its volumes") if v.name == "config")
            mapped = present(present(volume.configMap, "its config volume's ConfigMap").name, "the ConfigMap's name")
            config = await admin.get(core_v1.ConfigMap, mapped, namespace=NAMESPACE)
            mounted = here / f"replica-{i}"
            mounted.mkdir()
            for key, value in (config.data or {}).items():
                (mounted / key).write_text(value)
            token = await _token(admin, present(spec.serviceAccountName, "its ServiceAccount"))
            as_account = _kubeconfig_as(kubeconfig, token, here / f"replica-{i}.kubeconfig")
            commands.append(container_command(pod, mounted, as_account))
        return commands
    except BaseException:  # the replicas never came: nothing of the lab's is left behind
        await _clean(admin)
        raise
    finally:
        await admin.close()


async def _perform(kubeconfig: str, as_account: str, *, wait: float) -> _Seen:
    """The lab's pods scheduled by the replicas, the Lease's holder, and a request outside the RBAC."""
    admin, account = connect(kubeconfig), connect(as_account)
    try:
        seen = await _scenario(admin, wait=wait)
        seen["holder"] = await _lease_holder(admin)
        seen["denied"] = await _denied(account)
        return seen
    finally:
        await _clean(admin)
        await admin.close()
        await account.close()


def _stopped(processes: list[subprocess.Popen[str]]) -> str:
    """What the replicas printed, once each is stopped (killed if it does not stop in 20 s)."""
    outputs = []
    for process in processes:
        process.terminate()
        try:
            outputs.append(process.communicate(timeout=20)[0])
        except subprocess.TimeoutExpired:
            process.kill()
            outputs.append(process.communicate()[0])
    return "\n".join(outputs)


def _result(ran: int, seen: _Seen, output: str, *, replicas: int, drop: str) -> LabResult:
    forbidden = [line for line in output.splitlines() if "forbidden" in line.lower()]
    code, message = seen["denied"]
    user = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
    steps = [
        Step(
            0.0,
            f"deploy/ applied as the admin{f', without the rules for {drop}' if drop else ''}: the Deployment's "
            f"{ran} pods run as {user}, each with a token of its own",
        ),
        Step(0.0, f"the Lease {NAMESPACE}/{SCHEDULER} is held by {seen['holder'] or 'nobody'}"),
        Step(0.0, f"kubesched run as {user}: lab-fits on {seen['fits']}", upstream=(cite("bind"),)),
        Step(
            0.0,
            f"lab-nowhere refused: {seen['nowhere'] or '(no FailedScheduling event)'}",
            upstream=(cite("FailedScheduling event"),),
        ),
        Step(0.0, f"lab-urgent preempted lab-filler and runs on {seen['urgent']}", upstream=(cite("PreemptPod"),)),
        Step(0.0, f"as {user}, list secrets in {NAMESPACE}: {code} {message}"),
    ]
    check = Check(
        claim="deploy/'s Deployment runs its replicas as its ServiceAccount; with exactly deploy/'s RBAC one of them "
        "holds the Lease and binds, reports and preempts, no request of theirs is refused, and a request outside "
        "that RBAC is refused with 403",
        evidence={
            "replicas": ran,
            "leaseHolder": seen["holder"],
            "fits": seen["fits"],
            "urgent": seen["urgent"],
            "nowhereReported": bool(seen["nowhere"]),
            "schedulerRefused": forbidden[:3],
            "outside": {"code": code, "message": message},
        },
        passed=ran == replicas
        and bool(seen["holder"])
        and bool(seen["fits"])
        and seen["urgent"] == seen["node"]
        and bool(seen["nowhere"])
        and not forbidden
        and code == 403
        and message.startswith(f'secrets is forbidden: User "{user}" cannot list resource "secrets"'),
    )
    return LabResult(ID, TITLE, steps, check)


async def _restore(kubeconfig: str, docs: list[Document]) -> None:
    admin = connect(kubeconfig)
    try:
        await _apply(admin, docs)
    finally:
        await admin.close()
