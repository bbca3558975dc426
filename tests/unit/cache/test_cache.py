"""The scheduler cache: assume, confirm, forget; the incremental snapshot and its NodeTable."""

from __future__ import annotations

import msgspec
import pytest

from builders import make_node, make_pod
from kubesched.cache import Cache, CacheError, PodInfo, Snapshot


def node(name, zone=None, cpu="4"):
    n = make_node(name).capacity(cpu=cpu, memory="8Gi", pods="110").obj
    if zone:
        n.metadata.labels = {**n.metadata.labels, "topology.kubernetes.io/zone": zone}
    return n


def pod(name, node_name=None, cpu="1"):
    p = make_pod(name).req(cpu=cpu).obj
    p.metadata.uid = f"uid-{name}"
    if node_name:
        p.spec.nodeName = node_name
    return p


def test_assume_counts_at_once_and_the_watch_confirms_without_double_counting():
    cache = Cache()
    cache.add_node(node("n1"))
    info = PodInfo(pod("a")).with_node("n1")
    cache.assume_pod(info)
    assert cache.is_assumed("uid-a")
    assert cache.nodes["n1"].requested.cpu == 1000
    cache.add_pod(pod("a", "n1"))  # the bound pod arrives from the watch
    assert not cache.is_assumed("uid-a")
    assert cache.nodes["n1"].requested.cpu == 1000
    assert len(cache.nodes["n1"].pods) == 1


def test_forget_gives_the_resources_back():
    cache = Cache()
    cache.add_node(node("n1"))
    info = PodInfo(pod("a")).with_node("n1")
    cache.assume_pod(info)
    cache.forget_pod(info)
    assert cache.nodes["n1"].requested.cpu == 0 and cache.pod("uid-a") is None


def test_assuming_twice_or_forgetting_a_confirmed_pod_is_an_error():
    cache = Cache()
    cache.add_node(node("n1"))
    info = PodInfo(pod("a")).with_node("n1")
    cache.assume_pod(info)
    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        cache.assume_pod(info)
    cache.add_pod(pod("a", "n1"))
    with pytest.raises(CacheError, match="is not assumed"):
        cache.forget_pod(info)


def test_snapshot_orders_nodes_round_robin_across_zones():
    cache, snapshot = Cache(), Snapshot()
    for name, zone in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("c2", "c")]:
        cache.add_node(node(name, zone))
    cache.update_snapshot(snapshot)
    assert [n.name for n in snapshot.node_info_list] == ["a1", "b1", "c1", "a2", "c2", "a3"]


def test_snapshot_updates_only_changed_nodes_and_keeps_list_identity():
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    cache.update_snapshot(snapshot)
    listed = snapshot.node_info_list
    n1 = snapshot.get("n1")
    cache.add_pod(pod("a", "n2"))
    cache.update_snapshot(snapshot)
    assert snapshot.node_info_list is listed and snapshot.get("n1") is n1
    assert snapshot.get("n2").requested.cpu == 1000
    assert snapshot.table.req_cpu.tolist() == [0, 1000]
    assert snapshot.table.pod_count.tolist() == [0, 1]


def test_deleted_nodes_leave_the_snapshot_and_the_table():
    cache, snapshot = Cache(), Snapshot()
    first, second = node("n1"), node("n2")
    cache.add_node(first)
    cache.add_node(second)
    cache.update_snapshot(snapshot)
    cache.remove_node(first)
    cache.update_snapshot(snapshot)
    assert [n.name for n in snapshot.node_info_list] == ["n2"]
    assert len(snapshot.table) == 1 and snapshot.table.alloc_cpu.tolist() == [4000]


def test_node_updates_refresh_the_table_row():
    cache, snapshot = Cache(), Snapshot()
    old = node("n1")
    cache.add_node(old)
    cache.update_snapshot(snapshot)
    new = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, unschedulable=True))
    new.status = msgspec.structs.replace(old.status, allocatable={**old.status.allocatable, "cpu": "8"})
    cache.update_node(old, new)
    cache.update_snapshot(snapshot)
    assert snapshot.table.unschedulable.tolist() == [True]
    assert snapshot.table.alloc_cpu.tolist() == [8000]
