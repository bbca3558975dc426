"""The memory store behaves as a Kubernetes API server does for the scheduler's purposes."""

import asyncio
import random
import re

import pytest
from lightkube.models import meta_v1
from lightkube.resources import core_v1, scheduling_v1

from builders import binding, deployment_config, make_node, make_pod
from kubesched.clock import DEFAULT_EPOCH, VirtualClock
from kubesched.cluster import AlreadyExists, BadRequest, Conflict, Forbidden, Gone, Invalid, NotFound
from kubesched.cluster.errors import ApplyConflict
from kubesched.storage import MemoryStore, copy_object


class TestResourceVersion:
    def test_strictly_increases_across_kinds_and_verbs(self, store):
        seen = [store.resource_version]
        pod = store.create(make_pod("a").obj)
        seen.append(int(pod.metadata.resourceVersion))
        node = store.create(make_node("n1").obj)
        seen.append(int(node.metadata.resourceVersion))
        bound = store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        seen.append(int(bound.metadata.resourceVersion))
        gone = store.delete(core_v1.Pod, "a", grace_period_seconds=0)
        seen.append(int(gone.metadata.resourceVersion))
        assert seen == sorted(set(seen)) and len(seen) == 5

    def test_list_reports_current_resource_version(self, store):
        store.create(make_pod("a").obj)
        result = store.list(core_v1.Pod)
        assert result.resource_version == str(store.resource_version)
        assert [p.metadata.name for p in result.items] == ["a"]


class TestCreate:
    def test_sets_identity_and_defaults(self, store, clock):
        pod = store.create(make_pod("a").req(cpu="500m").obj)
        assert pod.metadata.uid and pod.metadata.namespace == "default"
        assert pod.metadata.creationTimestamp.timestamp() == int(DEFAULT_EPOCH)
        assert pod.spec.schedulerName == "default-scheduler"
        assert pod.spec.priority == 0
        assert pod.status.phase == "Pending"

    def test_input_is_copied(self, store):
        obj = make_pod("a").obj
        store.create(obj)
        obj.metadata.labels = {"changed": "yes"}
        assert store.get(core_v1.Pod, "a", namespace="default").metadata.labels is None

    def test_duplicate_name_is_already_exists(self, store):
        store.create(make_pod("a").obj)
        with pytest.raises(AlreadyExists, match='pods "a" already exists'):
            store.create(make_pod("a").obj)

    def test_unknown_namespace_is_not_found(self, store):
        with pytest.raises(NotFound, match='namespaces "nope" not found'):
            store.create(make_pod("a", namespace="nope").obj)

    def test_generate_name_is_deterministic_per_seed(self, clock):
        def names(seed):
            s = MemoryStore(clock=clock, seed=seed)
            pod = make_pod("").obj
            pod.metadata = meta_v1.ObjectMeta(generateName="web-", namespace="default")
            return [s.create(pod).metadata.name for _ in range(3)]

        assert names(1) == names(1)
        assert all(n.startswith("web-") and len(n) == 9 for n in names(1))

    @pytest.mark.parametrize(("taken", "created"), [(2, "web-ddddd"), (7, "web-kkkkk"), (8, None)])
    def test_a_generated_name_taken_is_drawn_again_eight_draws_in_all(self, store, taken, created):
        letters = "bcdfghjklm"

        class Scripted(random.Random):
            """Draw i is the i-th letter five times."""

            draws = iter("".join(letter * 5 for letter in letters))

            def choice(self, seq):
                return next(self.draws)

        for letter in letters[:taken]:
            store.create(make_pod(f"web-{letter * 5}").obj)
        store._ids.rng = Scripted(0)
        pod = make_pod("").obj
        pod.metadata = meta_v1.ObjectMeta(generateName="web-", namespace="default")
        if created is None:
            with pytest.raises(AlreadyExists, match='pods "web-kkkkk" already exists'):
                store.create(pod)
        else:
            assert store.create(pod).metadata.name == created


