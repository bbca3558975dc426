"""The PodGroup controller: a group's phase follows its pods, Pending to Finished."""

from __future__ import annotations

from lightkube.resources import core_v1

from kubesched_scheduler_plugins.apis import PodGroup
from kubesched_scheduler_plugins.podgroup_controller import PodGroupController
from objects import member, node, pod_group


def test_the_phases_follow_the_pods(cluster):
    cluster.create(node("n1", cpu="8", memory="8Gi"), pod_group("pg", 2))
    cluster.start()
    cluster.run_kubelets()
    task = cluster.clock.loop.create_task(PodGroupController(cluster.cluster, cluster.clock).run())

    def phase() -> str:
        pg = cluster.store.get(PodGroup, "pg", namespace="default")
        return pg.status.phase if pg.status is not None else ""

    try:
        cluster.clock.advance(0.1)
        assert phase() == "Pending"
        # Two pods that run for 5 seconds, then succeed.
        for name in ("a", "b"):
            cluster.create(member(name, "pg", annotations={"kubesched.io/run-seconds": "5"}))
        cluster.clock.advance(0.2)
        assert phase() in ("Scheduling", "Running")
        cluster.clock.advance(2)
        assert phase() == "Running"
        status = cluster.store.get(PodGroup, "pg", namespace="default").status
        assert (status.running, status.succeeded) == (2, 0)
        cluster.clock.advance(10)
        assert [p.status.phase for p in cluster.store.list(core_v1.Pod).items] == ["Succeeded", "Succeeded"]
        assert phase() == "Finished"
    finally:
        task.cancel()
        cluster.clock.advance(0.01)
