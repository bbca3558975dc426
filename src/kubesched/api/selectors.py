"""Label, field and node selectors with kube-scheduler's matching semantics.

Label key and value syntax is not validated; only the structural rules the scheduler's
parsers enforce (operators, value counts, integer operands) raise ``FieldError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from lightkube.models import core_v1, meta_v1

from kubesched.api.errors import FieldError

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"

Obj = TypeVar("Obj")  # the objects a compiled field selector matches

_LABEL_SELECTOR_OPERATORS = (DOES_NOT_EXIST, EXISTS, IN, NOT_IN)
_NODE_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
_NODE_FIELD_OPERATORS = (IN, NOT_IN)

_GO_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_RANGE = range(-(2**63), 2**63)

_NO_LABELS: Mapping[str, str] = {}


def _parse_int64(text: str) -> int | None:
    """Parse like Go's ``strconv.ParseInt(text, 10, 64)``; None when it would fail."""
    if _GO_INT64.fullmatch(text):
        number = int(text)
        if number in _INT64_RANGE:
            return number
    return None


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    """One label condition. Equality forms are stored as ``In``/``NotIn`` with a single value."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this condition (a missing key satisfies only NotIn/DoesNotExist)."""
        value = labels.get(self.key)
        op = self.operator
        if op == IN:
            return value is not None and value in self.values
        if op == NOT_IN:
            return value is None or value not in self.values
        if op == EXISTS:
            return value is not None
        if op == DOES_NOT_EXIST:
            return value is None
        actual = None if value is None else _parse_int64(value)
        bound = _parse_int64(next(iter(self.values))) if len(self.values) == 1 else None
        if actual is None or bound is None:
            return False
        return actual > bound if op == GT else actual < bound


def _requirement(key: str, operator: str, values: Sequence[str], path: str) -> LabelRequirement:
    """Build a requirement, raising the first structural error as upstream's ``NewRequirement`` would."""
    values_path = f"{path}.values" if path else "values"
    if operator in (IN, NOT_IN) and not values:
        raise FieldError(values_path, list(values), "for 'in', 'notin' operators, values set can't be empty")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        raise FieldError(values_path, list(values), "values set must be empty for exists and does not exist")
    if operator in (GT, LT):
        if len(values) != 1:
            raise FieldError(values_path, list(values), "for 'Gt', 'Lt' operators, exactly one value is required")
        if _parse_int64(values[0]) is None:
            raise FieldError(f"{values_path}[0]", values[0], "for 'Gt', 'Lt' operators, the value must be an integer")
    return LabelRequirement(key, operator, frozenset(values))


class LabelSelectorMatcher:
    """A compiled label selector: all requirements must hold; ``nothing`` matches no labels at all."""

    __slots__ = ("_nothing", "_requirements")

    def __init__(self, requirements: Iterable[LabelRequirement] = (), *, nothing: bool = False) -> None:
        self._requirements = tuple(requirements)
        self._nothing = nothing

    @property
    def requirements(self) -> tuple[LabelRequirement, ...]:
        """The ANDed requirements (empty for both the everything and the nothing selector)."""
        return self._requirements

    @property
    def matches_nothing(self) -> bool:
        """True for the selector built from a missing (nil) label selector."""
        return self._nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        if self._nothing:
            return False
        present = _NO_LABELS if labels is None else labels
        return all(r.matches(present) for r in self._requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "LabelSelectorMatcher(nothing=True)"
        return f"LabelSelectorMatcher({list(self._requirements)!r})"


EVERYTHING = LabelSelectorMatcher()
NOTHING = LabelSelectorMatcher(nothing=True)


def compile_label_selector(sel: meta_v1.LabelSelector | None, *, field: str = "selector") -> LabelSelectorMatcher:
    """Compile a ``metav1.LabelSelector``: None selects nothing, an empty selector everything."""
    if sel is None:
        return NOTHING
    if not sel.matchLabels and not sel.matchExpressions:
        return EVERYTHING
    requirements = [LabelRequirement(k, IN, frozenset({v})) for k, v in (sel.matchLabels or {}).items()]
    for i, expr in enumerate(sel.matchExpressions or ()):
        path = f"{field}.matchExpressions[{i}]"
        if expr.operator not in _LABEL_SELECTOR_OPERATORS:
            raise FieldError.not_supported(f"{path}.operator", expr.operator, _LABEL_SELECTOR_OPERATORS)
        requirements.append(_requirement(expr.key, expr.operator, expr.values or [], path))
    return LabelSelectorMatcher(requirements)


def node_selector_map_matches(node_selector: Mapping[str, str] | None, labels: Mapping[str, str] | None) -> bool:
    """``pod.spec.nodeSelector`` semantics: every pair must be present; empty or None matches all."""
    present = _NO_LABELS if labels is None else labels
    return all(present.get(k) == v for k, v in (node_selector or {}).items())


# --- string label selectors (?labelSelector=) -----------------------------------------------

_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_KEYWORDS = frozenset({"in", "notin"})
_ID = "identifier"
_END = "end"
_STRING_OPERATORS = {"in": IN, "notin": NOT_IN, "=": IN, "==": IN, "!=": NOT_IN, ">": GT, "<": LT}
_BINARY_OPERATOR_NAMES = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[str, str]]:
    """Tokenize a label selector into (kind, literal) pairs ending with an end token.

    Symbols are their own kind; words are keywords (``in``, ``notin``) or identifiers.
    """
    tokens: list[tuple[str, str]] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in _WHITESPACE:
            pos += 1
        if pos == end:
            tokens.append((_END, ""))
            return tokens
        if text[pos] in _SPECIAL:
            size = 2 if text[pos : pos + 2] in ("==", "!=") else 1
            symbol = text[pos : pos + size]
            tokens.append((symbol, symbol))
            pos += size
        else:
            start = pos
            while pos < end and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
                pos += 1
            word = text[start:pos]
            tokens.append((word if word in _KEYWORDS else _ID, word))