class TestValidation:
    @pytest.mark.parametrize(
        ("mutate", "message"),
        [
            (
                lambda p: setattr(p.metadata, "name", "Bad_Name"),
                'Pod "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
            ),
            (lambda p: setattr(p.spec, "containers", []), 'Pod "a" is invalid: spec.containers: Required value'),
            (
                lambda p: setattr(p.spec.containers[0], "resources", _requests(cpu="lots")),
                'Pod "a" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "lots"',
            ),
            (
                lambda p: setattr(p.metadata, "labels", {"app": "no spaces"}),
                'Pod "a" is invalid: metadata.labels: Invalid value: "no spaces"',
            ),
        ],
    )
    def test_invalid_pod_is_refused_and_not_stored(self, store, mutate, message):
        pod = make_pod("a").obj
        mutate(pod)
        rv = store.resource_version
        with pytest.raises(Invalid) as err:
            store.create(pod)
        assert str(err.value).startswith(message)
        assert err.value.code == 422
        assert store.list(core_v1.Pod).items == []
        assert store.resource_version == rv

    def test_invalid_node_capacity_names_the_field(self, store):
        node = make_node("n1").capacity(cpu="four").obj
        with pytest.raises(Invalid, match=r"status.capacity\[cpu\]: Invalid value: \"four\""):
            store.create(node)

    def test_an_update_is_defaulted_before_it_is_checked(self, store):
        store.create(make_pod("a").obj)
        pod = copy_object(store.get(core_v1.Pod, "a"))
        pod.spec.restartPolicy = pod.spec.containers[0].terminationMessagePath = None
        pod.metadata.labels = {"tier": "front"}
        updated = store.update(pod)
        assert (updated.metadata.labels, updated.spec.restartPolicy) == ({"tier": "front"}, "Always")
        assert updated.spec.containers[0].terminationMessagePath == "/dev/termination-log"

    def test_update_may_not_move_a_pod(self, store):
        store.create(make_pod("a").obj)
        pod = copy_object(store.get(core_v1.Pod, "a", namespace="default"))
        pod.spec.nodeName = "n1"
        with pytest.raises(Invalid, match="spec: Forbidden: pod updates may not change fields"):
            store.update(pod)


class TestConcurrency:
    def test_stale_update_is_conflict(self, store):
        store.create(make_pod("a").obj)
        first = copy_object(store.get(core_v1.Pod, "a", namespace="default"))
        second = copy_object(first)
        first.metadata.labels = {"v": "1"}
        store.update(first)
        second.metadata.labels = {"v": "2"}
        with pytest.raises(Conflict, match="the object has been modified"):
            store.update(second)
        assert store.get(core_v1.Pod, "a", namespace="default").metadata.labels == {"v": "1"}

    def test_no_op_update_keeps_resource_version(self, store):
        pod = store.create(make_pod("a").obj)
        again = store.update(copy_object(pod))
        assert again.metadata.resourceVersion == pod.metadata.resourceVersion

    def test_merge_patch_changes_labels(self, store):
        store.create(make_pod("a").labels(x="1", y="2").obj)
        pod = store.patch(core_v1.Pod, "a", {"metadata": {"labels": {"x": "9", "y": None}}}, namespace="default")
        assert pod.metadata.labels == {"x": "9"}


class TestBinding:
    def test_binds_and_marks_scheduled(self, store):
        pod = store.create(make_pod("a").obj)
        bound = store.post(core_v1.Pod, "binding", binding(pod, "n1", uid=pod.metadata.uid))
        assert bound.spec.nodeName == "n1"
        assert [(c.type, c.status) for c in bound.status.conditions] == [("PodScheduled", "True")]

    def test_already_assigned(self, store):
        pod = store.create(make_pod("a").obj)
        store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        with pytest.raises(Conflict) as err:
            store.post(core_v1.Pod, "binding", binding(pod, "n2"))
        assert err.value.message == (
            'Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"'
        )
        assert err.value.code == 409

    def test_uid_precondition(self, store):
        pod = store.create(make_pod("a").obj)
        with pytest.raises(Conflict, match="Precondition failed: UID in precondition: other-uid"):
            store.post(core_v1.Pod, "binding", binding(pod, "n1", uid="other-uid"))
        assert store.get(core_v1.Pod, "a", namespace="default").spec.nodeName is None

    def test_pod_being_deleted(self, store):
        pod = store.create(make_pod("a").obj)
        store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        store.create(make_pod("b").obj)
        # An unbound pod is deleted at once; hold it with a finalizer to observe the refusal.
        held = copy_object(store.get(core_v1.Pod, "b", namespace="default"))
        held.metadata.finalizers = ["example.com/hold"]
        store.update(held)
        store.delete(core_v1.Pod, "b")
        with pytest.raises(Conflict, match="pod b is being deleted, cannot be assigned to a host"):
            store.post(core_v1.Pod, "binding", binding(held, "n1"))

    def test_gated_pod(self, store):
        pod = store.create(make_pod("a").gates("example.com/wait").obj)
        with pytest.raises(Conflict, match=r"pod a has non-empty .spec.schedulingGates"):
            store.post(core_v1.Pod, "binding", binding(pod, "n1"))

    def test_missing_pod(self, store):
        with pytest.raises(NotFound, match='pods "ghost" not found'):
            store.post(core_v1.Pod, "binding", binding(make_pod("ghost").obj, "n1"))


