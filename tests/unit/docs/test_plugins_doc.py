"""docs/plugins.md's smallest plugin works as the page says: loaded with --plugin, listed, and
refusing the node it should."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from builders import make_node, make_pod
from kubesched.cli.main import main
from kubesched.plugin.testing import check_plugin

DOC = Path(__file__).parents[3] / "docs" / "plugins.md"


def test_the_smallest_plugin_of_the_page_loads_and_filters(tmp_path, monkeypatch, capsys, request):
    request.addfinalizer(lambda: sys.modules.pop("nosundays", None))  # the lab loads its own from a file
    example = re.search(r"```python\n# nosundays.py\n(.*?)```", DOC.read_text(), re.S)
    assert example is not None
    (tmp_path / "nosundays.py").write_text(example.group(1))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "nosundays", raising=False)
    assert main(["plugins", "--plugin", "nosundays:spec", "--output", "json"]) == 0
    listed = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    assert listed["NoSundays"]["points"] == ["filter"]
    assert listed["NoSundays"]["source"] == "--plugin nosundays:spec"

    import nosundays

    nodes = [make_node("mon").labels(day="monday").obj, make_node("sun").labels(day="sunday").obj]
    (verdicts,) = check_plugin(nosundays.spec, name="NoSundays", nodes=nodes, pending=[make_pod("p").obj])
    assert verdicts.feasible == ["mon"]
    assert verdicts.filter["sun"] is not None and verdicts.filter["sun"].message == "node(s) rest on Sundays"


def test_the_copies_of_the_smallest_plugin_are_the_pages_own():
    """The lab writes it into a learner's file and the no-sundays scenario loads it from one; both
    must stay the plugin the page shows."""
    from kubesched.lab.profiles import NOSUNDAYS

    example = re.search(r"```python\n# nosundays.py\n(.*?)```", DOC.read_text(), re.S)
    assert example is not None
    scenario = DOC.parents[1] / "examples" / "scenarios" / "plugins" / "rest_day.py"
    assert example.group(1) == NOSUNDAYS
    assert scenario.read_text().split("\n", 1)[1] == example.group(1)  # after its one-line header
