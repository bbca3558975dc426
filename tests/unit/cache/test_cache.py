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


def test_memo_columns_compute_once_then_refresh_only_updated_rows():
    cache, snapshot = Cache(), Snapshot()
    for name in ("n1", "n2", "n3"):
        cache.add_node(node(name))
    cache.update_snapshot(snapshot)
    table = snapshot.table
    calls: list[str] = []

    def every(rows):
        calls.append(f"every:{len(rows)}")
        return table.free_cpu[rows].copy()

    def one(info):
        calls.append(f"one:{info.name}")
        return info.allocatable.cpu - info.requested.cpu

    assert table.memo("free", every, one).tolist() == [4000, 4000, 4000]
    assert table.memo("free", every, one).tolist() == [4000, 4000, 4000]  # nothing changed: no call
    cache.add_pod(pod("a", "n2"))
    cache.add_pod(pod("b", "n2"))
    cache.update_snapshot(snapshot)
    assert table.memo("free", every, one).tolist() == [4000, 2000, 4000]
    assert calls == ["every:3", "one:n2"]  # the updated row once, however many updates it had
    cache.add_node(node("n4"))  # nodes come or go: the table is rebuilt, memos start over
    cache.update_snapshot(snapshot)
    assert sorted(table.memo("free", every, one).tolist()) == [2000, 4000, 4000, 4000]
    assert calls[-1] == "every:4"


def test_memo_columns_are_dropped_least_recently_used_first(monkeypatch):
    from kubesched.cache import table as table_module

    monkeypatch.setattr(table_module, "MEMO_LIMIT", 2)
    cache, snapshot = Cache(), Snapshot()
    cache.add_node(node("n1"))
    cache.update_snapshot(snapshot)
    table = snapshot.table
    computed: list[str] = []

    def memo(key):
        def every(rows):
            computed.append(key)
            return table.free_cpu[rows].copy()

        return table.memo(key, every, lambda info: 0)

    memo("a"), memo("b"), memo("a"), memo("c")  # "b" is the least recently used when "c" arrives
    memo("a"), memo("b")
    assert computed == ["a", "b", "c", "b"]


def test_the_lists_of_nodes_with_affinity_pods_follow_each_change_in_node_order():
    """Pods with (anti-)affinity come and go on random nodes; after every snapshot update the two
    lists equal a scan of every node in tree order (the update only moves the nodes that flipped)."""
    import random

    rng = random.Random(7)
    cache, snapshot = Cache(), Snapshot()
    for i in range(12):
        cache.add_node(make_node(f"n{i}").labels(**{"topology.kubernetes.io/zone": f"z{i % 3}"}).obj)
    cache.update_snapshot(snapshot)
    placed: list[object] = []
    for step in range(200):
        if placed and rng.random() < 0.4:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        else:
            pod = make_pod(f"p{step}").node(f"n{rng.randrange(12)}").labels(app="a")
            if rng.random() < 0.5:
                pod.pod_affinity(anti=rng.random() < 0.5, app="a")
            cache.add_pod(pod.obj)
            placed.append(pod.obj)
        cache.update_snapshot(snapshot)
        assert snapshot.have_pods_with_affinity == [n for n in snapshot.node_info_list if n.pods_with_affinity]
        assert snapshot.have_pods_with_required_anti_affinity == [
            n for n in snapshot.node_info_list if n.pods_with_required_anti_affinity
        ]
    assert snapshot.have_pods_with_affinity and snapshot.have_pods_with_required_anti_affinity
