"""Field sets, their FieldsV1 form, and the Update and Apply operations of server-side apply."""

import copy
import re
from datetime import UTC, datetime

import pytest

from builders import deployment_config
from kubesched.cluster.errors import ApplyConflict
from kubesched.storage import schemas
from kubesched.storage.fields import managers, paths, typed
from kubesched.storage.fields.managers import Owned

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TYPES = typed.Types(schemas.definitions())
DEPLOYMENT = TYPES.named("io.k8s.api.apps.v1.Deployment")
POD = TYPES.named("io.k8s.api.core.v1.Pod")
ALICE, BOB = managers.applier("alice"), managers.applier("bob")


def shown(fields):
    return sorted(paths.path_string(p) for p in fields)


def apply(live, config, managed, who, *, force=False):
    return managers.apply(DEPLOYMENT, live, config, managed, who, api_version="apps/v1", force=force, now=NOW)


def test_fields_v1_marks_members_that_have_children_and_reads_back():
    fields = frozenset(
        {
            paths.make("metadata", "labels", "app"),
            (*paths.make("spec", "containers"), paths.key({"name": "app"}, ["name"])),
            (*paths.make("spec", "containers"), paths.key({"name": "app"}, ["name"]), paths.field("image")),
            (*paths.make("metadata", "finalizers"), paths.value("x")),
        }
    )
    wire = paths.to_fields_v1(fields)
    assert wire == {
        "f:metadata": {"f:finalizers": {'v:"x"': {}}, "f:labels": {"f:app": {}}},
        "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}}}},
    }
    assert paths.from_fields_v1(wire) == fields


@pytest.mark.parametrize("wire", [{"x:y": {}}, {"f:a": 1}, {'k:["a"]': {}}, {"i:one": {}}, ["f:a"]], ids=str)
def test_fields_v1_that_is_not_a_field_set_is_refused(wire):
    with pytest.raises(paths.FieldsError):
        paths.from_fields_v1(wire)


def test_an_apply_configuration_owns_its_leaves_list_items_and_map_entries():
    fields = typed.field_set(DEPLOYMENT, deployment_config("web", replicas=2)) - managers.STRIPPED
    assert shown(fields) == [
        ".spec.replicas",
        ".spec.selector",
        ".spec.template.metadata.labels.app",
        '.spec.template.spec.containers[name="web"]',
        '.spec.template.spec.containers[name="web"].image',
        '.spec.template.spec.containers[name="web"].name',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]',
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]


def test_atomic_lists_are_one_field():
    pod = {"spec": {"tolerations": [{"key": "a"}, {"key": "b"}], "containers": []}}
    assert shown(typed.field_set(POD, pod)) == [".spec.tolerations"]


def test_merge_keeps_shared_items_in_the_configurations_order_and_live_only_items_near_their_places():
    containers = DEPLOYMENT.child("spec").child("template").child("spec").child("containers")
    live = [{"name": n, "image": "old"} for n in ("a", "x", "b", "y")]
    config = [{"name": "b", "image": "new"}, {"name": "c", "image": "new"}, {"name": "a", "image": "new"}]
    merged = typed.merge(containers, live, config)
    assert [(c["name"], c["image"]) for c in merged] == [
        ("x", "old"),  # before the first shared item, as in live
        ("b", "new"),
        ("y", "old"),  # a (shared) is placed where the configuration has it: last
        ("c", "new"),
        ("a", "new"),
    ]


def test_compare_names_the_changed_removed_and_added_fields():
    old = {"spec": {"replicas": 1, "paused": True}}
    new = {"spec": {"replicas": 2, "minReadySeconds": 5}}
    diff = typed.compare(DEPLOYMENT, old, new)
    assert (shown(diff.modified), shown(diff.removed), shown(diff.added)) == (
        [".spec.replicas"],
        [".spec.paused"],
        [".spec.minReadySeconds"],
    )


