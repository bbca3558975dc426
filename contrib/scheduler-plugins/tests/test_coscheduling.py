"""Coscheduling: a PodGroup's pods are placed all together or not at all."""

from __future__ import annotations

import pytest

from kubesched.plugin.testing import framework
from kubesched_scheduler_plugins.coscheduling import NAME, SPEC, CoschedulingArgs
from objects import member, node, pod_group

SIX = [f"p{i}" for i in range(6)]


def nodes(count: int) -> list:
    return [node(f"n{i}", cpu="1", memory="4Gi") for i in range(count)]  # room for one 1-CPU pod each


def test_the_default_profile_binds_what_fits_of_a_group(cluster):
    cluster.create(*nodes(3), pod_group("pg1", 4))
    cluster.create(*(member(name, "pg1", scheduler="default-scheduler") for name in SIX))
    cluster.start({})
    cluster.clock.advance(20)
    assert len(cluster.bound()) == 3  # a partial gang: the default scheduler knows nothing of groups


def test_coscheduling_binds_none_of_a_group_that_cannot_all_fit(cluster):
    cluster.create(*nodes(3), pod_group("pg1", 4))
    cluster.create(*(member(name, "pg1") for name in SIX))
    cluster.start()
    cluster.clock.advance(3)
    assert cluster.bound() == {}
    messages = cluster.messages()
    # The fourth pod finds no room; the group is rejected, and so are the siblings waiting at Permit.
    assert any(
        "0/3 nodes are available: 3 Insufficient cpu." in m
        and "PodGroup default/pg1 gets rejected due to Pod" in m
        and "is unschedulable even after PostFilter" in m
        for m in messages
    ), messages
    assert "0/1 nodes are available: 1 optimistic rejection in PostFilter." in messages
    # Upstream's default arguments keep retrying such a group (sibling activation skips backoff):
    # with podGroupBackoffSeconds it backs off instead, refused at PreFilter.


def test_a_group_with_room_binds_together(cluster):
    cluster.create(*nodes(4), pod_group("pg1", 4))
    cluster.create(*(member(name, "pg1") for name in SIX))
    cluster.start()
    cluster.clock.advance(30)
    bound = cluster.bound()
    assert len(bound) == 4 and len(set(bound.values())) == 4  # one per node: the whole minimum, together


def test_too_few_pods_for_the_group_stop_at_pre_filter(cluster):
    cluster.create(*nodes(4), pod_group("pg1", 4))
    cluster.create(*(member(name, "pg1") for name in SIX[:3]))
    cluster.start()
    cluster.clock.advance(5)
    assert cluster.bound() == {}
    # PreFilter's reason for every node, then the PostFilters' in order (DynamicResources,
    # DefaultPreemption, Coscheduling, CapacityScheduling): nothing to deallocate, no victims, the
    # group rejected, and no quota state (CapacityScheduling's PreFilter did not run), as upstream.
    assert (
        "0/4 nodes are available: pre-filter pod p0 cannot find enough sibling pods, current pods number: 3, "
        "minMember of group: 4. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is "
        "not helpful for scheduling., PodGroup default/pg1 gets rejected due to Pod p0 is unschedulable even after "
        "PostFilter, not eligible due to failed to read from cycleState"
    ) in cluster.messages()
    cluster.create(member("p3", "pg1"))  # the fourth pod arrives: a Pod/Add event requeues the others
    cluster.clock.advance(30)
    assert len(cluster.bound()) == 4


def test_a_permit_timeout_releases_what_was_reserved(cluster):
    cluster.create(*nodes(3), pod_group("pg1", 4, scheduleTimeoutSeconds=5))
    cluster.create(*(member(name, "pg1") for name in SIX[:4]))
    config = {
        "profiles": [
            {
                "schedulerName": "scheduler-plugins-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": NAME}], "disabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": NAME, "args": {"podGroupRejectPercentage": 100}}],  # never reject early
            }
        ]
    }
    scheduler = cluster.start(config)

    def assumed() -> set[str]:
        return {p.metadata.name for p in cluster.pods() if scheduler.cache.is_assumed(p.metadata.uid)}

    cluster.clock.advance(2)
    waiting = assumed()
    assert len(waiting) == 3 and cluster.bound() == {}  # held at Permit, their nodes reserved
    assert "p3" not in waiting  # no room left for the fourth
    cluster.clock.advance(4)
    assert "p3" in assumed()  # the timeout released the nodes the three held: the fourth now got one
    assert cluster.bound() == {}
    messages = cluster.messages()
    # The first to time out is rejected by the timeout; its Unreserve rejects its waiting siblings.
    assert (
        messages.count("0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Coscheduling.")
        == 1
    )
    assert messages.count("0/1 nodes are available: 1 rejection in Unreserve.") == 2


