"""Plugins by name, as a scheduler builds its profiles from them: the `Registry`, a plugin's
factory type, the extension points, and `declares` (whether a plugin fills a point)."""

from kubesched.framework.conformance import declares
from kubesched.framework.interface import ExtensionPoint
from kubesched.framework.registry import Factory, Registry

__all__ = ["ExtensionPoint", "Factory", "Registry", "declares"]
