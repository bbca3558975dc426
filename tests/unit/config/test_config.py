"""KubeSchedulerConfiguration: defaults, strict decoding, plugin merging, validation."""

from __future__ import annotations

import pytest

from builders import profile_framework
from kubesched.cache import Snapshot
from kubesched.config import ConfigError, load_data, load_text
from kubesched.plugins.registry import in_tree_registry

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def build(config):
    return profile_framework(Snapshot(), config)


def test_defaults():
    config = load_data(dict(HEAD), in_tree_registry())
    c = config.configuration
    assert (c.parallelism, c.podInitialBackoffSeconds, c.podMaxBackoffSeconds) == (16, 1, 10)
    assert config.percentage_of_nodes_to_score == 0
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler"]
    assert c.leaderElection.resourceName == "kube-scheduler"


def test_default_profile_in_upstream_order_with_weights():
    fwk = build({})
    assert fwk.names("filter") == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
        "NodeDeclaredFeatures",
    ]
    assert fwk.names("postFilter") == ["DynamicResources", "DefaultPreemption"]
    assert fwk.score_weights() == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }


def test_disable_and_reweight():
    fwk = build(
        {
            "profiles": [
                {
                    "plugins": {
                        "score": {
                            "enabled": [{"name": "ImageLocality", "weight": 5}],
                            "disabled": [{"name": "TaintToleration"}],
                        },
                        "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]},
                    }
                }
            ]
        }
    )
    assert fwk.names("filter") == ["NodeResourcesFit"]
    assert "TaintToleration" not in fwk.score_weights()
    assert fwk.score_weights()["ImageLocality"] == 5
    assert fwk.names("score")[0] == "ImageLocality"  # an explicit override goes first


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"parallelism": 0}, "parallelism: Invalid value: 0"),
        ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
        ({"podMaxBackoffSeconds": 0}, "podMaxBackoffSeconds: Invalid value: 0"),
        ({"bogus": 1}, "Object contains unknown field `bogus`"),
        ({"profiles": [{"schedulerName": "a", "plugin": {}}]}, "profiles[0]: Object contains unknown field `plugin`"),
        (
            {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            'profiles[1].schedulerName: Duplicate value: "a"',
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "Nope", "args": {}}]}]},
            'profiles[0].pluginConfig[0].name: Invalid value: "Nope"',
        ),
        (
            {
                "profiles": [
                    {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]}
                ]
            },
            "profiles[0].pluginConfig[0].args",
        ),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"unknownArg": 1}}]}]},
            "unknown field `unknownArg`",
        ),
        ({"kind": "Nope"}, 'kind: Unsupported value: "Nope"'),
    ],
)
def test_invalid_configs_name_the_field(config, message):
    with pytest.raises(ConfigError) as err:
        load_data({**HEAD, **config}, in_tree_registry())
    assert message in str(err.value)


def test_yaml_text_and_plugin_args():
    text = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
- schedulerName: packer
  percentageOfNodesToScore: 20
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]
"""
    config = load_text(text, in_tree_registry())
    profile = config.profiles[0]
    assert (config.percentage_of_nodes_to_score, profile.percentage_of_nodes_to_score) == (50, 20)
    assert profile.args["NodeResourcesFit"].scoring_strategy.type == "MostAllocated"


@pytest.mark.parametrize(
    ("election", "message"),
    [
        ({"leaseDuration": "10s"}, 'leaderElection.leaseDuration: Invalid value: "10s": LeaseDuration must be greater'),
        ({"retryPeriod": "0s"}, 'leaderElection.retryPeriod: Invalid value: "0s": must be greater than zero'),
        ({"renewDeadline": "ten"}, 'leaderElection.renewDeadline: Invalid value: "ten": time: invalid duration "ten"'),
        ({"resourceName": ""}, 'leaderElection.resourceName: Invalid value: "": resourceName is required'),
    ],
)
def test_leader_election_settings_are_validated(election, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_data({**HEAD, "leaderElection": election}, in_tree_registry())


def test_leader_election_is_not_checked_when_off():
    load_data({**HEAD, "leaderElection": {"leaderElect": False, "leaseDuration": "1s"}}, in_tree_registry())
