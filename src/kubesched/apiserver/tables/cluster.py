"""Printers of the scheduling, policy, coordination, configuration and access kinds:
PodDisruptionBudgets, PriorityClasses, Leases, ConfigMaps, Secrets, ServiceAccounts and role
bindings."""

from __future__ import annotations

from lightkube.models import coordination_v1 as coordination_m
from lightkube.models import core_v1 as m
from lightkube.models import policy_v1 as policy_m
from lightkube.models import rbac_v1 as rbac_m
from lightkube.models import scheduling_v1 as scheduling_m
from lightkube.resources import coordination_v1, core_v1, policy_v1, rbac_authorization_v1, scheduling_v1

from kubesched.api.objects import name_of
from kubesched.apiserver.tables.printing import (
    AGE,
    Cell,
    Col,
    Printer,
    Printers,
    age,
    as_int,
    cells,
    created,
    int_or_string,
    name_col,
)
from kubesched.cluster.legacy import PodDisruptionBudgetV1beta1


def _pdb_cells(pdb: policy_m.PodDisruptionBudget, now: float) -> list[Cell]:
    spec = pdb.spec
    return [
        name_of(pdb),
        int_or_string(spec.minAvailable if spec else None),
        int_or_string(spec.maxUnavailable if spec else None),
        as_int(pdb.status.disruptionsAllowed if pdb.status else None),
        age(created(pdb), now),
    ]


_PDB = Printer(
    (
        name_col(),
        Col("Min Available", description="Pods that must stay available (a count or a percentage)."),
        Col("Max Unavailable", description="Pods that may be unavailable (a count or a percentage)."),
        Col("Allowed Disruptions", type="integer", description="Evictions allowed right now."),
        AGE,
    ),
    cells(_pdb_cells),
)

_PRIORITY_CLASS: Printer[scheduling_m.PriorityClass] = Printer(
    (
        name_col("The priority class's name."),
        Col("Value", type="integer", description="The priority pods of this class receive."),
        Col("Global-Default", type="boolean", description="Whether pods without a class get this one."),
        AGE,
        Col("PreemptionPolicy", description="Whether pods of this class may preempt others."),
    ),
    cells(
        lambda pc, now: [
            name_of(pc),
            as_int(pc.value),
            bool(pc.globalDefault),
            age(created(pc), now),
            pc.preemptionPolicy or "",
        ]
    ),
)

_LEASE: Printer[coordination_m.Lease] = Printer(
    (name_col(), Col("Holder", description="The identity holding the lease."), AGE),
    cells(
        lambda lease, now: [
            name_of(lease),
            (lease.spec.holderIdentity if lease.spec else None) or "",
            age(created(lease), now),
        ]
    ),
)


_CONFIG_MAP: Printer[m.ConfigMap] = Printer(
    (name_col(), Col("Data", type="integer", description="The number of keys."), AGE),
    cells(lambda cm, now: [name_of(cm), len(cm.data or {}) + len(cm.binaryData or {}), age(created(cm), now)]),
)

_SECRET: Printer[m.Secret] = Printer(
    (
        name_col(),
        Col("Type", description="The secret's type."),
        Col("Data", type="integer", description="The number of keys."),
        AGE,
    ),
    cells(
        lambda secret, now: [
            name_of(secret),
            secret.type or "Opaque",
            len(secret.data or {}) + len(secret.stringData or {}),
            age(created(secret), now),
        ]
    ),
)

_SERVICE_ACCOUNT: Printer[m.ServiceAccount] = Printer(
    (name_col(), Col("Secrets", type="integer", description="The number of secrets."), AGE),
    cells(lambda sa, now: [name_of(sa), len(sa.secrets or []), age(created(sa), now)]),
)

_ROLE_BINDING: Printer[rbac_m.RoleBinding | rbac_m.ClusterRoleBinding] = Printer(
    (
        name_col(),
        Col("Role", description="The role bound: its kind and name."),
        AGE,
    ),
    cells(
        lambda rb, now: [
            name_of(rb),
            f"{rb.roleRef.kind}/{rb.roleRef.name}" if rb.roleRef else "",
            age(created(rb), now),
        ]
    ),
)


PRINTERS: Printers = {
    policy_v1.PodDisruptionBudget: _PDB,
    PodDisruptionBudgetV1beta1: _PDB,
    scheduling_v1.PriorityClass: _PRIORITY_CLASS,
    coordination_v1.Lease: _LEASE,
    core_v1.ConfigMap: _CONFIG_MAP,
    core_v1.Secret: _SECRET,
    core_v1.ServiceAccount: _SERVICE_ACCOUNT,
    rbac_authorization_v1.RoleBinding: _ROLE_BINDING,
    rbac_authorization_v1.ClusterRoleBinding: _ROLE_BINDING,
}
