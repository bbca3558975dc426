"""Store invariants under random sequences of operations."""

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from lightkube.resources import core_v1

from builders import binding, make_pod
from kubesched.clock import VirtualClock
from kubesched.cluster import ApiError
from kubesched.storage import MemoryStore

NAMES = [f"p{i}" for i in range(4)]
ops = st.lists(
    st.tuples(st.sampled_from(["create", "bind", "label", "delete"]), st.sampled_from(NAMES), st.integers(0, 2)),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(ops)
def test_watch_replay_rebuilds_the_list_and_versions_only_grow(sequence):
    clock = VirtualClock()
    store = MemoryStore(clock=clock, watch_latency=0.0)
    watch = store.watch(core_v1.Pod, resource_version=str(store.resource_version))
    last = store.resource_version
    for op, name, n in sequence:
        try:
            if op == "create":
                store.create(make_pod(name).obj)
            elif op == "bind":
                pod = store.get(core_v1.Pod, name, namespace="default")
                store.post(core_v1.Pod, "binding", binding(pod, f"node-{n}", uid=pod.metadata.uid))
            elif op == "label":
                store.patch(core_v1.Pod, name, {"metadata": {"labels": {"n": str(n)}}}, namespace="default")
            else:
                store.delete(core_v1.Pod, name, grace_period_seconds=n)
        except ApiError:
            assert store.resource_version == last  # a refused request changes nothing
            continue
        assert store.resource_version >= last
        last = store.resource_version
    replayed: dict[str, object] = {}
    versions = []
    for event in watch.drain():
        versions.append(int(event.object.metadata.resourceVersion))
        if event.type == "DELETED":
            replayed.pop(event.object.metadata.name)
        else:
            replayed[event.object.metadata.name] = event.object
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    current = {p.metadata.name: p for p in store.list(core_v1.Pod).items}
    assert {k: msgspec.to_builtins(v) for k, v in replayed.items()} == {
        k: msgspec.to_builtins(v) for k, v in current.items()
    }
    # A bound pod is never bound again: every stored pod's node is the one it was first bound to.
    for pod in current.values():
        assert bool(pod.spec.nodeName) == any(c.type == "PodScheduled" for c in (pod.status.conditions or []))
    clock.close()
