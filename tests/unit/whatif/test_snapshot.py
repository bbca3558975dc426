"""Snapshots: a cluster read into one file with list requests only, and put back as it was."""

from __future__ import annotations

import asyncio

import pytest
from lightkube.models import core_v1 as m

from builders import make_node, make_pod, namespace, secret, web_service
from kubesched.clock import VirtualClock
from kubesched.storage import MemoryCluster, MemoryStore
from kubesched.whatif.snapshot import PAGE, SnapshotError, load, read


def store_of(*objs):
    store = MemoryStore(clock=VirtualClock())
    for obj in objs:
        store.create(getattr(obj, "obj", obj))
    return store


def snapshot(store, selector=""):
    return asyncio.run(read(MemoryCluster(store), selector=selector))


def with_env(pod):
    pod.obj.spec.containers[0].env = [m.EnvVar(name="PASSWORD", value="hunter2")]
    return pod


def test_save_restore_save_gives_the_same_file():
    store = store_of(
        namespace("team"),
        make_node("a").labels(zone="z1"),
        make_node("b").taint("gpu"),
        make_pod("bound").req(cpu="1").node("a"),
        make_pod("pending", "team").labels(app="web"),
        web_service(),
    )
    first = snapshot(store)
    again = MemoryStore(clock=VirtualClock(), seed=7)
    first.restore(again)
    assert snapshot(again).dumps() == first.dumps()
    kinds = [(i["kind"], i["metadata"]["name"]) for i in first.items]
    assert kinds == [
        ("Namespace", "default"),
        ("Namespace", "team"),
        ("Node", "a"),
        ("Node", "b"),
        ("Service", "web"),
        ("Pod", "bound"),
        ("Pod", "pending"),
    ]


def test_secrets_are_never_read_and_env_values_are_dropped():
    text = snapshot(store_of(secret("token"), with_env(make_pod("app")))).dumps()
    assert "hunter2" not in text and "PASSWORD" in text
    assert "Secret" not in text and "token" not in text


def test_bookkeeping_fields_are_left_out():
    [pod] = snapshot(store_of(make_pod("p"))).of_kind("Pod")
    assert not {"resourceVersion", "managedFields", "selfLink"} & set(pod["metadata"])
    assert pod["metadata"]["uid"] and pod["metadata"]["creationTimestamp"]


def test_a_selector_filters_the_workloads_but_not_the_nodes():
    store = store_of(make_node("a"), make_pod("web").labels(app="web"), make_pod("db").labels(app="db"))
    taken = snapshot(store, "app=web")
    assert [p["metadata"]["name"] for p in taken.of_kind("Pod")] == ["web"]
    assert [n["metadata"]["name"] for n in taken.of_kind("Node")] == ["a"]


def test_every_page_is_read():
    store = store_of(*(make_node(f"n{i:04}") for i in range(PAGE + 3)))
    assert len(snapshot(store).of_kind("Node")) == PAGE + 3


@pytest.mark.parametrize(
    "text, message",
    [
        ("kind: Pod\n", "not a snapshot (a v1 List of objects)"),
        ("kind: List\nitems: [{kind: Node}]\n", "items[0]: an object with metadata.name is required"),
        (
            "kind: List\nitems: [{apiVersion: v1, kind: Secret, metadata: {name: s}}]\n",
            "items[0]: v1 Secret is not a kind a snapshot holds",
        ),
        ("kind: List\nitems: [\n", "not valid YAML"),
    ],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(SnapshotError) as e:
        load(path)
    assert str(e.value).startswith(f"{path}: {message}") and "\n" not in str(e.value)


def test_an_object_the_store_refuses_names_it(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("kind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: []}}]\n")
    with pytest.raises(SnapshotError) as e:
        load(path).restore(MemoryStore(clock=VirtualClock()))
    assert str(e.value) == 'items[0] (Pod p): Pod "p" is invalid: spec.containers: Required value'
