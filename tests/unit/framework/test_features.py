"""`--feature-gates`: the gates kubesched models, parsed as kube-scheduler parses them."""

import pytest

from kubesched.framework.features import FeatureGateError, Features


@pytest.mark.parametrize(
    ("text", "asynchronous"),
    [
        ("", True),  # v1.36.2's default
        ("SchedulerAsyncPreemption=false", False),
        (" SchedulerAsyncPreemption = False ,", False),
        ("SchedulerAsyncPreemption=false,SchedulerAsyncPreemption=true", True),  # the last one wins
    ],
)
def test_gates_are_parsed_over_the_defaults(text, asynchronous):
    assert Features.parse(text).async_preemption is asynchronous


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Nope=true", "unrecognized feature gate: Nope (kubesched has SchedulerAsyncPreemption)"),
        ("SchedulerAsyncPreemption", "missing bool value for SchedulerAsyncPreemption"),
        ("SchedulerAsyncPreemption=maybe", "invalid value of SchedulerAsyncPreemption=maybe: want true or false"),
    ],
)
def test_a_bad_gate_is_named(text, message):
    with pytest.raises(FeatureGateError) as e:
        Features.parse(text)
    assert str(e.value) == message