class TestWatch:
    def _changes(self, store):
        a = store.create(make_pod("a").obj)
        store.create(make_pod("b").obj)
        store.post(core_v1.Pod, "binding", binding(a, "n1"))
        store.delete(core_v1.Pod, "b")

    def test_resume_sees_exactly_the_later_changes(self, store):
        store.create(make_pod("early").obj)
        rv = str(store.resource_version)
        self._changes(store)
        watch = store.watch(core_v1.Pod, resource_version=rv)
        events = [(e.type, e.object.metadata.name) for e in watch.drain()]
        assert events == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]

    def test_without_resource_version_starts_with_current_objects(self, store):
        self._changes(store)
        watch = store.watch(core_v1.Pod)
        assert [(e.type, e.object.metadata.name) for e in watch.drain()] == [("ADDED", "a")]

    def test_field_selector_turns_binding_into_delete(self, store):
        watch = store.watch(core_v1.Pod, field_selector="spec.nodeName=")
        self._changes(store)
        events = [(e.type, e.object.metadata.name) for e in watch.drain()]
        assert events == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a"), ("DELETED", "b")]

    def test_too_old_resource_version_is_gone(self, clock):
        store = MemoryStore(clock=clock, history=3)
        rv = str(store.resource_version)
        for i in range(5):
            store.create(make_pod(f"p{i}").obj)
        with pytest.raises(Gone, match=f"too old resource version: {rv}") as err:
            store.watch(core_v1.Pod, resource_version=rv)
        assert err.value.code == 410

    def test_delivery_waits_for_the_latency(self, clock):
        store = MemoryStore(clock=clock, watch_latency=0.005)
        watch = store.watch(core_v1.Pod, resource_version=str(store.resource_version))
        store.create(make_pod("a").obj)
        assert watch.drain() == []
        clock.advance(0.004)
        assert watch.drain() == []
        clock.advance(0.001)
        assert [e.object.metadata.name for e in watch.drain()] == ["a"]

    def test_delivery_due_a_hair_after_the_clock_ends(self, clock):
        # epoch seconds carry about 2e-7 s: a timer due just before the watch's makes the loop run
        # the watch's timer early, within its resolution; what was due is delivered then (it was
        # rescheduled at once instead, waking its reader each time: time stood still)
        store = MemoryStore(clock=clock, watch_latency=0.005)
        watch = store.watch(core_v1.Pod, resource_version=str(store.resource_version))

        async def main():
            reader = asyncio.ensure_future(anext(watch))
            store.create(make_pod("a").obj)
            await asyncio.sleep(0.005 - 2.5e-7)
            event = await reader
            watch.stop()
            return event.object.metadata.name

        assert clock.run(main()) == "a"

    def test_async_iteration(self, clock):
        store = MemoryStore(clock=clock)
        watch = store.watch(core_v1.Pod, resource_version=str(store.resource_version))

        async def main():
            store.create(make_pod("a").obj)
            event = await anext(watch)
            watch.stop()
            rest = [e async for e in watch]
            return event, rest

        event, rest = clock.run(main())
        assert (event.type, event.object.metadata.name, rest) == ("ADDED", "a", [])


