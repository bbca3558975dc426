"""`kubesched run`: the long-running scheduler against a cluster — profiles from a
KubeSchedulerConfiguration, leader election on a Lease, `/healthz`, `/readyz` and `/metrics`;
SIGTERM lets the binding cycles under way finish and releases the lease."""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import signal
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from rich.console import Console

from kubesched import ui
from kubesched.cli.commands import Subparsers
from kubesched.cli.runtime import until_stopped
from kubesched.client import ConfigError as KubeConfigError
from kubesched.client import KubeCluster
from kubesched.clock import Clock, RealClock
from kubesched.cluster import Cluster
from kubesched.config import ConfigError, SchedulerConfig
from kubesched.config.duration import parse_duration
from kubesched.console import options as options_
from kubesched.framework import FrameworkError
from kubesched.framework.features import FeatureGateError, Features
from kubesched.framework.registry import Registry
from kubesched.minimal import MinimalScheduler
from kubesched.scheduler import Scheduler
from kubesched.scheduler.discovery import PluginLoadError
from kubesched.scheduler.discovery import controllers as discovered_controllers
from kubesched.scheduler.leader import JITTER, LeaderElector, LeaseSettings
from kubesched.scheduler.results import ResultStore
from kubesched.scheduler.server import DEFAULT_PORT, SchedulerServer
from kubesched.trace import Sink, Tracer

DRAIN_SECONDS = 10.0
LEASE_LOST = 1  # the exit code when the lease is lost, as kube-scheduler exits then
FAILED = 1  # the exit code when the scheduler cannot go on


@dataclass
class RunOptions:
    leader_elect: bool
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    identity: str = ""
    results: ResultStore | None = field(default_factory=ResultStore)  # None: record no attempts
    features: Features = field(default_factory=Features)


def identity() -> str:
    """`<hostname>_<uuid>`, the holder identity kube-scheduler uses."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def lease_settings(config: SchedulerConfig, holder: str) -> LeaseSettings:
    le = config.configuration.leaderElection
    return LeaseSettings(
        name=le.resourceName,
        namespace=le.resourceNamespace,
        identity=holder,
        lease_duration=parse_duration(le.leaseDuration),
        renew_deadline=parse_duration(le.renewDeadline),
        retry_period=parse_duration(le.retryPeriod),
    )


@dataclass(frozen=True)
class Clients:
    """The three clients kube-scheduler keeps, each with its own rate limit: one for scheduling
    (informers, bindings, status), one for Events, one for leader election (its requests bounded
    by the renew deadline)."""

    scheduling: Cluster
    events: Cluster
    leader_election: Cluster
    connections: tuple[KubeCluster, ...] = ()  # what `close` closes

    @classmethod
    def shared(cls, cluster: Cluster) -> Clients:
        """One client for everything (an in-process cluster, which has no rate limit)."""
        return cls(cluster, cluster, cluster)

    @classmethod
    def of(cls, cluster: KubeCluster, *, renew_deadline: float) -> Clients:
        events, elections = cluster.client("events"), cluster.client("leader-election", timeout=renew_deadline)
        return cls(cluster, events, elections, (cluster, events, elections))

    async def close(self) -> None:
        for connection in self.connections:
            await connection.close()


async def serve(
    clients: Cluster | Clients,
    clock: Clock,
    config: SchedulerConfig,
    registry: Registry,
    options: RunOptions,
    stop: asyncio.Event,
    *,
    console: Console | None = None,
    ready: Callable[[str], object] | None = None,
) -> int:
    """Run until `stop` is set (0), the lease is lost (LEASE_LOST) or the scheduler cannot go on
    (FAILED), the reason printed as one line on stderr. `ready(server_url)` is called once the
    endpoints listen."""
    if not isinstance(clients, Clients):
        clients = Clients.shared(clients)
    holder = options.identity or identity()
    scheduler = Scheduler(
        clients.scheduling,
        clock,
        config,
        registry,
        identity=holder,
        events_cluster=clients.events,
        features=options.features,
    )
    scheduler.results = options.results
    server, url = await _endpoints(scheduler, options)

    def say(text: str) -> None:
        if console is not None:
            console.print(text, soft_wrap=True)

    say(f"kubesched scheduling {', '.join(scheduler.profiles)} as {holder}; endpoints at {url} (the UI: {url}/ui/)")
    if ready is not None:
        ready(url)
    elector = LeaderElector(clients.leader_election, clock, lease_settings(config, holder), tracer=scheduler.trace)
    scheduler.metrics.watch_leader(elector)

    halt = asyncio.Event()  # SIGTERM, or the scheduler cannot go on
    relays = [asyncio.ensure_future(_relay(e, halt)) for e in (stop, scheduler.informers.failed)]
    failures: list[BaseException] = []

    lead = functools.partial(_lead, scheduler, halt, failures)

    if options.leader_elect and not config.configuration.delayCacheUntilActive:
        await scheduler.start()  # a standby keeps its cache warm (and answers /readyz), as upstream's default
    try:
        if options.leader_elect:
            await _campaign(elector, lead, halt)
        else:
            await lead()
    finally:
        for relay in relays:
            relay.cancel()
        await scheduler.stop()  # a standby's informers, too
        await server.stop()
    return _exit_status(scheduler, elector, failures, console)


async def _lead(scheduler: Scheduler, halt: asyncio.Event, failures: list[BaseException]) -> None:
    """Schedule until `halt`, then drain the bindings and events; what stopped it is kept in `failures`."""
    task = asyncio.ensure_future(scheduler.run())
    halting = asyncio.ensure_future(halt.wait())
    await asyncio.wait({task, halting}, return_when=asyncio.FIRST_COMPLETED)
    halting.cancel()
    await scheduler.drain(DRAIN_SECONDS)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    if not task.cancelled() and (raised := task.exception()) is not None:
        failures.append(raised)


async def _endpoints(scheduler: Scheduler, options: RunOptions) -> tuple[SchedulerServer, str]:
    """The scheduler's endpoints and its read-only UI, listening (UsageError when they cannot)."""
    server = SchedulerServer(scheduler, options.host, options.port)
    ui.mount(server.app, ui.Mirror(scheduler))  # read-only: it shows what this scheduler sees
    try:
        return server, await server.start()
    except OSError as e:
        why = os.strerror(e.errno) if e.errno else str(e)
        raise options_.UsageError(f"--metrics-bind: cannot listen on {options.host}:{options.port}: {why}") from None


