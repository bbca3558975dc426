"""Plain data (a decoded request body, a patched object) checked where the lightkube models leave
types open: maps of strings (labels, annotations, selectors) and maps of quantities (requests,
limits, capacity), which the models type as a bare `dict`. A value kube-apiserver's decoder
refuses is refused here with its words, naming the field; a null is the empty string in a map of
strings and zero in a map of quantities, as Go decodes them. The models' own types are msgspec's
to check when the data is converted."""

from __future__ import annotations

import typing
from collections.abc import Mapping

import msgspec

from kubesched.api.objects import Model
from kubesched.storage.definitions import MAP_VALUES, QUANTITY, STRING, definition_name, model_of, short_name

QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

# What a field holds that needs checking: a map of strings, a map of quantities, a struct (its
# class), or a list of structs.
_STRINGS, _QUANTITIES, _STRUCT, _LIST = "strings", "quantities", "struct", "list"
Plan = dict[str, tuple[str, type[Model] | None]]  # json field name -> (what, the struct class for _STRUCT and _LIST)


def type_error(data: object, cls: type[Model]) -> str | None:
    """Why `data` cannot be decoded as `cls`, as kube-apiserver says it (None: it can, as far as
    the open maps go). Nulls in maps of strings are made empty strings in place."""
    if not isinstance(data, Mapping):
        return None
    try:
        model = model_of(cls)
    except TypeError:  # a custom kind: its schema is checked where it is stored
        return None
    return _check(data, _plan(model), model.__name__, "")


def _check(data: Mapping[str, object], plan: Plan, struct: str, path: str) -> str | None:
    for key, (what, inner) in plan.items():
        value = data.get(key)
        if value is None:
            continue
        field = f"{path}.{key}" if path else key
        if inner is None:  # _STRINGS or _QUANTITIES
            problem = _map_error(value, what, struct, field)
        elif what == _STRUCT:
            problem = _check(value, _plan(inner), inner.__name__, field) if isinstance(value, Mapping) else None
        else:
            problem = None
            for item in value if isinstance(value, list) else ():
                if isinstance(item, Mapping) and (problem := _check(item, _plan(inner), inner.__name__, field)):
                    break
        if problem is not None:
            return problem
    return None


def _map_error(value: object, what: str, struct: str, field: str) -> str | None:
    go_type = "map[string]string" if what == _STRINGS else "v1.ResourceList"
    if not isinstance(value, dict):
        return unmarshal_error(value, f"{struct}.{field}", go_type)
    for key, item in value.items():
        if what == _STRINGS:
            if item is None:
                value[key] = ""
            elif not isinstance(item, str):
                return unmarshal_error(item, f"{struct}.{field}", "string")
        elif item is None:
            value[key] = "0"  # a null quantity decodes as zero
        elif isinstance(item, bool | list | dict):
            return f"{field}[{key}]: {QUANTITY_FORMAT}"
    return None


def unmarshal_error(value: object, field: str, go_type: str) -> str:
    """What Go's JSON decoder says of `value` sent for `field` (`Struct.path`) of `go_type`."""
    return f"json: cannot unmarshal {_json_type(value)} into Go struct field {field} of type {go_type}"


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _plan(model: type[Model]) -> Plan:
    """The fields of `model` under which an open map lies, and what each holds (made once)."""
    plan = _PLANS.get(model)
    if plan is None:
        plan = _PLANS[model] = _make_plan(model)
    return plan


def _make_plan(model: type[Model]) -> Plan:
    _IN_PROGRESS.add(model)
    try:
        hints = typing.get_type_hints(model)
        maps = MAP_VALUES.get(short_name(definition_name(model)), {})
        plan: Plan = {}
        for attr, key in zip(model.__struct_fields__, model.__struct_encode_fields__, strict=True):
            held = _held(hints.get(attr))
            if held is None:
                continue
            what, inner = held
            if inner is None:  # a map
                value_type = maps.get(key)
                if value_type in (STRING, QUANTITY):
                    plan[key] = (_STRINGS if value_type == STRING else _QUANTITIES, None)
            elif inner not in _IN_PROGRESS and _plan(inner):
                plan[key] = (what, inner)
        return plan
    finally:
        _IN_PROGRESS.discard(model)


_PLANS: dict[type[Model], Plan] = {}
_IN_PROGRESS: set[type[Model]] = set()  # models whose plan is being made (recursive schemas)


def _held(tp: object) -> tuple[str, type[Model] | None] | None:
    """("map", None) for a bare dict, (_STRUCT, cls) for a struct, (_LIST, cls) for a list of them."""
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _held(inner[0]) if len(inner) == 1 else None
    if tp is dict:
        return ("map", None)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return (_STRUCT, tp)
    if origin is list:
        (item,) = typing.get_args(tp) or (None,)
        if isinstance(item, type) and issubclass(item, msgspec.Struct):
            return (_LIST, item)
    return None
