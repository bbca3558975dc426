from typing import Any

import pytest
from lightkube.models import core_v1, meta_v1

from kubesched.api import (
    FieldError,
    RequiredNodeAffinity,
    compile_label_selector,
    compile_node_selector,
    node_selector_map_matches,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "front", "zone": "a", "size": "10"}


def label_selector(data: dict[str, Any] | None) -> meta_v1.LabelSelector | None:
    return None if data is None else meta_v1.LabelSelector.from_dict(data)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def node_selector(*terms: dict[str, Any]) -> core_v1.NodeSelector:
    return core_v1.NodeSelector.from_dict({"nodeSelectorTerms": list(terms)})


# --- metav1.LabelSelector -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, LABELS, False),
        (None, {}, False),
        ({}, LABELS, True),
        ({}, None, True),
        ({"matchLabels": {"app": "web"}}, LABELS, True),
        ({"matchLabels": {"app": "db"}}, LABELS, False),
        ({"matchLabels": {"app": "web", "tier": "back"}}, LABELS, False),
        ({"matchLabels": {"app": "web"}}, None, False),
        ({"matchExpressions": [expr("app", "In", "db", "web")]}, LABELS, True),
        ({"matchExpressions": [expr("app", "In", "db")]}, LABELS, False),
        ({"matchExpressions": [expr("missing", "In", "x")]}, LABELS, False),
        ({"matchExpressions": [expr("app", "NotIn", "db")]}, LABELS, True),
        ({"matchExpressions": [expr("app", "NotIn", "web")]}, LABELS, False),
        ({"matchExpressions": [expr("missing", "NotIn", "x")]}, LABELS, True),
        ({"matchExpressions": [expr("app", "Exists")]}, LABELS, True),
        ({"matchExpressions": [expr("missing", "Exists")]}, LABELS, False),
        ({"matchExpressions": [expr("missing", "DoesNotExist")]}, LABELS, True),
        ({"matchExpressions": [expr("app", "DoesNotExist")]}, LABELS, False),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, LABELS, True),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "back")]},
            LABELS,
            False,
        ),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "front")]},
            LABELS,
            True,
        ),
    ],
)
def test_label_selector_matches(selector: dict[str, Any] | None, labels: dict[str, str] | None, expected: bool) -> None:
    assert compile_label_selector(label_selector(selector)).matches(labels) is expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [expr("app", "Exists"), expr("app", "Foo", "x")]},
            'selector.matchExpressions[1].operator: Unsupported value: "Foo": '
            'supported values: "DoesNotExist", "Exists", "In", "NotIn"',
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "selector.matchExpressions[0].values: Invalid value: []string{}: "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [expr("app", "NotIn")]},
            "selector.matchExpressions[0].values: Invalid value: []string{}: "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [expr("app", "DoesNotExist", "x")]},
            'selector.matchExpressions[0].values: Invalid value: []string{"x"}: '
            "values set must be empty for exists and does not exist",
        ),
        (
            {"matchExpressions": [expr("app", "Gt", "1")]},
            'selector.matchExpressions[0].operator: Unsupported value: "Gt": '
            'supported values: "DoesNotExist", "Exists", "In", "NotIn"',
        ),
    ],
)
def test_label_selector_invalid(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(FieldError) as caught:
        compile_label_selector(label_selector(selector))
    assert str(caught.value) == message


def test_label_selector_nil_vs_empty() -> None:
    assert compile_label_selector(None).matches_nothing
    assert not compile_label_selector(label_selector({})).matches_nothing
    compiled = compile_label_selector(label_selector({"matchLabels": {"app": "web"}}))
    (requirement,) = compiled.requirements
    assert (requirement.key, requirement.operator, requirement.values) == ("app", "In", frozenset({"web"}))


def test_label_selector_field_prefix() -> None:
    sel = label_selector({"matchExpressions": [expr("a", "In")]})
    with pytest.raises(FieldError) as caught:
        compile_label_selector(sel, field="spec.affinity.podAffinity.labelSelector")
    assert caught.value.field == "spec.affinity.podAffinity.labelSelector.matchExpressions[0].values"


@pytest.mark.parametrize(
    ("node_selector_map", "labels", "expected"),
    [
        (None, LABELS, True),
        ({}, None, True),
        ({"zone": "a"}, LABELS, True),
        ({"zone": "a", "app": "web"}, LABELS, True),
        ({"zone": "b"}, LABELS, False),
        ({"gpu": ""}, LABELS, False),
        ({"zone": "a"}, None, False),
    ],
)
def test_node_selector_map(
    node_selector_map: dict[str, str] | None, labels: dict[str, str] | None, expected: bool
) -> None:
    assert node_selector_map_matches(node_selector_map, labels) is expected


# --- string label selectors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", LABELS, True),
        ("", None, True),
        ("app=web", LABELS, True),
        ("app==web", LABELS, True),
        ("app=db", LABELS, False),
        ("app!=db", LABELS, True),
        ("app!=web", LABELS, False),
        ("missing!=x", LABELS, True),
        ("app in (db,web)", LABELS, True),
        ("app in (db)", LABELS, False),
        ("app notin (db)", LABELS, True),
        ("app notin (web, db)", LABELS, False),
        ("missing notin (x)", LABELS, True),
        ("app", LABELS, True),
        ("missing", LABELS, False),
        ("!missing", LABELS, True),
        ("!app", LABELS, False),
        ("app=web,tier=front", LABELS, True),
        ("app=web,tier=back", LABELS, False),
        ("  app = web ,  !missing  ", LABELS, True),
        ("missing=", LABELS, False),
        ("missing=", {"missing": ""}, True),
        ("x in (a,,b)", {"x": ""}, True),
        ("x in ()", {"x": ""}, True),
        ("in in (in)", {"in": "in"}, True),
        ("size>9", LABELS, True),
        ("size<10", LABELS, False),
        ("app>1", LABELS, False),
    ],
)
def test_parse_label_selector(text: str, labels: dict[str, str] | None, expected: bool) -> None:
    assert parse_label_selector(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("a,", "found '', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a=(b", "unable to parse requirement: found '(', expected: identifier"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("!(a", "unable to parse requirement: found '(', expected: identifier"),
        (
            "a>b",
            'unable to parse requirement: values[0]: Invalid value: "b": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
)
def test_parse_label_selector_invalid(text: str, detail: str) -> None:
    with pytest.raises(FieldError) as caught:
        parse_label_selector(text)
    assert (caught.value.field, caught.value.value, caught.value.detail) == ("labelSelector", text, detail)


# --- field selectors ------------------------------------------------------------------------

SUPPORTED = {"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"}
POD_FIELDS = {"metadata.name": "p1", "metadata.namespace": "default", "spec.nodeName": ""}


def get_field(name: str) -> str:
    return POD_FIELDS.get(name, "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", True),
        ("metadata.name=p1", True),
        ("metadata.name==p1", True),
        ("metadata.name=p2", False),
        ("metadata.name!=p2", True),
        ("spec.nodeName=", True),
        ("spec.nodeName!=", False),
        ("status.phase!=Succeeded,status.phase!=Failed", True),
        ("metadata.name=p1,metadata.namespace=kube-system", False),
        (",metadata.name=p1,", True),
    ],
)
def test_field_selector_matches(text: str, expected: bool) -> None:
    selector = parse_field_selector(text, supported=SUPPORTED)
    assert selector.matches(get_field) is expected
    # compiled for a watch: the same answer, the object's fields read by per-field getters
    getters = {name: (lambda obj, name=name: obj[name]) for name in SUPPORTED}
    assert selector.compile(getters)({name: get_field(name) for name in SUPPORTED}) is expected