class _Parser:
    """Recursive-descent parser mirroring apimachinery's label selector grammar and messages."""

    def __init__(self, text: str) -> None:
        self._tokens = _lex(text)
        self._pos = 0

    def _peek(self) -> tuple[str, str]:
        kind, literal = self._tokens[self._pos]
        return (_ID if kind in _KEYWORDS else kind), literal

    def _next(self, *, keywords: bool = False) -> tuple[str, str]:
        kind, literal = self._tokens[self._pos]
        self._pos += 1
        return (kind if keywords or kind not in _KEYWORDS else _ID), literal

    def parse(self) -> list[LabelRequirement]:
        requirements: list[LabelRequirement] = []
        while True:
            kind, literal = self._peek()
            if kind == _END:
                return requirements
            if kind not in (_ID, "!"):
                raise ValueError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self._requirement())
            except (ValueError, FieldError) as exc:
                raise ValueError(f"unable to parse requirement: {exc}") from None
            kind, literal = self._next()
            if kind == _END:
                return requirements
            if kind != ",":
                raise ValueError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self._peek()
            if kind not in (_ID, "!"):
                raise ValueError(f"found '{literal}', expected: identifier after ','")

    def _requirement(self) -> LabelRequirement:
        kind, key = self._next()
        negated = kind == "!"
        if negated:
            kind, key = self._next()
        if kind != _ID:
            raise ValueError(f"found '{key}', expected: identifier")
        if negated:
            # Upstream stops here even if an operator follows; the caller then rejects it.
            return LabelRequirement(key, DOES_NOT_EXIST)
        if self._peek()[0] in (_END, ","):
            return LabelRequirement(key, EXISTS)
        kind, literal = self._next(keywords=True)
        if kind not in _STRING_OPERATORS:
            raise ValueError(f"found '{literal}', expected: {_BINARY_OPERATOR_NAMES}")
        values = self._set_values() if kind in ("in", "notin") else self._exact_value()
        return _requirement(key, _STRING_OPERATORS[kind], sorted(values), "")

    def _set_values(self) -> set[str]:
        kind, literal = self._next()
        if kind != "(":
            raise ValueError(f"found '{literal}' expected: '('")
        kind, literal = self._peek()
        if kind == ")":
            self._next()
            return {""}
        if kind not in (_ID, ","):
            raise ValueError(f"found '{literal}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            kind, literal = self._next()
            if kind == _ID:
                values.add(literal)
                following, following_literal = self._peek()
                if following == ")":
                    self._next()
                    return values
                if following != ",":
                    raise ValueError(f"found '{following_literal}', expected: ',' or ')'")
            elif kind == ",":
                following = self._peek()[0]
                if not values or following in (",", ")"):
                    values.add("")
                if following == ")":
                    self._next()
                    return values
            else:
                raise ValueError(f"found '{literal}', expected: ',', or identifier")

    def _exact_value(self) -> set[str]:
        if self._peek()[0] in (_END, ","):
            return {""}
        kind, literal = self._next()
        if kind != _ID:
            raise ValueError(f"found '{literal}', expected: identifier")
        return {literal}


def parse_label_selector(text: str) -> LabelSelectorMatcher:
    """Parse the ``?labelSelector=`` syntax (``a=b,c!=d,e in (f,g),!h``); empty selects everything."""
    try:
        requirements = _Parser(text).parse()
    except ValueError as exc:
        raise FieldError("labelSelector", text, str(exc)) from None
    return LabelSelectorMatcher(sorted(requirements, key=lambda r: r.key))


# --- field selectors (?fieldSelector=) ------------------------------------------------------


class FieldRequirement(NamedTuple):
    """One field selector term; ``operator`` is ``"="`` or ``"!="``."""

    field: str
    operator: str
    value: str


class FieldSelector:
    """A parsed field selector: every term must hold. An empty selector matches everything."""

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[FieldRequirement] = ()) -> None:
        self._requirements = tuple(requirements)

    @property
    def requirements(self) -> tuple[FieldRequirement, ...]:
        """The terms, sorted as upstream sorts them."""
        return self._requirements

    def requires_exact_match(self, field: str) -> str | None:
        """The value ``field`` must equal for anything to match, if a term pins it."""
        for r in self._requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def matches(self, get: Callable[[str], str]) -> bool:
        """Whether an object matches; ``get`` returns its value for a field ("" when unset)."""
        return all((get(r.field) == r.value) == (r.operator == "=") for r in self._requirements)

    def compile(self, getters: Mapping[str, Callable[[Obj], str]]) -> Callable[[Obj], bool]:
        """`matches` for objects whose field values `getters` read (one per field the terms name),
        made once: a watch asks it of every event."""
        terms = tuple((getters[r.field], r.value, r.operator == "=") for r in self._requirements)

        def match(obj: Obj) -> bool:
            for get, value, equal in terms:  # noqa: SIM110 - a loop: no generator made per event
                if (get(obj) == value) is not equal:
                    return False
            return True

        return match

    def __repr__(self) -> str:
        return f"FieldSelector({list(self._requirements)!r})"


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not backslash-escaped, keeping escapes in place."""
    terms: list[str] = []
    start, escaped = 0, False
    for i, c in enumerate(text):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    out: list[str] = []
    escaped = False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


_FIELD_OPERATOR = re.compile("!=|==|=")


def parse_field_selector(text: str, *, supported: Collection[str]) -> FieldSelector:
    """Parse the ``?fieldSelector=`` syntax (``f=v``, ``f==v``, ``f!=v``, comma separated).

    Fields outside ``supported`` are rejected with upstream's ``field label not supported`` text.
    """
    requirements: list[FieldRequirement] = []
    try:
        for part in sorted(_split_terms(text) if text else []):
            if not part:
                continue
            found = _FIELD_OPERATOR.search(part)
            if found is None:
                raise ValueError(f"invalid selector: '{text}'; can't understand '{part}'")
            operator = "!=" if found.group() == "!=" else "="
            value = _unescape(part[found.end() :])
            requirements.append(FieldRequirement(part[: found.start()], operator, value))
        for r in requirements:
            if r.field not in supported:
                raise ValueError(f"field label not supported: {r.field}")
    except ValueError as exc:
        raise FieldError("fieldSelector", text, str(exc)) from None
    return FieldSelector(requirements)


# --- node selectors (nodeAffinity) ----------------------------------------------------------


class _NodeTerm(NamedTuple):
    labels: tuple[LabelRequirement, ...] | None
    fields: tuple[FieldRequirement, ...] | None
    errors: tuple[FieldError, ...]

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        if self.errors:
            return False
        if self.labels is not None and not all(r.matches(labels) for r in self.labels):
            return False
        if self.fields is None or not node_name:
            return True
        fields = {"metadata.name": node_name}
        return all((fields.get(r.field, "") == r.value) == (r.operator == "=") for r in self.fields)


def _node_expressions(
    exprs: Sequence[core_v1.NodeSelectorRequirement], path: str
) -> tuple[tuple[LabelRequirement, ...], list[FieldError]]:
    requirements: list[LabelRequirement] = []
    errors: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        if expr.operator not in _NODE_SELECTOR_OPERATORS:
            errors.append(FieldError.not_supported(f"{p}.operator", expr.operator, _NODE_SELECTOR_OPERATORS))
            continue
        try:
            requirements.append(_requirement(expr.key, expr.operator, expr.values or [], p))
        except FieldError as exc:
            errors.append(exc)
    return tuple(requirements), errors


def _node_fields(
    exprs: Sequence[core_v1.NodeSelectorRequirement], path: str
) -> tuple[tuple[FieldRequirement, ...], list[FieldError]]:
    requirements: list[FieldRequirement] = []
    errors: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = f"{path}[{i}]"
        values = expr.values or []
        if expr.operator not in _NODE_FIELD_OPERATORS:
            errors.append(FieldError.not_supported(f"{p}.operator", expr.operator, _NODE_FIELD_OPERATORS))
        elif len(values) != 1:
            errors.append(FieldError(f"{p}.values", list(values), "must have one element"))
        else:
            requirements.append(FieldRequirement(expr.key, "=" if expr.operator == IN else "!=", values[0]))
    return tuple(requirements), errors


def _compile_terms(ns: core_v1.NodeSelector | None, field: str) -> tuple[_NodeTerm, ...]:
    """Parse every non-empty term; a term with errors keeps them and never matches."""
    if ns is None:
        return ()
    path = f"{field}.nodeSelectorTerms" if field else "nodeSelectorTerms"
    terms: list[_NodeTerm] = []
    for i, term in enumerate(ns.nodeSelectorTerms or ()):
        if not term.matchExpressions and not term.matchFields:
            continue
        labels = fields = None
        errors: list[FieldError] = []
        if term.matchExpressions:
            labels, errs = _node_expressions(term.matchExpressions, f"{path}[{i}].matchExpressions")
            errors += errs
        if term.matchFields:
            fields, errs = _node_fields(term.matchFields, f"{path}[{i}].matchFields")
            errors += errs
        terms.append(_NodeTerm(labels, fields, tuple(errors)))
    return tuple(terms)


class NodeSelectorMatcher:
    """Compiled ``v1.NodeSelector``: terms are ORed; a node name of "" skips ``matchFields``."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Iterable[_NodeTerm]) -> None:
        self._terms = tuple(terms)

    def matches(self, node_name: str, labels: Mapping[str, str] | None) -> bool:
        """Whether a node with this name and these labels satisfies any term."""
        present = _NO_LABELS if labels is None else labels
        return any(term.matches(node_name, present) for term in self._terms)