class TestDeletion:
    def test_unbound_pod_is_removed_at_once(self, store):
        store.create(make_pod("a").obj)
        store.delete(core_v1.Pod, "a")
        with pytest.raises(NotFound):
            store.get(core_v1.Pod, "a", namespace="default")

    def test_bound_pod_is_marked_with_its_grace_period(self, store, clock):
        pod = store.create(make_pod("a").grace(45).obj)
        store.post(core_v1.Pod, "binding", binding(pod, "n1"))
        marked = store.delete(core_v1.Pod, "a")
        assert marked.metadata.deletionGracePeriodSeconds == 45
        assert marked.metadata.deletionTimestamp.timestamp() == int(clock.now()) + 45
        assert store.get(core_v1.Pod, "a", namespace="default").metadata.deletionTimestamp is not None
        store.delete(core_v1.Pod, "a", grace_period_seconds=0)
        with pytest.raises(NotFound):
            store.get(core_v1.Pod, "a", namespace="default")


class TestPriorityAdmission:
    def test_priority_class_resolves_to_its_value(self, store):
        store.create(scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name="high"), value=1000))
        pod = make_pod("a").obj
        pod.spec.priorityClassName = "high"
        assert store.create(pod).spec.priority == 1000

    def test_unknown_priority_class_is_forbidden(self, store):
        pod = make_pod("a").obj
        pod.spec.priorityClassName = "nope"
        with pytest.raises(Forbidden, match="no PriorityClass with name nope was found"):
            store.create(pod)

    def test_admission_refuses_before_validation_looks(self, store):
        pod = make_pod("a").obj
        pod.spec.priorityClassName = "nope"
        pod.spec.containers = []
        with pytest.raises(Forbidden, match="no PriorityClass with name nope was found"):
            store.create(pod)

    @pytest.mark.parametrize(
        ("disabled", "outcome"),
        [
            ((), 'namespaces "elsewhere" not found'),
            (("NamespaceLifecycle",), "elsewhere"),  # as kube-apiserver with the plugin off: stored anyway
        ],
    )
    def test_namespace_lifecycle_refuses_content_of_a_missing_namespace(self, clock, disabled, outcome):
        store = MemoryStore(clock=clock, disable_admission=disabled)
        try:
            created = store.create(make_pod("a", namespace="elsewhere").obj)
        except NotFound as e:
            assert str(e) == outcome
        else:
            assert created.metadata.namespace == outcome

    def test_one_spec_admitted_anew_when_the_global_default_changes(self, store):
        before = store.create(make_pod("a").obj)
        store.create(
            scheduling_v1.PriorityClass(metadata=meta_v1.ObjectMeta(name="base"), value=50, globalDefault=True)
        )
        after = store.create(make_pod("b").obj)
        assert (before.spec.priority, before.spec.priorityClassName) == (0, None)
        assert (after.spec.priority, after.spec.priorityClassName) == (50, "base")
        assert store.get(core_v1.Pod, "a").spec.priority == 0


class TestPodsOfOneTemplate:
    """Pods created with one spec hold shared parts; writes to one never show in another."""

    def test_binding_one_leaves_the_others_unbound(self, store):
        store.create(make_node("n1").obj)
        for name in ("a", "b", "c"):
            store.create(make_pod(name).req(cpu="100m").obj)
        store.post(core_v1.Pod, "binding", binding(store.get(core_v1.Pod, "a"), "n1"))
        pods = {p.metadata.name: p for p in store.list(core_v1.Pod).items}
        assert [pods[n].spec.nodeName for n in "abc"] == ["n1", None, None]
        assert [pods[n].status.conditions for n in "bc"] == [None, None]
        assert [c.type for c in pods["a"].status.conditions] == ["PodScheduled"]

    def test_a_gated_pod_does_not_gate_its_siblings(self, store):
        store.create(make_pod("gated").gates("wait").obj)
        free = store.create(make_pod("free").obj)
        assert free.status.conditions is None and free.spec.schedulingGates is None

    def test_an_update_of_one_changes_only_that_one(self, store):
        store.create(make_pod("a").labels(app="x").obj)
        store.create(make_pod("b").labels(app="x").obj)
        pod = copy_object(store.get(core_v1.Pod, "a"))
        pod.spec.containers[0].image = "other"
        store.update(pod)
        images = [p.spec.containers[0].image for p in store.list(core_v1.Pod).items]
        assert images == ["other", make_pod("b").obj.spec.containers[0].image]

    def test_a_store_let_go_is_freed_at_once_not_by_the_cycle_collector(self, clock):
        import gc
        import weakref

        store = MemoryStore(clock=clock)
        store.create(make_pod("a").obj)
        gone = weakref.ref(store)
        gc.disable()
        try:
            del store
            assert gone() is None
        finally:
            gc.enable()

    def test_stored_pods_and_events_cost_little_memory(self, clock):
        import tracemalloc

        from kubesched.cluster.events import object_reference

        store = MemoryStore(clock=clock, history=100)
        for i in range(50):
            store.create(make_node(f"n{i}").obj)
        template = make_pod("p").req(cpu="100m", memory="500Mi").labels(app="web").obj
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        for i in range(2000):
            template.metadata.name = f"p{i}"
            pod = store.create(template)
            bound = store.post(core_v1.Pod, "binding", binding(pod, f"n{i % 50}"))
            store.create(
                core_v1.Event(
                    metadata=meta_v1.ObjectMeta(name=f"p{i}.1"),
                    involvedObject=object_reference(bound),
                    reason="Scheduled",
                    message=f"Successfully assigned default/p{i} to n{i % 50}",
                )
            )
        per_pod = (tracemalloc.get_traced_memory()[0] - start) / 2000
        tracemalloc.stop()
        assert per_pod < 2000, f"{per_pod:.0f} bytes a pod"