def test_field_selector_requirements() -> None:
    selector = parse_field_selector("status.phase!=Failed,spec.nodeName==n1", supported=SUPPORTED)
    assert [tuple(r) for r in selector.requirements] == [
        ("spec.nodeName", "=", "n1"),
        ("status.phase", "!=", "Failed"),
    ]
    assert selector.requires_exact_match("spec.nodeName") == "n1"
    assert selector.requires_exact_match("status.phase") is None


def test_field_selector_escapes() -> None:
    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d", supported=SUPPORTED)
    assert selector.requirements[0].value == "a,b=c\\d"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("spec.foo=bar", "field label not supported: spec.foo"),
        ("spec.nodeName=n1,zzz=1", "field label not supported: zzz"),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
        (r"metadata.name=a\x", "invalid field selector: invalid escape sequence: \\x"),
        ("metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
        (
            "foo=bar,metadata.name",
            "invalid selector: 'foo=bar,metadata.name'; can't understand 'metadata.name'",
        ),
    ],
)
def test_field_selector_invalid(text: str, detail: str) -> None:
    with pytest.raises(FieldError) as caught:
        parse_field_selector(text, supported=SUPPORTED)
    assert (caught.value.field, caught.value.value, caught.value.detail) == ("fieldSelector", text, detail)


# --- node selectors -------------------------------------------------------------------------

NODE_LABELS = {"zone": "a", "disk": "ssd", "cores": "8"}


