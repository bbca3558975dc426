"""5.5.6 — stage 2, shape one: a Deployment nobody privileged. Against a live cluster whose API
server decides by RBAC (`kubesched cluster up --authorization rbac`): deploy/'s namespace,
ServiceAccount, roles and bindings applied as the admin; a token for the ServiceAccount from the
TokenRequest API (what `kubectl create token kubesched -n kubesched` asks); then `kubesched run`
with deploy/'s configuration and only that token. It must schedule everything a scheduler does —
bind, report a pod that fits nowhere, preempt — with exactly that RBAC, and a request outside it
must be refused with kube-apiserver's 403."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from lightkube import codecs
from lightkube.resources import coordination_v1, core_v1, scheduling_v1

import kubesched
from kubesched.api.quantity import milli_value
from kubesched.cli import options
from kubesched.cli.lab.one_post import connect
from kubesched.cli.lab.result import Check, LabResult
from kubesched.cluster import AlreadyExists, ApiError, NotFound
from kubesched.cluster.kube import KubeCluster
from kubesched.sim.nodes import HOSTNAME_LABEL
from kubesched.trace import cite
from kubesched.trace.narrate import Step
from kubesched.workloads.runner import make_pod

ID, TITLE = "5.5.6", "Stage 2, shape one: a Deployment nobody privileged"
NAMESPACE = ACCOUNT = SCHEDULER = "kubesched"
HIGH = "lab-unprivileged-high"
WAIT = 30.0
RBAC_KINDS = {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}


def deploy_dir() -> Path:
    """deploy/ of the checkout kubesched runs from; UsageError when it is not there."""
    found = Path(kubesched.__file__).resolve().parents[2] / "deploy"
    if not (found / "10-rbac.yaml").is_file():
        raise options.UsageError(f"lab {ID} applies deploy/ of a kubesched checkout; none at {found}")
    return found


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _without(docs: list[dict[str, Any]], resource: str) -> list[dict[str, Any]]:
    """`docs` with every ClusterRole rule naming `resource` taken out."""
    out = []
    for d in docs:
        if d["kind"] == "ClusterRole":
            d = {**d, "rules": [r for r in d["rules"] if resource not in r.get("resources", ())]}
        out.append(d)
    return out


async def _apply(admin: KubeCluster, docs: list[dict[str, Any]]) -> None:
    """Create each object; RBAC objects already there are replaced, anything else kept."""
    for doc in docs:
        obj = codecs.from_dict(doc)
        if doc["kind"] in RBAC_KINDS:
            with contextlib.suppress(NotFound):
                await admin.delete(type(obj), doc["metadata"]["name"], namespace=doc["metadata"].get("namespace"))
        with contextlib.suppress(AlreadyExists):
            await admin.create(obj)


async def _token(admin: KubeCluster) -> str:
    path = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{ACCOUNT}/token"
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


async def _eventually(probe: Any, wait: float) -> Any:
    deadline = time.monotonic() + wait
    while not (found := await probe()) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return found


async def _scenario(admin: KubeCluster, *, wait: float) -> dict[str, Any]:
    """A pod that fits, one that fits nowhere, and one that must preempt a pod on a node of its own."""
    nodes = (await admin.list(core_v1.Node)).items
    if not nodes:
        raise options.UsageError(f"lab {ID}: the cluster has no node")
    node = nodes[0]
    cpu = milli_value(node.status.allocatable["cpu"]) if node.status and node.status.allocatable else 1000
    most = f"{cpu * 6 // 10}m"
    with contextlib.suppress(AlreadyExists):
        await admin.create(codecs.from_dict(_priority_class()))
    pinned = {"nodeSelector": {HOSTNAME_LABEL: node.metadata.name}}
    await admin.create(make_pod("lab-filler", {"cpu": most}, nodeName=node.metadata.name))
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
    return {"fits": fits, "urgent": urgent, "nowhere": nowhere, "node": node.metadata.name}


def _priority_class() -> dict[str, Any]:
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
        await admin.delete(coordination_v1.Lease, SCHEDULER, namespace=NAMESPACE)
    with contextlib.suppress(ApiError):
        await admin.delete(scheduling_v1.PriorityClass, HIGH)


def run(*, seed: int = 1, kubeconfig: str, drop: str = "", wait: float = WAIT) -> LabResult:
    """deploy/ against the RBAC cluster of `kubeconfig` (its admin's), and kubesched run as the
    ServiceAccount, given `wait` seconds to do each thing. With `drop` naming a resource
    (`pods/binding`), the ClusterRole loses the rules that grant it, which makes the claim false.
    `seed` is unused."""
    deploy = deploy_dir()
    docs = [*_documents(deploy / "00-namespace.yaml"), *_documents(deploy / "10-rbac.yaml")]
    config = next(d for d in _documents(deploy / "20-config.yaml") if d["kind"] == "ConfigMap")["data"]["config.yaml"]
    with tempfile.TemporaryDirectory() as directory:
        config_path = Path(directory) / "config.yaml"
        config_path.write_text(config)

        async def prepare() -> str:
            admin = connect(kubeconfig)
            try:
                await _apply(admin, _without(docs, drop) if drop else docs)
                return await _token(admin)
            finally:
                await admin.close()

        token = asyncio.run(prepare())
        as_account = _kubeconfig_as(kubeconfig, token, Path(directory) / "kubesched.kubeconfig")
        command = [sys.executable, "-m", "kubesched", "run", "--config", str(config_path)]
        command += ["--kubeconfig", str(as_account), "--metrics-bind", "127.0.0.1:0"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        async def perform() -> dict[str, Any]:
            admin, account = connect(kubeconfig), connect(str(as_account))
            try:
                seen = await _scenario(admin, wait=wait)
                seen["denied"] = await _denied(account)
                return seen
            finally:
                await _clean(admin)
                await admin.close()
                await account.close()

        try:
            seen = asyncio.run(perform())
        finally:
            process.terminate()
            try:
                output, _ = process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                output, _ = process.communicate()
        if drop:  # put deploy/'s RBAC back as it is
            asyncio.run(_restore(kubeconfig, docs))
    forbidden = [line for line in output.splitlines() if "forbidden" in line.lower()]
    code, message = seen["denied"]
    user = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
    steps = [
        Step(
            0.0, f"deploy/ applied as the admin{f', without the rules for {drop}' if drop else ''}; a token for {user}"
        ),
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
        claim="with exactly deploy/'s RBAC the scheduler binds, reports and preempts, no request of its is refused, "
        "and a request outside that RBAC is refused with 403",
        evidence={
            "fits": seen["fits"],
            "urgent": seen["urgent"],
            "nowhereReported": bool(seen["nowhere"]),
            "schedulerRefused": forbidden[:3],
            "outside": {"code": code, "message": message},
        },
        passed=bool(seen["fits"])
        and seen["urgent"] == seen["node"]
        and bool(seen["nowhere"])
        and not forbidden
        and code == 403
        and message.startswith(f'secrets is forbidden: User "{user}" cannot list resource "secrets"'),
    )
    return LabResult(ID, TITLE, steps, check)


async def _restore(kubeconfig: str, docs: list[dict[str, Any]]) -> None:
    admin = connect(kubeconfig)
    try:
        await _apply(admin, docs)
    finally:
        await admin.close()
