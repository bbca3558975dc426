"""The files README's flows use ship in examples/, and each is what its command expects."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import yaml
from lightkube.resources import core_v1

from kubesched.cli.main import main
from kubesched.clock import VirtualClock
from kubesched.console import options
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim import NodeTemplate
from kubesched.storage import MemoryStore

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()


def test_every_example_the_readme_names_is_shipped():
    named = set(re.findall(r"(?<![\w/])examples/[\w.-]+", README))
    assert named >= {"examples/pod.yaml", "examples/node.yaml", "examples/config.yaml"}
    # the deploy/ table names its own examples/ relative to deploy/
    assert all((ROOT / path).exists() or (ROOT / "deploy" / path).is_file() for path in named), named


def test_the_node_template_is_a_node_the_fake_nodes_copy():
    template = NodeTemplate.from_file(ROOT / "examples/node.yaml")
    assert template.capacity == {"cpu": "4", "memory": "16Gi", "pods": "110"}


def test_the_pod_is_the_one_the_readme_binds_by_hand():
    store = MemoryStore(clock=VirtualClock())
    manifest = msgspec.convert(yaml.safe_load((ROOT / "examples/pod.yaml").read_text()), core_v1.Pod)
    pod = store.create(manifest, namespace="default")  # valid, as the API server checks it
    assert pod.metadata.name == "web" and "/pods/web/binding" in README


def test_the_configuration_builds_as_run_builds_it():
    config = options.scheduler_config("--config", str(ROOT / "examples/config.yaml"), in_tree_registry())
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]


def test_the_readme_minimal_command_runs_as_written(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["minimal", "--node-template", "examples/node.yaml", "--trace", str(tmp_path / "out.jsonl")]) == 0
    assert (tmp_path / "out.jsonl").stat().st_size > 0
