# The NoSundays Filter plugin of docs/plugins.md, loaded by no-sundays.yaml from this file.
from typing import ClassVar

from kubesched.plugin import CycleState, FilterPlugin, NodeInfo, PluginSpec, PodInfo, Status


class NoSundays(FilterPlugin):
    name: ClassVar[str] = "NoSundays"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if (node.node.metadata.labels or {}).get("day") == "sunday":
            return Status.unresolvable("node(s) rest on Sundays")
        return None


def new(args, handle):
    return NoSundays()


spec = PluginSpec(new, name="NoSundays")
