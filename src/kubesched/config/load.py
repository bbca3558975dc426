"""Reading a KubeSchedulerConfiguration: decode strictly, default and validate as upstream does,
and merge each profile's plugins with the default plugin set."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import msgspec

from kubesched.api import yamlfile
from kubesched.api.objects import Model, present
from kubesched.config.defaults import default_plugins
from kubesched.config.duration import parse_duration
from kubesched.config.types import (
    API_VERSION,
    DEFAULT_SCHEDULER_NAME,
    KIND,
    Configuration,
    LeaderElection,
    Plugin,
    PluginSet,
    Profile,
)
from kubesched.framework.args import ArgsError, ValidatingArgs, decode_args
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import EXTENSION_POINTS

M = TypeVar("M", bound=Model)


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the offending field."""


@dataclass
class ProfileConfig:
    """One profile, ready for the framework: merged plugin sets per extension point (plus
    `multiPoint`), and each plugin's decoded arguments."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    sets: dict[str, PluginSet]
    args: dict[str, object] = field(default_factory=dict)


@dataclass
class SchedulerConfig:
    configuration: Configuration
    profiles: list[ProfileConfig]

    @property
    def percentage_of_nodes_to_score(self) -> int:
        return self.configuration.percentageOfNodesToScore or 0


def _path(location: str) -> str:
    return location.removeprefix("$").removeprefix(".") or "(root)"


def _convert(data: object, kind: type[M], where: str) -> M:
    try:
        return msgspec.convert(data, kind, strict=False)
    except msgspec.ValidationError as e:
        text = str(e)
        match = re.search(r" - at `([^`]*)`$", text)
        location = _path(match.group(1)) if match else ""
        message = text[: match.start()] if match else text
        prefix = f"{where}.{location}" if where and location not in ("", "(root)") else (where or location)
        raise ConfigError(f"{prefix}: {message}" if prefix else message) from None


def load_file(path: str | Path, registry: Registry) -> SchedulerConfig:
    """The configuration in a file; every error's message starts with the file's name."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    return load_text(text, registry, source=str(path))


def load_text(text: str, registry: Registry, *, source: str = "config") -> SchedulerConfig:
    """The configuration in `text`; errors start with `source`. An empty document is refused as
    kube-scheduler's decoder refuses it (it has no kind)."""
    try:
        data = yamlfile.parse(text, source)
    except yamlfile.YamlError as e:
        raise ConfigError(str(e)) from None
    for field_ in ("Kind", "apiVersion"):  # the decoder's first questions, asked as it asks them
        if data is None or (isinstance(data, dict) and not data.get(field_[0].lower() + field_[1:])):
            shown = "" if data is None else json.dumps(data, separators=(",", ":"), default=str)
            raise ConfigError(f"{source}: Object '{field_}' is missing in '{shown}'")
    try:
        return load_data(data, registry)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def default_config(registry: Registry, **fields: object) -> SchedulerConfig:
    """The configuration with upstream's defaults, plus top-level `fields` (e.g. `profiles`)."""
    return load_data({"apiVersion": API_VERSION, "kind": KIND, **fields}, registry)


def load_data(data: object, registry: Registry) -> SchedulerConfig:
    if not isinstance(data, dict):
        raise ConfigError("a KubeSchedulerConfiguration must be a mapping")
    config: Configuration = _convert(data, Configuration, "")
    if config.apiVersion != API_VERSION:
        raise ConfigError(f'apiVersion: Unsupported value: "{config.apiVersion}": supported values: "{API_VERSION}"')
    if config.kind != KIND:
        raise ConfigError(f'kind: Unsupported value: "{config.kind}": supported values: "{KIND}"')
    _validate(config)
    raw_profiles = config.profiles or [Profile()]
    if len(raw_profiles) == 1 and not raw_profiles[0].schedulerName:
        raw_profiles[0].schedulerName = DEFAULT_SCHEDULER_NAME
    profiles: list[ProfileConfig] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_profiles):
        name = raw.schedulerName or ""
        if not name:
            raise ConfigError(f"profiles[{i}].schedulerName: Required value")
        if name in seen:
            raise ConfigError(f'profiles[{i}].schedulerName: Duplicate value: "{name}"')
        seen.add(name)
        pct = raw.percentageOfNodesToScore
        if pct is not None and not 0 <= pct <= 100:
            raise ConfigError(
                f"profiles[{i}].percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]"
            )
        profiles.append(_profile(i, raw, registry))
    _same_queue_sort(profiles)
    return SchedulerConfig(config, profiles)


