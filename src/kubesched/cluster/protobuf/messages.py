"""The schema's messages as protobuf message classes (the `protobuf` library's, parsed and
serialized in C by upb), built from the schema data: one proto2 file per package, each field
named `f<number>` (the wire knows only numbers; JSON names are the codec's business)."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping
from graphlib import TopologicalSorter
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

from kubesched.cluster.protobuf import schema

F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": F.TYPE_STRING,
    "bytes": F.TYPE_BYTES,
    "bool": F.TYPE_BOOL,
    "int32": F.TYPE_INT32,
    "int64": F.TYPE_INT64,
    "uint32": F.TYPE_UINT32,
    "uint64": F.TYPE_UINT64,
    "double": F.TYPE_DOUBLE,
    "float": F.TYPE_FLOAT,
}


def field_name(number: int) -> str:
    return f"f{number}"


def _entry_name(number: int) -> str:
    return f"F{number}Entry"  # the name protobuf requires of a map field's entry type


def _package(full: str) -> str:
    return full.rpartition(".")[0]


def _set_type(fd: Any, type_: str, deps: set[str]) -> None:
    scalar = _SCALARS.get(type_)
    if scalar is not None:
        fd.type = scalar
    else:
        fd.type = F.TYPE_MESSAGE
        fd.type_name = "." + type_
        deps.add(_package(type_))


def _file(package: str, names: list[str], data: Mapping[str, Any], deps: set[str]) -> Any:
    file = descriptor_pb2.FileDescriptorProto(name=package.replace(".", "/") + ".proto", package=package)
    file.syntax = "proto2"
    for full in names:
        message = file.message_type.add(name=full.rpartition(".")[2])
        for row in data[full]["fields"]:
            number = row["n"]
            fd = message.field.add(name=field_name(number), number=number)
            if row.get("mapKey"):
                entry = message.nested_type.add(name=_entry_name(number))
                entry.options.map_entry = True
                key = entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL)
                _set_type(key, row["mapKey"], deps)
                value = entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL)
                _set_type(value, row["type"], deps)
                fd.label = F.LABEL_REPEATED
                fd.type = F.TYPE_MESSAGE
                fd.type_name = f".{full}.{_entry_name(number)}"
                continue
            fd.label = F.LABEL_REPEATED if row.get("repeated") else F.LABEL_OPTIONAL
            _set_type(fd, row["type"], deps)
    deps.discard(package)
    file.dependency.extend(sorted(p.replace(".", "/") + ".proto" for p in deps))
    return file


@functools.cache
def _pool() -> descriptor_pool.DescriptorPool:
    data = schema.data()
    by_package: dict[str, list[str]] = defaultdict(list)
    for full in data:
        by_package[_package(full)].append(full)
    files: dict[str, Any] = {}
    needs: dict[str, set[str]] = {}
    for package, names in by_package.items():
        deps: set[str] = set()
        files[package] = _file(package, names, data, deps)
        needs[package] = deps
    pool = descriptor_pool.DescriptorPool()
    for package in TopologicalSorter(needs).static_order():
        pool.Add(files[package])
    return pool


@functools.cache
def message_class(name: str) -> type[Message]:
    """The class of the message `name` (a full protobuf name); KeyError when the schema has none."""
    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(name))


__all__ = ["field_name", "message_class"]
