"""`kubesched run`'s core on the memory cluster (real clock, real sockets): scheduling, endpoints,
one leader among replicas, takeover, and SIGTERM draining and releasing the lease."""

from __future__ import annotations

import asyncio

import aiohttp
from lightkube.resources import coordination_v1, core_v1

from builders import make_node, make_pod
from kubesched.cli.run import RunOptions, serve
from kubesched.clock import RealClock
from kubesched.cluster.memory import MemoryCluster, MemoryStore
from kubesched.config import default_config
from kubesched.plugins.registry import in_tree_registry

FAST_LEASE = {"leaseDuration": "1500ms", "renewDeadline": "1s", "retryPeriod": "100ms", "resourceNamespace": "default"}


def config(registry, *, elect: bool):
    return default_config(registry, leaderElection={**FAST_LEASE, "leaderElect": elect})


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


async def until(predicate, timeout=5.0):
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def bound(store, names):
    return all(store.get(core_v1.Pod, n, namespace="default").spec.nodeName for n in names)


def test_run_schedules_serves_its_endpoints_and_stops_on_request():
    async def main():
        clock, registry = RealClock(), in_tree_registry()
        store = MemoryStore(clock=clock)
        store.create(make_node("n1").capacity(cpu=4).obj)
        cluster, stop, urls = MemoryCluster(store), asyncio.Event(), []
        task = asyncio.ensure_future(
            serve(
                cluster,
                clock,
                config(registry, elect=False),
                registry,
                RunOptions(False, "127.0.0.1", 0),
                stop,
                ready=urls.append,
            )
        )
        for i in range(5):
            store.create(make_pod(f"p{i}").req(cpu="100m").obj)
        await until(lambda: urls and bound(store, [f"p{i}" for i in range(5)]))
        assert await get(urls[0] + "/healthz") == (200, "ok")
        assert (await get(urls[0] + "/readyz"))[0] == 200
        metrics = (await get(urls[0] + "/metrics"))[1]
        assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 5.0' in metrics
        stop.set()
        assert await asyncio.wait_for(task, 5) == 0

    asyncio.run(main())


def test_one_replica_leads_the_other_takes_over_when_it_stops_and_the_lease_is_released():
    async def main():
        clock, registry = RealClock(), in_tree_registry()
        store = MemoryStore(clock=clock)
        store.create(make_node("n1").capacity(cpu=4).obj)
        cluster = MemoryCluster(store)
        replicas = []
        for name in ("a", "b"):
            stop, urls = asyncio.Event(), []
            options = RunOptions(True, "127.0.0.1", 0, identity=name)
            task = asyncio.ensure_future(
                serve(cluster, clock, config(registry, elect=True), registry, options, stop, ready=urls.append)
            )
            replicas.append((name, stop, urls, task))
            await asyncio.sleep(0.3)
        store.create(make_pod("first").req(cpu="100m").obj)
        await until(lambda: bound(store, ["first"]))
        lease = store.get(coordination_v1.Lease, "kube-scheduler", namespace="default")
        assert lease.spec.holderIdentity == "a"
        assert (await get(replicas[1][2][0] + "/readyz"))[0] == 200  # b waits with its cache warm
        assert store.get(core_v1.Pod, "first", namespace="default").spec.nodeName  # bound once, by a
        replicas[0][1].set()  # SIGTERM to the leader: it drains and releases
        assert await asyncio.wait_for(replicas[0][3], 5) == 0
        store.create(make_pod("second").req(cpu="100m").obj)
        await until(lambda: bound(store, ["second"]), timeout=3)
        assert store.get(coordination_v1.Lease, "kube-scheduler", namespace="default").spec.holderIdentity == "b"
        replicas[1][1].set()
        assert await asyncio.wait_for(replicas[1][3], 5) == 0

    asyncio.run(main())


def test_bad_run_options_are_clear_errors_before_anything_starts(tmp_path, capsys):
    from kubesched.cli.main import main

    assert main(["run", "--metrics-bind", "abc"]) == 2
    assert "--metrics-bind: expected HOST:PORT, got 'abc'" in capsys.readouterr().out
    bad = tmp_path / "config.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nbogus: 1\n")
    assert main(["run", "--config", str(bad)]) == 2
    assert "bogus" in capsys.readouterr().out
    assert main(["run", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().out