@pytest.mark.parametrize(
    ("terms", "node_name", "expected"),
    [
        ([{"matchExpressions": [expr("zone", "In", "a", "b")]}], "n1", True),
        ([{"matchExpressions": [expr("zone", "In", "b")]}], "n1", False),
        ([{"matchExpressions": [expr("zone", "NotIn", "b")]}], "n1", True),
        ([{"matchExpressions": [expr("zone", "NotIn", "a")]}], "n1", False),
        ([{"matchExpressions": [expr("gpu", "NotIn", "x")]}], "n1", True),
        ([{"matchExpressions": [expr("disk", "Exists")]}], "n1", True),
        ([{"matchExpressions": [expr("gpu", "Exists")]}], "n1", False),
        ([{"matchExpressions": [expr("gpu", "DoesNotExist")]}], "n1", True),
        ([{"matchExpressions": [expr("disk", "DoesNotExist")]}], "n1", False),
        ([{"matchExpressions": [expr("cores", "Gt", "4")]}], "n1", True),
        ([{"matchExpressions": [expr("cores", "Gt", "8")]}], "n1", False),
        ([{"matchExpressions": [expr("cores", "Lt", "16")]}], "n1", True),
        ([{"matchExpressions": [expr("cores", "Lt", "-1")]}], "n1", False),
        ([{"matchExpressions": [expr("zone", "Gt", "1")]}], "n1", False),  # label not an integer
        ([{"matchExpressions": [expr("gpu", "Lt", "1")]}], "n1", False),
        ([{"matchExpressions": [expr("zone", "In", "a"), expr("disk", "In", "hdd")]}], "n1", False),
        ([{"matchFields": [expr("metadata.name", "In", "n1")]}], "n1", True),
        ([{"matchFields": [expr("metadata.name", "In", "n2")]}], "n1", False),
        ([{"matchFields": [expr("metadata.name", "NotIn", "n2")]}], "n1", True),
        ([{"matchFields": [expr("metadata.name", "NotIn", "n1")]}], "n1", False),
        ([{"matchFields": [expr("metadata.name", "In", "n2")]}], "", True),  # no name: fields skipped
        (
            [
                {
                    "matchExpressions": [expr("zone", "In", "a")],
                    "matchFields": [expr("metadata.name", "In", "n2")],
                }
            ],
            "n1",
            False,
        ),
        (
            [
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchFields": [expr("metadata.name", "In", "n1")]},
            ],
            "n1",
            True,
        ),
        ([{}], "n1", False),
        ([{"matchExpressions": [], "matchFields": []}], "n1", False),
        ([{}, {"matchExpressions": [expr("zone", "In", "a")]}], "n1", True),
        ([], "n1", False),
    ],
)
def test_node_selector_matches(terms: list[dict[str, Any]], node_name: str, expected: bool) -> None:
    assert compile_node_selector(node_selector(*terms)).matches(node_name, NODE_LABELS) is expected


def test_node_selector_none_matches_nothing() -> None:
    assert compile_node_selector(None).matches("n1", NODE_LABELS) is False


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        (
            [{"matchExpressions": [expr("zone", "Foo", "a")]}],
            'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Foo": '
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            [{}, {"matchExpressions": [expr("zone", "In")]}],
            "nodeSelectorTerms[1].matchExpressions[0].values: Invalid value: []string{}: "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            [{"matchExpressions": [expr("zone", "Exists", "a")]}],
            'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{"a"}: '
            "values set must be empty for exists and does not exist",
        ),
        (
            [{"matchExpressions": [expr("cores", "Gt", "1", "2")]}],
            'nodeSelectorTerms[0].matchExpressions[0].values: Invalid value: []string{"1", "2"}: '
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            [{"matchExpressions": [expr("cores", "Lt", "1.5")]}],
            'nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "1.5": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            [{"matchFields": [expr("metadata.name", "In", "a", "b")]}],
            'nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"a", "b"}: must have one element',
        ),
        (
            [{"matchFields": [expr("metadata.name", "Exists")]}],
            'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": '
            'supported values: "In", "NotIn"',
        ),
    ],
)
def test_node_selector_invalid(terms: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(FieldError) as caught:
        compile_node_selector(node_selector(*terms))
    assert str(caught.value) == message


def test_node_selector_field_prefix() -> None:
    with pytest.raises(FieldError) as caught:
        compile_node_selector(node_selector({"matchExpressions": [expr("a", "In")]}), field="spec.x")
    assert caught.value.field == "spec.x.nodeSelectorTerms[0].matchExpressions[0].values"


def pod_with(spec: dict[str, Any]) -> core_v1.Pod:
    return core_v1.Pod.from_dict({"spec": {"containers": [{"name": "c"}], **spec}})


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
        }
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, True),
        ({"affinity": {}}, True),
        ({"affinity": {"nodeAffinity": {}}}, True),
        ({"nodeSelector": {"zone": "a"}}, True),
        ({"nodeSelector": {"zone": "b"}}, False),
        (required({"matchExpressions": [expr("disk", "In", "ssd")]}), True),
        (required({"matchExpressions": [expr("disk", "In", "hdd")]}), False),
        (
            {"nodeSelector": {"zone": "a"}, **required({"matchExpressions": [expr("disk", "In", "hdd")]})},
            False,
        ),
        (
            {"nodeSelector": {"zone": "b"}, **required({"matchExpressions": [expr("disk", "In", "ssd")]})},
            False,
        ),
        (
            {"nodeSelector": {"zone": "a"}, **required({"matchExpressions": [expr("disk", "In", "ssd")]})},
            True,
        ),
        (required(), False),  # required affinity without terms selects no node
        (required({}), False),
        # A malformed term never matches, but other terms still can.
        (required({"matchExpressions": [expr("disk", "Foo")]}), False),
        (
            required({"matchExpressions": [expr("disk", "Foo")]}, {"matchExpressions": [expr("zone", "In", "a")]}),
            True,
        ),
    ],
)
def test_required_node_affinity(spec: dict[str, Any], expected: bool) -> None:
    assert RequiredNodeAffinity(pod_with(spec)).matches("n1", NODE_LABELS) is expected
