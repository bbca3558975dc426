"""One framework per profile, keyed by scheduler name."""

from __future__ import annotations

from kubesched.cache import Snapshot
from kubesched.clock import RealClock
from kubesched.config import SchedulerConfig
from kubesched.framework import Framework, ProfilePlugins
from kubesched.framework.handle import Services
from kubesched.framework.registry import Registry


def build_frameworks(config: SchedulerConfig, registry: Registry, services: Services) -> dict[str, Framework]:
    frameworks: dict[str, Framework] = {}
    for profile in config.profiles:
        plugins = ProfilePlugins(
            enabled={p: [(x.name, x.weight) for x in s.enabled] for p, s in profile.sets.items()},
            disabled={p: {x.name for x in s.disabled} for p, s in profile.sets.items()},
            args=profile.args,
        )
        frameworks[profile.scheduler_name] = Framework(
            profile.scheduler_name,
            plugins,
            registry,
            services,
            percentage_of_nodes_to_score=profile.percentage_of_nodes_to_score,
        )
    return frameworks


def check_profiles(config: SchedulerConfig, registry: Registry) -> None:
    """Build every profile once, off any cluster, so that a configuration the scheduler would
    refuse (an unknown plugin, one that does not conform, a factory that fails) is refused now:
    FrameworkError."""
    build_frameworks(config, registry, Services(snapshot=Snapshot(), clock=RealClock()))
