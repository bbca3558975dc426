from typing import Any

import pytest
from lightkube.models import core_v1

from kubesched.api import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, find_untolerated_taint, tolerates


def taint(key: str, value: str | None = None, effect: str = NO_SCHEDULE) -> core_v1.Taint:
    return core_v1.Taint(key=key, value=value, effect=effect)


def toleration(**fields: Any) -> core_v1.Toleration:
    return core_v1.Toleration(**fields)


@pytest.mark.parametrize(
    ("tol", "t", "expected"),
    [
        (toleration(key="k", operator="Equal", value="v", effect=NO_SCHEDULE), taint("k", "v"), True),
        (toleration(key="k", value="v", effect=NO_SCHEDULE), taint("k", "v"), True),  # "" means Equal
        (toleration(key="k", operator="Equal", value="v"), taint("k", "v"), True),  # empty effect: any
        (toleration(key="k", operator="Equal", value="v"), taint("k", "v", NO_EXECUTE), True),
        (toleration(key="k", operator="Equal", value="other"), taint("k", "v"), False),
        (toleration(key="k", operator="Equal"), taint("k"), True),
        (toleration(key="k", operator="Equal", value=""), taint("k"), True),
        (toleration(key="k", operator="Equal"), taint("k", "v"), False),
        (toleration(key="other", operator="Exists"), taint("k", "v"), False),
        (toleration(key="k", operator="Exists"), taint("k", "v"), True),
        (toleration(key="k", operator="Exists", value="ignored"), taint("k", "v"), True),
        (toleration(key="k", operator="Exists", effect=NO_EXECUTE), taint("k", "v"), False),
        (toleration(key="k", operator="Exists", effect=NO_SCHEDULE), taint("k", "v", NO_SCHEDULE), True),
        (toleration(operator="Exists"), taint("k", "v", NO_EXECUTE), True),  # tolerate everything
        (toleration(operator="Exists", effect=PREFER_NO_SCHEDULE), taint("k", "v"), False),
        # Empty key with Equal is forbidden by validation, but the matcher compares values only.
        (toleration(operator="Equal", value="v"), taint("any", "v"), True),
        (toleration(operator="Equal", value="v"), taint("any", "w"), False),
        (toleration(), taint("any"), True),
        (toleration(key="k", operator="Gt", value="1"), taint("k", "2"), False),
        (toleration(key="k", operator="Bogus", value="v"), taint("k", "v"), False),
    ],
)
def test_tolerates(tol: core_v1.Toleration, t: core_v1.Taint, expected: bool) -> None:
    assert tolerates(tol, t) is expected


HARD = {NO_SCHEDULE, NO_EXECUTE}


@pytest.mark.parametrize(
    ("taints", "tolerations", "expected_key"),
    [
        (None, None, None),
        ([], [toleration(operator="Exists")], None),
        ([taint("a")], None, "a"),
        ([taint("a"), taint("b")], [], "a"),
        ([taint("a"), taint("b")], [toleration(key="a", operator="Exists")], "b"),
        ([taint("a", effect=PREFER_NO_SCHEDULE), taint("b", effect=NO_EXECUTE)], [], "b"),
        ([taint("a", effect=PREFER_NO_SCHEDULE)], [], None),
        ([taint("a"), taint("b")], [toleration(operator="Exists")], None),
        ([taint("a", "1")], [toleration(key="a", value="2")], "a"),
    ],
)
def test_find_untolerated_taint(
    taints: list[core_v1.Taint] | None, tolerations: list[core_v1.Toleration] | None, expected_key: str | None
) -> None:
    found = find_untolerated_taint(taints, tolerations, effects=HARD)
    assert (found.key if found else None) == expected_key


def test_find_untolerated_taint_returns_node_object() -> None:
    taints = [taint("a"), taint("b")]
    assert find_untolerated_taint(taints, [], effects=HARD) is taints[0]
