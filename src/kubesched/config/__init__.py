"""KubeSchedulerConfiguration: decoding, defaults, validation and plugin-set merging."""

from kubesched.config.load import (
    ConfigError,
    ProfileConfig,
    SchedulerConfig,
    default_config,
    load_data,
    load_file,
    load_text,
)

__all__ = ["ConfigError", "ProfileConfig", "SchedulerConfig", "default_config", "load_data", "load_file", "load_text"]