async def _campaign(elector: LeaderElector, lead: Callable[[], Awaitable[None]], halt: asyncio.Event) -> None:
    """Stand for the lease and lead when it is won, until `halt`: a leader then drains and
    releases; a candidate still waiting just leaves."""
    campaign = asyncio.ensure_future(elector.run(lead))
    halting = asyncio.ensure_future(halt.wait())
    await asyncio.wait({campaign, halting}, return_when=asyncio.FIRST_COMPLETED)
    if not campaign.done():
        if not elector.leading:
            campaign.cancel()
        await asyncio.gather(campaign, return_exceptions=True)
    halting.cancel()


def _exit_status(
    scheduler: Scheduler, elector: LeaderElector, failures: list[BaseException], console: Console | None
) -> int:
    """0; FAILED when the scheduler could not go on; LEASE_LOST when the lease was lost (why on stderr)."""
    reason = scheduler.informers.failure or next((f"{type(f).__name__}: {f}" for f in failures), None)
    if reason is not None:
        if console is not None:
            options_.print_error(console, f"kubesched run stopped: {reason}")
        return FAILED
    if elector.lost is not None:
        if console is not None:
            options_.print_error(console, elector.lost.describe(elector.settings))
        return LEASE_LOST
    return 0


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()


def connect(kubeconfig: str | None, config: SchedulerConfig) -> Clients:
    """The cluster to schedule for: `--kubeconfig`, else the configuration's
    `clientConnection.kubeconfig`, else in-cluster credentials when running in a pod, else
    `$KUBECONFIG` or `~/.kube/config`; each client with `clientConnection`'s qps and burst."""
    connection = config.configuration.clientConnection
    path = kubeconfig or connection.kubeconfig or None
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        cluster = KubeCluster.in_cluster(qps=connection.qps, burst=connection.burst)
    else:
        cluster = KubeCluster.from_kubeconfig(path, qps=connection.qps, burst=connection.burst)
    renew_deadline = parse_duration(config.configuration.leaderElection.renewDeadline)
    return Clients.of(cluster, renew_deadline=renew_deadline)


def _features(text: str) -> Features:
    try:
        return Features.parse(text)
    except FeatureGateError as e:
        raise options_.UsageError(f"--feature-gates: {e}") from None


def run_command(console: Console, args: argparse.Namespace) -> int:
    """`kubesched run`: until SIGTERM/SIGINT (0), a lost lease or a fatal error (1); bad options 2."""
    try:
        registry = options_.registry(args.plugin)
        config = options_.scheduler_config("--config", args.config, registry)
        host, port = options_.host_port("--metrics-bind", args.metrics_bind, default_host="0.0.0.0")
        options = RunOptions(
            leader_elect=config.configuration.leaderElection.leaderElect
            if args.leader_elect is None
            else args.leader_elect,
            host=host,
            port=port,
            results=options_.result_store(args),
            features=_features(args.feature_gates),
        )
        clients = connect(args.kubeconfig, config)
    except (ConfigError, FrameworkError, KubeConfigError, OSError, ValueError, options_.UsageError) as e:
        options_.print_error(console, str(e))
        return 2

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            return await serve(clients, RealClock(), config, registry, options, stop, console=console)
        except options_.UsageError as e:
            options_.print_error(console, str(e))
            return 2
        finally:
            await clients.close()

    return asyncio.run(main())


