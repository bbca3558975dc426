"""Plugins from outside kubesched: installed distributions (entry points) and `--plugin` modules,
listed by `kubesched plugins`, refused with one-line errors, and changing placement once enabled."""

from __future__ import annotations

import json
from typing import Any

import pytest

from builders import installed_package, make_pod
from kubesched.cli.main import main
from kubesched.scheduler.discovery import PluginLoadError, discovered, plugin_registry

GOLD = '''
from typing import ClassVar

import msgspec

from kubesched.plugin import PluginSpec, ScorePlugin


class GoldArgs(msgspec.Struct, forbid_unknown_fields=True):
    label: str = "tier"
    bonus: int = 100


class Gold(ScorePlugin):
    """Prefers nodes labelled tier=gold."""

    name: ClassVar[str] = "Gold"

    def __init__(self, args: GoldArgs) -> None:
        self.args = args

    def score(self, state, pod, node):
        labels = node.node.metadata.labels or {}
        return self.args.bonus if labels.get(self.args.label) == "gold" else 0


def new(args, handle):
    return Gold(args)


spec = PluginSpec(new, GoldArgs)
'''


@pytest.fixture
def gold_package(tmp_path, monkeypatch):
    site = installed_package(
        tmp_path,
        name="gold-plugins",
        version="0.3.1",
        modules={"gold_plugins": GOLD},
        entry_points={"kubesched.plugins": {"Gold": "gold_plugins:spec"}},
    )
    monkeypatch.syspath_prepend(str(site))
    return site


def plugins_json(capsys, *argv: str) -> dict[str, Any]:
    assert main(["plugins", "--output", "json", *argv]) == 0
    return {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}


def test_an_installed_package_is_listed_with_its_distribution_points_and_args(gold_package, capsys):
    listed = plugins_json(capsys)
    gold = listed["Gold"]
    assert gold["source"] == "gold-plugins 0.3.1"
    assert gold["points"] == ["score"]
    assert (gold["args_type"], gold["args"]) == ("GoldArgs", {"label": "tier", "bonus": 100})
    assert gold["enabled"] == []  # not in the default profile
    assert listed["NodeResourcesFit"]["source"] == "in-tree"


def test_the_configuration_shows_where_a_profile_enables_it(gold_package, tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: gold-scheduler\n  plugins:\n    score:\n      enabled: [{name: Gold, weight: 5}]\n"
    )
    gold = plugins_json(capsys, "--config", str(config))["Gold"]
    assert gold["enabled"] == [{"profile": "gold-scheduler", "point": "score", "weight": 5}]


def test_enabled_it_changes_placement(gold_package, harness):
    def placements(config: dict[str, Any] | None) -> set[str]:
        h = harness(config=config, extra=discovered() if config else None)
        for name in ("n1", "n2", "n3"):
            h.node(name, cpu=4, labels={"tier": "gold"} if name == "n3" else None)
        h.start()
        for i in range(3):
            h.store.create(make_pod(f"p{i}").req(cpu="500m").obj)
        h.clock.advance(2)
        nodes = {h.pod(f"p{i}").spec.nodeName for i in range(3)}
        h.stop()
        return nodes

    assert placements(None) == {"n1", "n2", "n3"}  # spread by the default scores
    gold = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "Gold", "weight": 10}]}}}]}
    assert placements(gold) == {"n3"}


def test_args_are_decoded_strictly_naming_the_plugin_and_the_field(gold_package, tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- pluginConfig:\n  - name: Gold\n    args: {bonus: lots}\n"
    )
    assert main(["plugins", "--config", str(config)]) == 2
    out = capsys.readouterr().err
    assert "profiles[0].pluginConfig[0].args.bonus: Expected `int`, got `str` (plugin Gold)" in out
    config.write_text(config.read_text().replace("{bonus: lots}", "{bonsu: 3}"))
    assert main(["plugins", "--config", str(config)]) == 2
    assert "args: unknown field `bonsu`" in capsys.readouterr().err


