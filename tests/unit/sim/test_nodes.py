"""Fake nodes come from a template, by count, with zones round-robin."""

import pytest

from kubesched.sim import FAKE_NODE_ANNOTATION, NodeTemplate, make_nodes


def test_nodes_are_named_labelled_and_zoned_round_robin():
    nodes = make_nodes(4)
    assert [n.metadata.name for n in nodes] == ["node-0", "node-1", "node-2", "node-3"]
    zones = [n.metadata.labels["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["zone-a", "zone-b", "zone-c", "zone-a"]
    assert nodes[1].metadata.labels["kubernetes.io/hostname"] == "node-1"
    assert nodes[0].metadata.annotations == {FAKE_NODE_ANNOTATION: "true"}
    assert [(c.type, c.status) for c in nodes[0].status.conditions] == [("Ready", "True")]


def test_template_from_a_node_manifest(tmp_path):
    path = tmp_path / "node.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  labels: {tier: gpu}\n"
        "spec:\n  taints: [{key: gpu, value: 'true', effect: NoSchedule}]\n"
        "status:\n  capacity: {cpu: '8', memory: 32Gi, pods: '20', nvidia.com/gpu: '2'}\n"
        "  allocatable: {cpu: 7500m, memory: 30Gi, pods: '20', nvidia.com/gpu: '2'}\n"
    )
    node = make_nodes(1, NodeTemplate.from_file(path))[0]
    assert node.metadata.labels["tier"] == "gpu"
    assert node.spec.taints[0].key == "gpu" and node.spec.taints[0].effect == "NoSchedule"
    assert node.status.allocatable["cpu"] == "7500m"
    assert node.status.capacity["nvidia.com/gpu"] == "2"


def test_template_file_that_is_not_a_mapping_is_refused(tmp_path):
    path = tmp_path / "node.yaml"
    path.write_text("- not a node\n")
    with pytest.raises(ValueError, match="a node template must be a Node manifest"):
        NodeTemplate.from_file(path)