def minimal_lease(args: argparse.Namespace) -> LeaseSettings:
    """`kubesched minimal --leader-elect`'s Lease: `--lease` and `--lease-timings`, a new identity."""
    namespace, _, name = (args.lease or f"kube-system/{args.scheduler_name}").rpartition("/")
    if not namespace or not name:
        raise options_.UsageError(f"--lease: expected NAMESPACE/NAME, got {args.lease!r}")
    try:
        duration, renew, retry = (float(x) for x in args.lease_timings.split(","))
    except ValueError:
        raise options_.UsageError(
            f"--lease-timings: expected DURATION,RENEW,RETRY in seconds, got {args.lease_timings!r}"
        ) from None
    if not (duration > renew > JITTER * retry and retry > 0):
        raise options_.UsageError(
            f"--lease-timings: the lease duration must exceed the renew deadline, which must exceed {JITTER:g} times "
            f"the retry period, above 0 (got {args.lease_timings})"
        )
    return LeaseSettings(name, namespace, identity(), duration, renew, retry)


def minimal_command(
    console: Console, kubeconfig: str, name: str, sinks: Sequence[Sink] = (), *, lease: LeaseSettings | None = None
) -> int:
    """`kubesched minimal --kubeconfig K`: the from-scratch scheduler for a real cluster, until
    SIGINT/SIGTERM (0) or, with `lease`, until the lease is lost (LEASE_LOST)."""
    try:
        cluster = KubeCluster.from_kubeconfig(kubeconfig)
    except (KubeConfigError, OSError) as e:
        options_.print_error(console, str(e))
        return 2
    clock = RealClock()
    tracer = Tracer(clock.now)
    for sink in sinks:
        tracer.add_sink(sink)

    async def schedule() -> None:
        await MinimalScheduler(cluster, clock, name=name, tracer=tracer).run()

    async def main() -> int:
        elector, elections = None, None
        work: Awaitable[object]
        if lease is None:
            work = schedule()
            console.print(f"the from-scratch scheduler is binding pods with schedulerName {name}", soft_wrap=True)
        else:
            elections = cluster.client("leader-election", timeout=lease.renew_deadline)
            elector = LeaderElector(elections, clock, lease)
            work = elector.run(schedule)
            console.print(
                f"the from-scratch scheduler for schedulerName {name} campaigns for Lease "
                f"{lease.namespace}/{lease.name} as {lease.identity}",
                soft_wrap=True,
            )
        try:
            await until_stopped(work)
        finally:
            await cluster.close()
            if elections is not None:
                await elections.close()
        if elector is not None and elector.lost is not None:
            options_.print_error(console, elector.lost.describe(elector.settings))
            return LEASE_LOST
        return 0

    return asyncio.run(main())


def controllers_command(console: Console, kubeconfig: str | None) -> int:
    """`kubesched controllers`: the installed packages' controllers against a cluster, until SIGINT/SIGTERM."""
    try:
        entries = discovered_controllers()
        in_pod = kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST")
        cluster = KubeCluster.in_cluster() if in_pod else KubeCluster.from_kubeconfig(kubeconfig)
    except (PluginLoadError, KubeConfigError, OSError) as e:
        options_.print_error(console, str(e))
        return 2
    if not entries:
        options_.print_error(console, "no installed package declares a controller (entry points kubesched.controllers)")
        return 2
    clock = RealClock()

    async def main() -> int:
        tasks = [asyncio.ensure_future(e.factory(cluster, clock).run()) for e in entries]
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: [t.cancel() for t in tasks])
        for e in entries:
            console.print(f"controller {e.name} ({e.source}) is running", soft_wrap=True)
        try:
            done = await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await cluster.close()
        failures = [d for d in done if isinstance(d, Exception) and not isinstance(d, asyncio.CancelledError)]
        for failure in failures:
            options_.print_error(console, f"a controller stopped: {type(failure).__name__}: {failure}")
        return 1 if failures else 0

    return asyncio.run(main())


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    run = sub.add_parser(name, help=help)
    run.set_defaults(run=run_command)
    run.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration (default: the default profile)")
    run.add_argument("--kubeconfig", metavar="K", help="default: clientConnection.kubeconfig, in-cluster, $KUBECONFIG")
    run.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="campaign for the Lease before scheduling (default: leaderElection.leaderElect)",
    )
    run.add_argument(
        "--metrics-bind",
        default="127.0.0.1:10259",
        metavar="HOST:PORT",
        help="where /healthz, /readyz, /metrics and /debug/queue are served, over plain HTTP without "
        "authentication (default 127.0.0.1:10259, this machine only; in a pod, its own address to be probed)",
    )
    run.add_argument(
        "--feature-gates",
        default="",
        metavar="GATE=BOOL,...",
        help="as kube-scheduler's (default: v1.36.2's): SchedulerAsyncPreemption=false removes victims on the "
        "scheduling thread",
    )
    options_.add_results_options(run)
    options_.add_plugin_option(run)


def add_controllers_parser(sub: Subparsers, name: str, help: str) -> None:
    ctl = sub.add_parser(name, help=help)
    ctl.set_defaults(run=_controllers)
    ctl.add_argument("--kubeconfig", metavar="K", help="default: $KUBECONFIG or ~/.kube/config")


def _controllers(console: Console, args: argparse.Namespace) -> int:
    return controllers_command(console, args.kubeconfig)
