"""`kubesched run`'s core on the memory cluster (real clock, real sockets): scheduling, endpoints,
one leader among replicas, takeover, and SIGTERM draining and releasing the lease."""

from __future__ import annotations

import asyncio
import io
import socket

import aiohttp
import pytest
from lightkube.resources import coordination_v1, core_v1
from rich.console import Console

from builders import make_node, make_pod
from kubesched.apiserver.kubeconfig import write_kubeconfig
from kubesched.cli.run import Clients, RunOptions, serve
from kubesched.clock import RealClock
from kubesched.config import default_config
from kubesched.console import options
from kubesched.plugins.registry import in_tree_registry
from kubesched.storage import MemoryCluster, MemoryStore

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


def test_a_leader_whose_lease_client_goes_silent_stops_scheduling_and_exits_1_saying_why(capsys):
    async def main():
        clock, registry = RealClock(), in_tree_registry()
        store = MemoryStore(clock=clock)
        store.create(make_node("n1").capacity(cpu=4).obj)
        scheduling, elections = MemoryCluster(store), MemoryCluster(store)
        clients = Clients(scheduling, scheduling, elections)
        stop, urls = asyncio.Event(), []
        options = RunOptions(True, "127.0.0.1", 0, identity="a")
        console = Console(file=io.StringIO())
        task = asyncio.ensure_future(
            serve(
                clients,
                clock,
                config(registry, elect=True),
                registry,
                options,
                stop,
                ready=urls.append,
                console=console,
            )
        )
        store.create(make_pod("before").req(cpu="100m").obj)
        await until(lambda: bound(store, ["before"]))
        assert 'leader_election_master_status{name="kube-scheduler"} 1.0' in (await get(urls[0] + "/metrics"))[1]

        async def silent(*args, **kwargs):
            await asyncio.Event().wait()

        elections.get = silent  # the lease's own client hangs; scheduling traffic is untouched
        started = asyncio.get_running_loop().time()
        assert await asyncio.wait_for(task, 5) == 1  # LEASE_LOST, without being asked to stop
        assert asyncio.get_running_loop().time() - started <= 0.1 + 1.0 + 0.2  # retry period + renew deadline
        store.create(make_pod("after").req(cpu="100m").obj)
        await asyncio.sleep(0.3)
        assert not bound(store, ["after"])  # nothing schedules once the lease is lost

    asyncio.run(main())
    err = capsys.readouterr().err.strip()
    assert err.startswith("leader election lost: no renewal of Lease default/kube-scheduler within the renew deadline")
    assert "no answer from the API server" in err and "\n" not in err


def test_a_scheduler_that_cannot_go_on_exits_1_with_the_reason_in_one_line(capsys, monkeypatch):
    from kubesched.scheduler.informers import Informers

    def broken(self, event):
        raise RuntimeError("the handler broke")

    monkeypatch.setattr(Informers, "_on_node_event", broken)

    async def main():
        clock, registry = RealClock(), in_tree_registry()
        store = MemoryStore(clock=clock)
        stop = asyncio.Event()
        task = asyncio.ensure_future(
            serve(
                MemoryCluster(store),
                clock,
                config(registry, elect=False),
                registry,
                RunOptions(False, "127.0.0.1", 0),
                stop,
                console=Console(file=io.StringIO()),
            )
        )
        await asyncio.sleep(0.2)
        store.create(make_node("n1").capacity(cpu=4).obj)  # its watch event reaches the broken handler
        return await asyncio.wait_for(task, 5)  # without being asked to stop

    assert asyncio.run(main()) == 1
    err = capsys.readouterr().err.strip()
    assert err == "kubesched run stopped: the Node informer stopped: RuntimeError: the handler broke"


HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEADER + "bogus: 1\n", "{file}: Object contains unknown field `bogus`"),
        (
            HEADER + "profiles: [\n",
            "{file}: not valid YAML (line 4, column 1): did not find expected node content",
        ),  # libyaml's words, as go-yaml's
        ("", "{file}: Object 'Kind' is missing in ''"),  # kube-scheduler's decoder: an empty file has no kind
        ("profiles: []\n", """{file}: Object 'Kind' is missing in '{{"profiles":[]}}'"""),
        ("kind: KubeSchedulerConfiguration\n", "{file}: Object 'apiVersion' is missing in"),
    ],
    ids=["unknown-field", "not-yaml", "empty", "no-kind", "no-apiVersion"],
)
def test_a_bad_configuration_file_is_one_line_naming_the_option_and_the_file(tmp_path, capsys, text, message):
    from kubesched.cli.main import main

    bad = tmp_path / "config.yaml"
    bad.write_text(text)
    assert main(["run", "--config", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("--config: " + message.format(file=bad)) and "\n" not in err


def test_profiles_empty_is_the_default_profile_as_upstream_defaults_it(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(HEADER + "profiles: []\n")
    config = options.scheduler_config("--config", str(path), in_tree_registry())
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]


def test_bad_run_options_are_clear_errors_before_anything_starts(tmp_path, capsys):
    from kubesched.cli.main import main

    assert main(["run", "--metrics-bind", "abc"]) == 2
    assert "--metrics-bind: expected HOST:PORT, got 'abc'" in capsys.readouterr().err
    for lease, timings, message in (
        ("minimal", "15,10,2", "--lease: expected NAMESPACE/NAME, got 'minimal'"),
        ("default/m", "15,x,2", "--lease-timings: expected DURATION,RENEW,RETRY in seconds, got '15,x,2'"),
        (
            "default/m",
            "15,2,2",
            "--lease-timings: the lease duration must exceed the renew deadline, which must "
            "exceed 1.2 times the retry period, above 0 (got 15,2,2)",
        ),
    ):
        argv = ["minimal", "--kubeconfig", str(tmp_path / "k"), "--leader-elect", "--lease", lease]
        assert main([*argv, "--lease-timings", timings]) == 2
        assert capsys.readouterr().err.strip() == message
    assert main(["run", "--feature-gates", "SchedulerAsyncPreemption=maybe"]) == 2
    assert capsys.readouterr().err.strip() == (
        "--feature-gates: invalid value of SchedulerAsyncPreemption=maybe: want true or false"
    )
    assert main(["run", "--kubeconfig", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err


def test_a_metrics_port_in_use_is_one_line_naming_the_option(tmp_path, capsys):
    from kubesched.cli.main import main

    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "http://127.0.0.1:1")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["run", "--kubeconfig", str(kubeconfig), "--metrics-bind", f"127.0.0.1:{port}", "--no-leader-elect"]
        assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"--metrics-bind: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_the_result_store_flags_set_its_budget_or_turn_it_off(capsys):
    import argparse

    from kubesched.cli.main import main

    store = options.result_store(argparse.Namespace(results_budget=4, results_per_pod=3))
    assert store is not None and (store.budget, store.per_pod) == (4 * 2**20, 3)
    assert options.result_store(argparse.Namespace(results_budget=0, results_per_pod=8)) is None
    assert main(["run", "--results-budget", "-1"]) == 2
    assert capsys.readouterr().err.strip() == "--results-budget must be at least 0"