def test_group_creation_orders_the_queue():
    from kubesched.plugin import PodInfo, QueuedPodInfo
    from kubesched.plugin.testing import standalone_handle

    plugin = SPEC.factory(None, standalone_handle())
    first, second = member("b", "g1"), member("a", "g2")
    qa, qb = QueuedPodInfo(PodInfo(first), timestamp=1.0), QueuedPodInfo(PodInfo(second), timestamp=2.0)
    assert plugin.less(qa, qb)  # no PodGroup objects: the queue times decide
    qb.timestamp = qa.timestamp = 1.0
    assert plugin.less(qb, qa)  # a tie: by namespace/name, "default/a" first


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"permitWaitingTimeSeconds": -10}, "permitWaitingTimeSeconds: Invalid value: -10: must be greater than 0"),
        ({"podGroupRejectPercentage": 101}, "podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100"),
        (
            {"permitWaitingTimeSeconds": -30, "podGroupBackoffSeconds": -20},
            "[permitWaitingTimeSeconds: Invalid value: -30: must be greater than 0, "
            "podGroupBackoffSeconds: Invalid value: -20: must be greater than 0]",
        ),
    ],
)
def test_arguments_are_validated_with_upstreams_messages(args, message):
    with pytest.raises(Exception) as err:
        framework({NAME: SPEC}, args={NAME: args})
    assert message in str(err.value)


def test_the_defaults_are_upstreams():
    args = CoschedulingArgs()
    assert (args.permitWaitingTimeSeconds, args.podGroupBackoffSeconds, args.podGroupRejectPercentage) == (60, 0, 10)


def test_a_rejected_group_backs_off_with_pod_group_backoff_seconds(cluster):
    cluster.create(*nodes(3), pod_group("pg1", 4))
    cluster.create(*(member(name, "pg1") for name in SIX))
    config = {
        "profiles": [
            {
                "schedulerName": "scheduler-plugins-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": NAME}], "disabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": NAME, "args": {"podGroupBackoffSeconds": 60}}],
            }
        ]
    }
    scheduler = cluster.start(config)
    cluster.clock.advance(30)
    assert cluster.bound() == {}
    assert any(
        m.startswith("0/3 nodes are available: podGroup default/pg1 failed recently.") for m in cluster.messages()
    )
    assert scheduler.attempts < 60  # no retry storm


def test_two_scheduler_names_in_one_process(cluster):
    """The default profile and scheduler-plugins-scheduler side by side, six nodes of room for two
    groups of four: Coscheduling places its group whole, the default profile what room is left of its."""
    cluster.create(*nodes(6), pod_group("mine", 4), pod_group("theirs", 4))
    cluster.create(*(member(f"d{i}", "theirs", scheduler="default-scheduler") for i in range(4)))
    cluster.create(*(member(f"c{i}", "mine") for i in range(4)))
    scheduler = cluster.start("two-profiles.yaml")
    assert set(scheduler.profiles) == {"default-scheduler", "scheduler-plugins-scheduler"}
    cluster.clock.advance(20)
    bound = cluster.bound()
    assert sorted(n for n in bound if n.startswith("c")) == ["c0", "c1", "c2", "c3"]  # the whole group
    assert len([n for n in bound if n.startswith("d")]) == 2  # part of a group: the default knows none
    reporters = {e.regarding.name: e.reportingController for e in cluster.events("Scheduled")}
    assert {reporters[n] for n in bound if n.startswith("c")} == {"scheduler-plugins-scheduler"}
    assert {reporters[n] for n in bound if n.startswith("d")} == {"default-scheduler"}
