"""`kubesched run`: the long-running scheduler against a cluster — profiles from a
KubeSchedulerConfiguration, leader election on a Lease, `/healthz`, `/readyz` and `/metrics`;
SIGTERM lets the binding cycles under way finish and releases the lease."""

from __future__ import annotations

import asyncio
import socket
import uuid
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from kubesched.clock import Clock
from kubesched.cluster import Cluster
from kubesched.config import SchedulerConfig
from kubesched.config.duration import parse_duration
from kubesched.framework.registry import Registry
from kubesched.scheduler import Scheduler
from kubesched.scheduler.leader import LeaderElector, LeaseSettings
from kubesched.scheduler.server import DEFAULT_PORT, SchedulerServer

DRAIN_SECONDS = 10.0
LEASE_LOST = 1  # the exit code when the lease is lost, as kube-scheduler exits then


@dataclass
class RunOptions:
    leader_elect: bool
    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    identity: str = ""


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


async def serve(
    cluster: Cluster,
    clock: Clock,
    config: SchedulerConfig,
    registry: Registry,
    options: RunOptions,
    stop: asyncio.Event,
    *,
    console: Console | None = None,
    ready: Any = None,
) -> int:
    """Run until `stop` is set (0) or the lease is lost (LEASE_LOST). `ready(server_url)` is
    called once the endpoints listen."""
    holder = options.identity or identity()
    scheduler = Scheduler(cluster, clock, config, registry, identity=holder)
    server = SchedulerServer(scheduler, options.host, options.port)
    url = await server.start()

    def say(text: str) -> None:
        if console is not None:
            console.print(text)

    say(f"kubesched scheduling {', '.join(scheduler.profiles)} as {holder}; endpoints at {url}")
    if ready is not None:
        ready(url)
    lost = False

    async def lead() -> None:
        task = asyncio.ensure_future(scheduler.run())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        await scheduler.drain(DRAIN_SECONDS)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    if options.leader_elect and not config.configuration.delayCacheUntilActive:
        await scheduler.start()  # a standby keeps its cache warm (and answers /readyz), as upstream's default
    try:
        if options.leader_elect:
            elector = LeaderElector(cluster, clock, lease_settings(config, holder), tracer=scheduler.trace)
            campaign = asyncio.ensure_future(elector.run(lead))
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({campaign, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if campaign.done():
                lost = not stop.is_set()
            else:  # stopped: let a leader drain and release; a waiting candidate just leaves
                if not elector.leading:
                    campaign.cancel()
                await asyncio.gather(campaign, return_exceptions=True)
            stopping.cancel()
        else:
            await lead()
    finally:
        await scheduler.stop()  # a standby's informers, too
        await server.stop()
    if lost:
        say("[red]leader election lost[/red]")
        return LEASE_LOST
    return 0
