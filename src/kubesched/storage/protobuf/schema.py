"""The protobuf schema of the served API groups, as data (`schema.json`, written by
`tools/protobuf_schema.py` from upstream's `generated.proto` files and Go struct tags): each
message's fields with their numbers, wire types and JSON names, and which messages stand for a
JSON scalar (times, quantities, int-or-strings, raw JSON)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import NotRequired, TypedDict

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
RUNTIME = "k8s.io.apimachinery.pkg.runtime"
EXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"

TIME = f"{META}.Time"
MICRO_TIME = f"{META}.MicroTime"
DURATION = f"{META}.Duration"
FIELDS_V1 = f"{META}.FieldsV1"
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = f"{RUNTIME}.RawExtension"
EXTENSIONS_JSON = f"{EXTENSIONS}.JSON"
SCHEMA_OR_ARRAY = f"{EXTENSIONS}.JSONSchemaPropsOrArray"
SCHEMA_OR_BOOL = f"{EXTENSIONS}.JSONSchemaPropsOrBool"
SCHEMA_OR_STRINGS = f"{EXTENSIONS}.JSONSchemaPropsOrStringArray"

SPECIAL = frozenset(
    {
        TIME,
        MICRO_TIME,
        DURATION,
        FIELDS_V1,
        QUANTITY,
        INT_OR_STRING,
        RAW_EXTENSION,
        EXTENSIONS_JSON,
        SCHEMA_OR_ARRAY,
        SCHEMA_OR_BOOL,
        SCHEMA_OR_STRINGS,
    }
)


@dataclass(frozen=True, eq=False)
class Field:
    number: int
    json: str  # the JSON name ("" for a message inlined into its parent in JSON)
    type: str  # a scalar type, or a message's full name
    repeated: bool = False
    map_key: str = ""  # for a map<key, type>
    keep_zero: bool = False  # a pointer, or a value without omitempty: its zero value is written in JSON

    @property
    def inline(self) -> bool:
        return not self.json


@dataclass(eq=False)
class Message:
    name: str
    fields: tuple[Field, ...]
    is_list: bool = False  # a Go slice type: the JSON form is the bare list of its one field
    by_number: dict[int, Field] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.by_number = {f.number: f for f in self.fields}

    @functools.cached_property
    def json_names(self) -> frozenset[str]:
        """The JSON keys this message's fields take, its inlined messages' included."""
        names: set[str] = set()
        for f in self.fields:
            names |= message(f.type).json_names if f.inline else {f.json}
        return frozenset(names)


class FieldRow(TypedDict):
    """One field of a message in `schema.json`."""

    n: int
    json: str
    proto: str
    type: str
    repeated: NotRequired[bool]
    mapKey: NotRequired[str]
    pointer: NotRequired[bool]
    always: NotRequired[bool]
    inline: NotRequired[bool]


class MessageRow(TypedDict):
    """One message in `schema.json`: its fields, and whether it is a Go slice type."""

    fields: list[FieldRow]
    list: NotRequired[bool]


@functools.cache
def data() -> dict[str, MessageRow]:
    text = resources.files("kubesched.storage.protobuf").joinpath("schema.json").read_text()
    data: dict[str, MessageRow] = json.loads(text)["messages"]
    return data


@functools.cache
def message(name: str) -> Message:
    """The message `name` (a full protobuf name); KeyError when the schema has none."""
    entry = data()[name]
    return Message(
        name,
        tuple(
            Field(
                number=row["n"],
                json=row["json"] if not row.get("inline") else "",
                type=row["type"],
                repeated=row.get("repeated", False),
                map_key=row.get("mapKey", ""),
                keep_zero=row.get("pointer", False) or row.get("always", False),
            )
            for row in entry["fields"]
        ),
        is_list=entry.get("list", False),
    )


def known(name: str) -> bool:
    return name in data()


def proto_package(group: str, version: str) -> str:
    """The protobuf package of an API group and version: `k8s.io.api.core.v1` for the core group."""
    if group == "":
        return f"k8s.io.api.core.{version}"
    if group == "meta.k8s.io":
        return META
    if group == "apiextensions.k8s.io":
        return f"k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{version}"
    return f"k8s.io.api.{group.removesuffix('.k8s.io').split('.')[0]}.{version}"