MODULE = """
from typing import ClassVar

from kubesched.plugin import FilterPlugin, PluginSpec, Status


class NoSundays(FilterPlugin):
    name: ClassVar[str] = "NoSundays"

    def filter(self, state, pod, node):
        return Status.unresolvable("node(s) rest on Sundays") if node.name == "sunday" else None


class Misspelt(FilterPlugin):
    name: ClassVar[str] = "Misspelt"

    def filer(self, state, pod, node):
        return None


plugins = [PluginSpec(lambda args, handle: NoSundays(), name="NoSundays")]
misspelt = PluginSpec(lambda args, handle: Misspelt(), name="Misspelt")
clash = PluginSpec(lambda args, handle: NoSundays(), name="NodeName")
"""


@pytest.fixture
def module_in_cwd(tmp_path, monkeypatch):
    (tmp_path / "sundays.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(__import__("sys").modules, "sundays", raising=False)
    return tmp_path


def test_a_module_in_the_working_directory_loads_with_plugin(module_in_cwd, capsys):
    listed = plugins_json(capsys, "--plugin", "sundays:plugins")
    assert listed["NoSundays"]["source"] == "--plugin sundays:plugins"
    assert listed["NoSundays"]["points"] == ["filter"]


def test_a_file_never_replaces_a_module_already_imported(module_in_cwd, capsys):
    (module_in_cwd / "json.py").write_text(MODULE)
    assert main(["plugins", "--plugin", "json.py:plugins"]) == 2
    err = capsys.readouterr().err
    assert (
        "--plugin json.py:plugins: cannot import json.py: ImportError: a module named json is already imported" in err
    )
    assert "Traceback" not in err
    import json

    assert json.dumps({}) == "{}"  # the standard library's, untouched


def test_a_file_anywhere_loads_with_plugin_by_its_path(module_in_cwd, capsys, monkeypatch, tmp_path_factory):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # not importable from here
    path = module_in_cwd / "weekdays.py"  # a name no test imports as a module
    path.write_text((module_in_cwd / "sundays.py").read_text())
    listed = plugins_json(capsys, "--plugin", f"{path}:plugins")
    assert listed["NoSundays"]["source"] == f"--plugin {path}:plugins"
    assert listed["NoSundays"]["points"] == ["filter"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plugin", "sundays:nothing"], "--plugin sundays:nothing: module sundays has no attribute nothing"),
        (["--plugin", "nowhere:x"], "--plugin nowhere:x: cannot import nowhere: ModuleNotFoundError"),
        (["--plugin", "sundays"], "--plugin sundays: expected module:attr or file.py:attr, got 'sundays'"),
        (["--plugin", "missing.py:x"], "--plugin missing.py:x: cannot import missing.py: FileNotFoundError"),
        (
            ["--plugin", "sundays:clash"],
            'a plugin named "NodeName" already exists (in-tree; again from --plugin sundays:clash)',
        ),
    ],
)
def test_loading_errors_are_one_line_naming_the_source(module_in_cwd, capsys, argv, message):
    assert main(["plugins", *argv]) == 2
    out = capsys.readouterr().err
    assert message in out and "Traceback" not in out


def test_a_configuration_run_would_refuse_is_refused_with_the_same_error(module_in_cwd, capsys):
    config = module_in_cwd / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- plugins:\n    filter:\n      enabled: [{name: Misspelt}]\n"
    )
    expected = 'plugin "Misspelt" declares FilterPlugin but does not implement filter (it has "filer": a misspelling?)'
    assert main(["plugins", "--plugin", "sundays:misspelt", "--config", str(config)]) == 2
    assert expected in capsys.readouterr().err
    assert main(["run", "--plugin", "sundays:misspelt", "--config", str(config), "--kubeconfig", "/nonexistent"]) == 2
    assert expected in capsys.readouterr().err


def test_a_name_clash_between_installed_plugins_and_modules_names_both(gold_package, module_in_cwd, tmp_path):
    (tmp_path / "again.py").write_text(GOLD + '\nspec = PluginSpec(new, GoldArgs, name="Gold")\n')
    with pytest.raises(
        PluginLoadError, match=r'"Gold" already exists \(gold-plugins 0\.3\.1; again from --plugin again:spec\)'
    ):
        plugin_registry(["again:spec"])