def compile_node_selector(ns: core_v1.NodeSelector | None, *, field: str = "") -> NodeSelectorMatcher:
    """Compile a node selector, raising the first parse error (paths are prefixed with ``field``).

    Terms with neither ``matchExpressions`` nor ``matchFields`` match nothing, and so does a
    selector with no terms (or None).
    """
    terms = _compile_terms(ns, field)
    for term in terms:
        if term.errors:
            raise term.errors[0]
    return NodeSelectorMatcher(terms)


class RequiredNodeAffinity:
    """A pod's hard node constraints: ``spec.nodeSelector`` AND required node affinity.

    As in the scheduler, malformed affinity terms are not an error here: they simply never match.
    """

    __slots__ = ("_affinity", "_node_selector")

    def __init__(self, pod: core_v1.Pod) -> None:
        spec = pod.spec
        self._node_selector: Mapping[str, str] = dict(spec.nodeSelector or {}) if spec else {}
        affinity = spec.affinity if spec else None
        node_affinity = affinity.nodeAffinity if affinity else None
        required = node_affinity.requiredDuringSchedulingIgnoredDuringExecution if node_affinity else None
        self._affinity = None if required is None else NodeSelectorMatcher(_compile_terms(required, ""))

    def matches(self, node_name: str, labels: Mapping[str, str] | None) -> bool:
        """Whether the pod may run on a node with this name and these labels."""
        if not node_selector_map_matches(self._node_selector, labels):
            return False
        return self._affinity is None or self._affinity.matches(node_name, labels)


_SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin"}


def selector_string(selector: meta_v1.LabelSelector | None) -> str | None:
    """A `LabelSelector` in label-selector syntax (``""`` matches all); `None` if it is malformed."""
    if selector is None:
        return ""
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.matchLabels or {}).items()]
    for expr in selector.matchExpressions or ():
        key, op, values = expr.key, expr.operator, sorted(expr.values or ())
        if op in _SELECTOR_OPERATORS:
            if not values:
                return None
            reqs.append((key, f"{key} {_SELECTOR_OPERATORS[op]} ({','.join(values)})"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                return None
            reqs.append((key, key if op == "Exists" else f"!{key}"))
        else:
            return None
    reqs.sort(key=lambda r: r[0])
    return ",".join(text for _, text in reqs)