def test_a_second_applier_changing_a_field_conflicts_and_force_takes_it():
    first = apply(None, deployment_config("web", replicas=2), {}, ALICE)
    with pytest.raises(ApplyConflict) as caught:
        apply(first.obj, deployment_config("web", replicas=4), first.managed, BOB)
    error = caught.value
    assert (error.code, error.message) == (409, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
    assert error.causes() == [
        {"type": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.replicas"}
    ]
    forced = apply(first.obj, deployment_config("web", replicas=4), first.managed, BOB, force=True)
    assert forced.obj["spec"]["replicas"] == 4
    assert ".spec.replicas" in shown(forced.managed[BOB].fields)
    assert ".spec.replicas" not in shown(forced.managed[ALICE].fields)


def test_the_same_value_is_co_owned_without_conflict():
    first = apply(None, deployment_config("web", replicas=2), {}, ALICE)
    second = apply(first.obj, deployment_config("web", replicas=2), first.managed, BOB)
    assert not second.changed
    assert ".spec.replicas" in shown(second.managed[ALICE].fields) and ".spec.replicas" in shown(
        second.managed[BOB].fields
    )


def test_conflicts_with_several_managers_are_listed_by_manager():
    first = apply(None, deployment_config("web", replicas=2), {}, ALICE)
    scaled = managers.update(
        DEPLOYMENT,
        first.obj,
        {**first.obj, "spec": {**first.obj["spec"], "replicas": 3}},
        first.managed,
        managers.updater("kubectl", "apps/v1", "scale"),
        now=NOW,
    )
    config = deployment_config("web", replicas=5, image="nginx:2")
    with pytest.raises(ApplyConflict) as caught:
        apply({**first.obj, "spec": {**first.obj["spec"], "replicas": 3}}, config, scaled, BOB)
    assert caught.value.message == (
        "Apply failed with 2 conflicts: "
        'conflicts with "alice":\n- .spec.template.spec.containers[name="web"].image\n'
        'conflicts with "kubectl" with subresource "scale" using apps/v1:\n- .spec.replicas'
    )


def test_fields_an_applier_drops_are_removed_unless_someone_else_owns_them():
    first = apply(None, deployment_config("web", replicas=2, containers=["side"], labels={"a": "1"}), {}, ALICE)
    co_owned = apply(first.obj, deployment_config("web", labels={"a": "1"}), first.managed, BOB)
    dropped = apply(co_owned.obj, deployment_config("web"), co_owned.managed, ALICE)
    spec = dropped.obj["spec"]
    assert "replicas" not in spec  # alice's alone: gone
    assert [c["name"] for c in spec["template"]["spec"]["containers"]] == ["web"]
    assert dropped.obj["metadata"]["labels"] == {"a": "1"}  # bob's too: kept
    assert dropped.obj["metadata"]["name"] == "web"


def test_an_update_takes_the_fields_it_changes_and_its_entry_is_timed():
    first = apply(None, deployment_config("web", replicas=2), {}, ALICE)
    new = copy.deepcopy(first.obj)
    new["spec"]["replicas"] = 7
    new["metadata"]["resourceVersion"] = "9"  # the server's: owned by no one
    scaler = managers.updater("hpa", "apps/v1")
    after = managers.update(DEPLOYMENT, first.obj, new, first.managed, scaler, now=NOW)
    assert after[scaler] == Owned(frozenset({paths.make("spec", "replicas")}), "apps/v1", NOW)
    assert ".spec.replicas" not in shown(after[ALICE].fields)


def test_an_object_applied_to_for_the_first_time_is_owned_before_by_before_first_apply():
    live = apply(None, deployment_config("web", replicas=2), {}, ALICE).obj
    with pytest.raises(
        ApplyConflict, match=re.escape('conflict with "before-first-apply" using apps/v1: .spec.replicas')
    ):
        apply(live, deployment_config("web", replicas=3), {}, BOB)


def test_status_is_not_owned_through_the_main_resource():
    config = {**deployment_config("web"), "status": {"replicas": 3}}
    ignored = frozenset({paths.make("status")})
    applied = managers.apply(
        DEPLOYMENT, None, config, {}, ALICE, api_version="apps/v1", force=False, ignored=ignored, now=NOW
    )
    assert not [p for p in shown(applied.managed[ALICE].fields) if p.startswith(".status")]


def test_entries_encode_appliers_first_and_decode_back():
    managed = {
        managers.updater("kubectl-edit", "apps/v1"): Owned(frozenset({paths.make("spec", "paused")}), "apps/v1", NOW),
        ALICE: Owned(frozenset({paths.make("spec", "replicas")}), "apps/v1", NOW),
    }
    entries = managers.encode(managed)
    assert [(e.manager, e.operation, e.apiVersion) for e in entries] == [
        ("alice", "Apply", "apps/v1"),
        ("kubectl-edit", "Update", "apps/v1"),
    ]
    assert managers.decode(entries) == managed


@pytest.mark.parametrize(
    ("user_agent", "manager"),
    [
        ("kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "kubectl"),
        ("kube-scheduler/v1.36.2", "kube-scheduler"),
        ("bad\x07name/1", "badname"),
        ("x" * 200, "x" * 128),
    ],
)
def test_an_update_without_a_field_manager_is_named_after_its_user_agent(user_agent, manager):
    assert managers.manager_from_user_agent(user_agent) == manager
