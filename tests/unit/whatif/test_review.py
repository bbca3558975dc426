"""The ClusterCapacityReview kubesched capacity prints: cluster-capacity's fields and its text."""

from __future__ import annotations

import datetime
import json

import pytest
import yaml

from builders import make_node, make_pod, snapshot_of
from kubesched.cli.main import main
from kubesched.whatif import review
from kubesched.whatif.capacity import Placed, StopReason, Template

NOW = datetime.datetime(2026, 12, 7, 3, 0, tzinfo=datetime.UTC)


def placed(pod, nodes, stop):
    return Placed(Template(pod.obj.to_dict()), list(nodes), StopReason(*stop))


@pytest.mark.parametrize(
    "pod, primary, scalar",
    [
        (make_pod("p").req(cpu="100m", memory="5e6"), {"cpu": "100m", "memory": "5M"}, None),
        (
            make_pod("p").req(cpu="2", memory="1Gi", **{"nvidia.com/gpu": "1"}),
            {"cpu": "2", "memory": "1Gi"},
            {"nvidia.com/gpu": 1},
        ),
        (make_pod("p"), {"cpu": "0", "memory": "0"}, None),
        (
            make_pod("p").req(cpu="1", **{"hugepages-2Mi": "4Mi"}),
            {"cpu": "1", "memory": "0"},
            {"hugepages-2Mi": 4194304},
        ),
    ],
)
def test_requirements_sum_the_containers_requests_as_cluster_capacity(pod, primary, scalar):
    got = review.requirements(pod.obj.to_dict())["resources"]
    assert got["primaryResources"] == {**primary, review.GPU: "0"}
    assert got["scalarResources"] == scalar


def test_the_review_has_cluster_capacitys_fields():
    results = [placed(make_pod("small"), ["n3", "n3", "n1"], ("LimitReached", "Maximum number of pods simulated: 3"))]
    document = json.loads(review.dumps(review.review(results, max_limit=3, now=NOW), "json"))
    assert list(document) == ["spec", "status"]
    assert list(document["spec"]) == ["templates", "replicas", "podRequirements"]
    assert document["spec"]["replicas"] == 3
    assert document["status"]["creationTimestamp"] == "2026-12-07T03:00:00Z"
    assert document["status"]["replicas"] == 3
    assert document["status"]["failReason"] == {
        "failType": "LimitReached",
        "failMessage": "Maximum number of pods simulated: 3",
    }
    [pod] = document["status"]["pods"]
    assert pod["podName"] == "small"
    assert pod["replicasOnNodes"] == [{"nodeName": "n3", "replicas": 2}, {"nodeName": "n1", "replicas": 1}]
    assert pod["failSummary"] is None
    assert yaml.safe_load(review.dumps(review.review(results, max_limit=3, now=NOW), "yaml")) == document


def test_the_headline_is_the_first_template_stopped_short():
    results = [
        placed(make_pod("a"), ["n1"], ("Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")),
        placed(make_pod("b"), ["n1"], ("LimitReached", "Maximum number of pods simulated: 1")),
    ]
    assert review.review(results, max_limit=0)["status"]["failReason"]["failType"] == "Unschedulable"


VERBOSE = """\
small pod requirements:
\t- CPU: 100m
\t- Memory: 5M
\t- NodeSelector: disk=ssd,zone=a

The cluster can schedule 3 instance(s) of the pod small.

Termination reason: LimitReached: Maximum number of pods simulated: 3

Pod distribution among nodes:
small
\t- n3: 2 instance(s)
\t- n1: 1 instance(s)
"""


def test_the_text_is_cluster_capacitys():
    pod = make_pod("small").req(cpu="100m", memory="5M").node_selector(zone="a", disk="ssd")
    document = review.review(
        [placed(pod, ["n3", "n3", "n1"], ("LimitReached", "Maximum number of pods simulated: 3"))], max_limit=3
    )
    assert review.text(document, verbose=True) == VERBOSE
    assert review.text(document, verbose=False) == "3\n"


@pytest.fixture
def files(tmp_path):
    snapshot = snapshot_of(*(make_node(n).capacity(cpu="1") for n in ("a", "b")))
    snapshot.save(tmp_path / "cluster.yaml")
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(make_pod("web").req(cpu="300m").obj.to_dict()))
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "api"}}
    rs["spec"] = {"replicas": 2, "template": {"spec": make_pod("x").req(cpu="400m").obj.to_dict()["spec"]}}
    (tmp_path / "two.yaml").write_text(yaml.safe_dump_all([rs, make_pod("web").req(cpu="100m").obj.to_dict()]))
    return tmp_path


def test_capacity_command_prints_the_review(files, capsys):
    args = ["capacity", "--snapshot", str(files / "cluster.yaml"), "--podspec", str(files / "pod.yaml")]
    assert main([*args, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["status"]["replicas"] == 6
    assert main([*args, "--max-limit", "2"]) == 0
    assert capsys.readouterr().out == "2\n"
    assert main([*args, "--exclude-nodes", "b", "--verbose"]) == 0
    assert "The cluster can schedule 3 instance(s) of the pod web." in capsys.readouterr().out


def test_capacity_command_takes_workloads_with_replica_counts(files, capsys):
    args = ["capacity", "--snapshot", str(files / "cluster.yaml"), "--podspec", str(files / "two.yaml"), "-o", "yaml"]
    assert main(args) == 0
    pods = yaml.safe_load(capsys.readouterr().out)["status"]["pods"]
    assert [(p["podName"], p["replicas"]) for p in pods] == [("api", 2), ("web", 12)]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["-o", "xml"], "-o: output format 'xml' not recognized (json or yaml)"),
        (["--snapshot", "missing.yaml"], "--snapshot: missing.yaml: No such file or directory"),
        (["--podspec", "cluster.yaml"], "--podspec: cluster.yaml: kind Node is not a Pod"),
        (["--config", "missing.yaml"], "--config: "),
    ],
)
def test_capacity_command_errors_are_one_line(files, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(files)
    args = ["capacity", "--snapshot", "cluster.yaml", "--podspec", "pod.yaml"]
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args += [option, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1