def _requests(**r):
    from lightkube.models import core_v1 as m

    return m.ResourceRequirements(requests=r)


def test_errors_render_as_kubernetes_status(store):
    store.create(make_pod("a").obj)
    with pytest.raises(AlreadyExists) as err:
        store.create(make_pod("a").obj)
    assert err.value.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "a" already exists',
        "reason": "AlreadyExists",
        "code": 409,
        "details": {"name": "a", "kind": "pods"},
    }
    bad = make_pod("b").obj
    bad.spec.containers = []
    with pytest.raises(Invalid) as err:
        store.create(bad)
    assert err.value.status()["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.containers"}
    ]


@pytest.mark.parametrize(
    "write",
    [
        pytest.param(lambda s: s.create(make_pod("new").obj), id="create"),
        pytest.param(lambda s: s.patch(core_v1.Pod, "kept", {"metadata": {"labels": {"a": "b"}}}), id="patch"),
        pytest.param(lambda s: s.delete(core_v1.Pod, "kept"), id="delete"),
        pytest.param(lambda s: s.post(core_v1.Pod, "binding", binding(s.get(core_v1.Pod, "kept"), "n1")), id="bind"),
        pytest.param(lambda s: s.delete(core_v1.Namespace, "team"), id="namespace-delete"),
    ],
)
def test_a_dry_run_write_answers_but_stores_and_tells_nothing(store, write):
    store.create(core_v1.Namespace(metadata=meta_v1.ObjectMeta(name="team")))
    store.create(make_pod("kept").obj)
    rv = store.resource_version
    watch = store.watch(core_v1.Pod, resource_version=str(rv))
    before = {cls: store.list(cls).items for cls in (core_v1.Pod, core_v1.Namespace)}
    with store.dry_run():
        answer = write(store)
    assert answer is not None
    assert store.resource_version == rv
    assert {cls: store.list(cls).items for cls in before} == before
    assert list(watch.drain()) == []
    store.create(make_pod("after").obj)  # and the store writes again once the block is left
    assert store.get(core_v1.Pod, "after").metadata.resourceVersion == str(rv + 1)


def test_a_dry_run_create_is_validated_and_defaulted_without_a_version(store):
    with store.dry_run():
        created = store.create(make_pod("p").obj)
        with pytest.raises(Invalid):
            store.create(make_pod("Bad_Name").obj)
    assert created.metadata.resourceVersion is None and created.metadata.uid
    assert created.spec.schedulerName == "default-scheduler"
    with pytest.raises(NotFound):
        store.get(core_v1.Pod, "p")


