"""Store features the HTTP API relies on: paging, bookmarks, subresources, patches, views, eviction."""

import pytest
from lightkube.models import core_v1 as m
from lightkube.models import meta_v1
from lightkube.models import policy_v1 as pm
from lightkube.resources import core_v1, events_v1, policy_v1

from builders import binding, make_node, make_pod
from kubesched.cluster import BadRequest, Conflict, Forbidden, TooManyRequests
from kubesched.storage import MemoryStore, copy_object


def names(items):
    return [o.metadata.name for o in items]


class TestPaging:
    def test_pages_cover_every_item_once(self, store):
        for i in range(7):
            store.create(make_pod(f"p{i}").obj)
        first = store.list(core_v1.Pod, limit=3)
        assert names(first.items) == ["p0", "p1", "p2"] and first.remaining == 4
        second = store.list(core_v1.Pod, limit=3, continue_token=first.continue_token)
        third = store.list(core_v1.Pod, limit=3, continue_token=second.continue_token)
        assert names(second.items) == ["p3", "p4", "p5"]
        assert names(third.items) == ["p6"] and third.continue_token is None
        assert second.resource_version == first.resource_version

    def test_garbage_continue_token_is_bad_request(self, store):
        with pytest.raises(BadRequest, match="continue key is not valid"):
            store.list(core_v1.Pod, limit=1, continue_token="not-a-token")


def test_bookmark_follows_the_events_before_it(clock):
    store = MemoryStore(clock=clock, watch_latency=0.005)
    watch = store.watch(core_v1.Pod, resource_version=str(store.resource_version))
    store.create(make_pod("a").obj)
    store.bookmark(watch, core_v1.Pod)
    clock.advance(0.01)
    events = watch.drain()
    assert [e.type for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1].object.metadata.resourceVersion == str(store.resource_version)


class TestSubresources:
    def test_status_update_changes_only_status(self, store):
        store.create(make_pod("a").obj)
        pod = copy_object(store.get(core_v1.Pod, "a", namespace="default"))
        pod.status.phase = "Running"
        pod.metadata.labels = {"ignored": "yes"}
        updated = store.update(pod, subresource="status")
        assert updated.status.phase == "Running" and updated.metadata.labels is None

    def test_main_update_keeps_status(self, store):
        store.create(make_node("n1").obj)
        node = copy_object(store.get(core_v1.Node, "n1"))
        node.status.capacity = {"cpu": "64"}
        node.metadata.labels = {"tier": "big"}
        updated = store.update(node)
        assert updated.metadata.labels == {"tier": "big"} and updated.status.capacity["cpu"] == "4"


class TestPatches:
    def test_json_patch(self, store):
        store.create(make_pod("a").labels(x="1").obj)
        pod = store.patch(
            core_v1.Pod,
            "a",
            [{"op": "add", "path": "/metadata/labels/y", "value": "2"}, {"op": "remove", "path": "/metadata/labels/x"}],
            namespace="default",
            patch_type="json",
        )
        assert pod.metadata.labels == {"y": "2"}

    def test_failed_json_patch_test_is_bad_request_and_changes_nothing(self, store):
        created = store.create(make_pod("a").labels(x="1").obj)
        with pytest.raises(BadRequest, match="test failed"):
            store.patch(
                core_v1.Pod,
                "a",
                [{"op": "test", "path": "/metadata/labels/x", "value": "9"}],
                namespace="default",
                patch_type="json",
            )
        assert store.get(core_v1.Pod, "a", namespace="default") is created

    def test_strategic_merge_merges_containers_by_name(self, store):
        store.create(make_pod("a").obj)
        patch = {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}
        pod = store.patch(core_v1.Pod, "a", patch, namespace="default", patch_type="strategic")
        assert [(c.name, c.image) for c in pod.spec.containers] == [("app", "nginx:1.27")]
        assert pod.spec.containers[0].terminationMessagePath == "/dev/termination-log"  # merged, not replaced

    def test_strategic_merge_conditions_by_type(self, store):
        pod = store.create(make_pod("a").obj)
        store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        patch = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        pod = store.patch(core_v1.Pod, "a", patch, namespace="default", subresource="status", patch_type="strategic")
        assert [c.type for c in pod.status.conditions] == ["PodScheduled", "Ready"]

    def test_patch_with_stale_resource_version_conflicts(self, store):
        store.create(make_pod("a").obj)
        with pytest.raises(Conflict):
            store.patch(
                core_v1.Pod, "a", {"metadata": {"resourceVersion": "1", "labels": {"a": "b"}}}, namespace="default"
            )