def _validate(config: Configuration) -> None:
    if config.parallelism <= 0:
        raise ConfigError(
            f"parallelism: Invalid value: {config.parallelism}: should be an integer value greater than zero"
        )
    pct = config.percentageOfNodesToScore
    if pct is not None and not 0 <= pct <= 100:
        raise ConfigError(f"percentageOfNodesToScore: Invalid value: {pct}: not in valid range [0-100]")
    if config.podInitialBackoffSeconds <= 0:
        raise ConfigError(
            f"podInitialBackoffSeconds: Invalid value: {config.podInitialBackoffSeconds}: must be greater than 0"
        )
    if config.podMaxBackoffSeconds < config.podInitialBackoffSeconds:
        raise ConfigError(
            f"podMaxBackoffSeconds: Invalid value: {config.podMaxBackoffSeconds}: "
            "must be greater than or equal to PodInitialBackoffSeconds"
        )
    if config.extenders:
        raise ConfigError("extenders: Forbidden: scheduler extenders are not supported")
    if config.leaderElection.leaderElect:
        _validate_leader_election(config.leaderElection)


def _validate_leader_election(le: LeaderElection) -> None:
    seconds: dict[str, float] = {}
    for name in ("leaseDuration", "renewDeadline", "retryPeriod"):
        value = getattr(le, name)
        try:
            seconds[name] = parse_duration(value)
        except ValueError as e:
            raise ConfigError(f'leaderElection.{name}: Invalid value: "{value}": {e}') from None
        if seconds[name] <= 0:
            raise ConfigError(f'leaderElection.{name}: Invalid value: "{value}": must be greater than zero')
    if seconds["leaseDuration"] <= seconds["renewDeadline"]:
        raise ConfigError(
            f'leaderElection.leaseDuration: Invalid value: "{le.renewDeadline}": '
            "LeaseDuration must be greater than RenewDeadline"
        )
    for name in ("resourceLock", "resourceName", "resourceNamespace"):
        if not getattr(le, name):
            raise ConfigError(f'leaderElection.{name}: Invalid value: "": {name} is required')


def merge_plugin_set(default: PluginSet, custom: PluginSet | None) -> PluginSet:
    """Upstream's merge: disabled names (or "*") drop defaults; a custom plugin named like a default
    replaces it in place; the other custom plugins follow the defaults."""
    if custom is None:
        return PluginSet(enabled=list(default.enabled), disabled=list(default.disabled))
    disabled = [Plugin(name=p.name) for p in custom.disabled] + [Plugin(name=p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_by_name = {p.name: (i, p) for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            if plugin.name in custom_by_name:
                index, plugin = custom_by_name[plugin.name]
                replaced.add(index)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=disabled)


def _profile(index: int, raw: Profile, registry: Registry) -> ProfileConfig:
    where = f"profiles[{index}]"
    defaults = default_plugins()
    sets: dict[str, PluginSet] = {}
    custom = raw.plugins
    for point in (*EXTENSION_POINTS, "multiPoint"):
        sets[point] = merge_plugin_set(defaults.get(point, PluginSet()), getattr(custom, point) if custom else None)
    for point, plugin_set in sets.items():
        for plugin in plugin_set.enabled:
            if plugin.name not in registry:
                raise ConfigError(
                    f'{where}.plugins.{point}.enabled: Invalid value: "{plugin.name}": plugin does not exist'
                )
            if plugin.weight is not None and plugin.weight < 0:
                raise ConfigError(
                    f"{where}.plugins.{point}.enabled[{plugin.name}].weight: Invalid value: must not be negative"
                )
    args: dict[str, object] = {}
    for i, entry in enumerate(raw.pluginConfig):
        registration = registry.get(entry.name)
        if registration is None:
            raise ConfigError(f'{where}.pluginConfig[{i}].name: Invalid value: "{entry.name}": plugin does not exist')
        if entry.name in args:
            raise ConfigError(f'{where}.pluginConfig[{i}].name: Duplicate value: "{entry.name}"')
        if registration.args_type is None:
            if entry.args:
                raise ConfigError(
                    f"{where}.pluginConfig[{i}].args: Invalid value: plugin {entry.name} takes no arguments"
                )
            continue
        path = f"{where}.pluginConfig[{i}].args"
        try:
            decoded = decode_args(entry.args or {}, registration.args_type)
        except ArgsError as e:
            field = f"{path}.{e.field}" if e.field else path
            raise ConfigError(f"{field}: {e.detail} (plugin {entry.name})") from None
        if isinstance(decoded, ValidatingArgs):
            try:
                decoded.validate(path=path)
            except ValueError as e:
                raise ConfigError(str(e) if str(e).startswith(path) else f"{path}: {e}") from None
        args[entry.name] = decoded
    name = present(raw.schedulerName, f"{where}.schedulerName")  # set by load_data
    return ProfileConfig(name, raw.percentageOfNodesToScore, sets, args)


def _same_queue_sort(profiles: list[ProfileConfig]) -> None:
    """Upstream's check compares the profiles' explicit queueSort sets and their args (a queue sort
    enabled through multiPoint is not compared; the queue sorts by the first profile's)."""

    def queue_sort(p: ProfileConfig) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        names = tuple(x.name for x in p.sets["queueSort"].enabled)
        return names, tuple(sorted((n, repr(p.args.get(n))) for n in names))

    if len({queue_sort(p) for p in profiles}) > 1:
        raise ConfigError("profiles[1].plugins.queueSort: Invalid value: queueSort must be the same for all profiles")