class TestServerSideApply:
    def test_apply_creates_then_merges_and_records_its_manager(self, store):
        from lightkube.resources import apps_v1

        created, was_created = store.apply(
            apps_v1.Deployment, "web", deployment_config("web", replicas=2), field_manager="alice"
        )
        assert was_created and created.spec.replicas == 2 and created.spec.strategy.type == "RollingUpdate"
        (entry,) = created.metadata.managedFields
        assert (entry.manager, entry.operation, entry.apiVersion) == ("alice", "Apply", "apps/v1")
        assert entry.fieldsV1["f:spec"]["f:replicas"] == {}
        again, was_created = store.apply(
            apps_v1.Deployment, "web", deployment_config("web", replicas=2), field_manager="alice"
        )
        assert not was_created and again.metadata.resourceVersion == created.metadata.resourceVersion

    def test_a_conflicting_apply_changes_nothing(self, store):
        from lightkube.resources import apps_v1

        store.apply(apps_v1.Deployment, "web", deployment_config("web", replicas=2), field_manager="alice")
        rv = store.resource_version
        with pytest.raises(ApplyConflict, match=re.escape('conflict with "alice": .spec.replicas')):
            store.apply(apps_v1.Deployment, "web", deployment_config("web", replicas=5), field_manager="bob")
        assert store.resource_version == rv and store.get(apps_v1.Deployment, "web").spec.replicas == 2
        forced, _ = store.apply(
            apps_v1.Deployment, "web", deployment_config("web", replicas=5), field_manager="bob", force=True
        )
        assert forced.spec.replicas == 5
        assert [e.manager for e in forced.metadata.managedFields] == ["alice", "bob"]

    @pytest.mark.parametrize(
        ("config", "message"),
        [
            ({**deployment_config("web"), "apiVersion": "apps/v1beta1"}, "Specified patch version: apps/v1beta1"),
            ({**deployment_config("web"), "kind": "ReplicaSet"}, "Incorrect kind specified in apply patch"),
            ({**deployment_config("other")}, "does not match the name on the URL (web)"),
            (
                {**deployment_config("web"), "metadata": {"name": "web", "managedFields": []}},
                "metadata.managedFields must be nil",
            ),
            ({**deployment_config("web"), "spec": {"replicas": "two"}}, "could not be applied"),
        ],
        ids=["version", "kind", "name", "managed-fields", "type"],
    )
    def test_a_bad_apply_configuration_is_refused(self, store, config, message):
        from lightkube.resources import apps_v1

        with pytest.raises(BadRequest, match=re.escape(message)):
            store.apply(apps_v1.Deployment, "web", config, field_manager="alice")
        with pytest.raises(NotFound):
            store.get(apps_v1.Deployment, "web")

    @pytest.mark.parametrize("metadata", [{"name": "web"}, None], ids=["named", "null"])
    def test_an_apply_takes_its_name_from_the_url_when_metadata_is_null(self, store, metadata):
        from lightkube.resources import apps_v1

        applied, created = store.apply(
            apps_v1.Deployment, "web", {**deployment_config("web"), "metadata": metadata}, field_manager="alice"
        )
        assert created and applied.metadata.name == "web"
        assert [e.manager for e in applied.metadata.managedFields] == ["alice"]

    def test_updates_with_a_manager_are_recorded_and_others_keep_the_entries(self, store):
        created = store.create(make_pod("p").obj, field_manager="kubectl-create")
        assert [(e.manager, e.operation) for e in created.metadata.managedFields] == [("kubectl-create", "Update")]
        labelled = store.patch(core_v1.Pod, "p", {"metadata": {"labels": {"tier": "a"}}}, field_manager="kubectl-label")
        assert {e.manager for e in labelled.metadata.managedFields} == {"kubectl-create", "kubectl-label"}
        label_entry = next(e for e in labelled.metadata.managedFields if e.manager == "kubectl-label")
        assert label_entry.fieldsV1 == {"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}  # the map is new too
        untracked = copy_object(labelled)
        untracked.metadata.managedFields = None  # left out: kept
        untracked.metadata.annotations = {"n": "1"}
        assert store.update(untracked).metadata.managedFields == labelled.metadata.managedFields
        cleared = copy_object(store.get(core_v1.Pod, "p"))
        cleared.metadata.managedFields = []  # [] clears them
        assert store.update(cleared).metadata.managedFields is None


def test_a_uid_drawn_never_repeats_one_restored():
    # A snapshot saved from a store of the same seed holds the UIDs this store would draw first.
    first = MemoryStore(clock=VirtualClock(), seed=3)
    saved = first.create(make_pod("saved").obj)
    again = MemoryStore(clock=VirtualClock(), seed=3)
    again.restore(saved)
    made = again.create(make_pod("made").obj)
    assert made.metadata.uid != saved.metadata.uid
    assert again.get(core_v1.Pod, "saved", namespace="default").metadata.uid == saved.metadata.uid