class TestEventsView:
    def test_an_event_written_as_events_v1_is_read_as_core_v1_and_back(self, store, clock):
        ev = events_v1.Event(
            metadata=meta_v1.ObjectMeta(name="a.1", namespace="default"),
            eventTime=__import__("datetime").datetime.fromtimestamp(clock.now(), __import__("datetime").UTC),
            regarding=m.ObjectReference(kind="Pod", name="a", namespace="default"),
            reason="Scheduled",
            note="Successfully assigned default/a to n1",
            type="Normal",
            action="Binding",
            reportingController="default-scheduler",
            reportingInstance="default-scheduler-host",
        )
        created = store.create(ev)
        assert isinstance(created, events_v1.Event) and created.note == ev.note
        core = store.get(core_v1.Event, "a.1", namespace="default")
        assert (core.message, core.involvedObject.name, core.reportingComponent) == (
            "Successfully assigned default/a to n1",
            "a",
            "default-scheduler",
        )
        assert names(store.list(events_v1.Event).items) == ["a.1"]

    def test_core_event_field_selectors(self, store):
        for pod in ("a", "b"):
            store.create(
                core_v1.Event(
                    metadata=meta_v1.ObjectMeta(name=f"{pod}.1", namespace="default"),
                    involvedObject=m.ObjectReference(kind="Pod", name=pod, namespace="default"),
                    reason="Scheduled",
                )
            )
        found = store.list(core_v1.Event, field_selector="involvedObject.name=b,involvedObject.kind=Pod")
        assert names(found.items) == ["b.1"]


class TestEviction:
    def _running(self, store, name, ready=True):
        pod = store.create(make_pod(name).labels(app="web").obj)
        store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
        store.patch(core_v1.Pod, name, {"status": status}, namespace="default", subresource="status")

    def _pdb(self, store, min_available):
        store.create(
            policy_v1.PodDisruptionBudget(
                metadata=meta_v1.ObjectMeta(name="web", namespace="default"),
                spec=pm.PodDisruptionBudgetSpec(
                    minAvailable=min_available, selector=meta_v1.LabelSelector(matchLabels={"app": "web"})
                ),
            )
        )

    def _evict(self, store, name):
        return store.post(
            core_v1.Pod, "eviction", pm.Eviction(metadata=meta_v1.ObjectMeta(name=name, namespace="default"))
        )

    def test_eviction_within_budget_deletes_gracefully(self, store):
        self._running(store, "a")
        self._running(store, "b")
        self._pdb(store, 1)
        evicted = self._evict(store, "a")
        assert evicted.metadata.deletionTimestamp is not None

    def test_eviction_beyond_budget_is_429_with_cause(self, store):
        self._running(store, "a")
        self._running(store, "b")
        self._pdb(store, 2)
        with pytest.raises(TooManyRequests) as err:
            self._evict(store, "a")
        assert err.value.code == 429
        assert err.value.message == "Cannot evict pod as it would violate the pod's disruption budget."
        assert err.value.causes() == [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
            }
        ]
        assert store.get(core_v1.Pod, "a", namespace="default").metadata.deletionTimestamp is None

    def test_pending_pods_bypass_the_budget(self, store):
        store.create(make_pod("p").labels(app="web").obj)
        self._pdb(store, 5)
        self._evict(store, "p")
        assert store.list(core_v1.Pod).items == []


def test_delete_preconditions(store):
    pod = store.create(make_pod("a").obj)
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: nope"):
        store.delete(core_v1.Pod, "a", uid="nope")
    store.delete(core_v1.Pod, "a", uid=pod.metadata.uid)


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_the_system_namespaces_may_not_be_deleted(store, name):
    store.create(make_pod("p").obj)
    with pytest.raises(Forbidden, match=f'namespaces "{name}" is forbidden: this namespace may not be deleted'):
        store.delete(core_v1.Namespace, name)
    assert store.get(core_v1.Namespace, name) is not None
    assert [p.metadata.name for p in store.list(core_v1.Pod).items] == ["p"]  # nothing taken with it
