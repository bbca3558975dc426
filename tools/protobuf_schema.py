"""Write the protobuf schema kubesched's codec reads (`kubesched/storage/protobuf/schema.json`)
from upstream's sources: each message's fields as `generated.proto` declares them (number, wire
type, repeated, map), joined with what the Go struct tags in the same package say (the JSON name,
omitempty, pointer or value, inlined into the parent in JSON).

    python tools/protobuf_schema.py API APIMACHINERY APIEXTENSIONS > src/kubesched/storage/protobuf/schema.json

API, APIMACHINERY and APIEXTENSIONS are checkouts of k8s.io/api, k8s.io/apimachinery and
k8s.io/apiextensions-apiserver at the release kubesched follows (v0.36.2 for Kubernetes v1.36.2).
Only the packages in PACKAGES are read; every message they declare is written, with the messages
of other packages they refer to.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# (checkout, directory in it, proto package)
PACKAGES = [
    ("api", f"{group}/{version}", f"k8s.io.api.{group}.{version}")
    for group, version in (
        ("core", "v1"),
        ("apps", "v1"),
        ("batch", "v1"),
        ("policy", "v1"),
        ("policy", "v1beta1"),
        ("scheduling", "v1"),
        ("coordination", "v1"),
        ("events", "v1"),
        ("storage", "v1"),
        ("resource", "v1"),
        ("rbac", "v1"),
        ("authorization", "v1"),
        ("authentication", "v1"),
        ("networking", "v1"),
        ("discovery", "v1"),
        ("autoscaling", "v1"),
        ("autoscaling", "v2"),
    )
] + [
    ("apimachinery", "pkg/apis/meta/v1", "k8s.io.apimachinery.pkg.apis.meta.v1"),
    ("apimachinery", "pkg/runtime", "k8s.io.apimachinery.pkg.runtime"),
    ("apimachinery", "pkg/runtime/schema", "k8s.io.apimachinery.pkg.runtime.schema"),
    ("apimachinery", "pkg/api/resource", "k8s.io.apimachinery.pkg.api.resource"),
    ("apimachinery", "pkg/util/intstr", "k8s.io.apimachinery.pkg.util.intstr"),
    ("apiextensions", "pkg/apis/apiextensions/v1", "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1"),
]

SCALARS = {"string", "bool", "int32", "int64", "uint32", "uint64", "bytes", "double", "float"}

_MESSAGE = re.compile(r"^message (\w+) \{$")
_FIELD = re.compile(r"^\s*(optional|repeated) ([\w.]+) (\w+) = (\d+);")
_MAP = re.compile(r"^\s*map<(\w+), ([\w.]+)> (\w+) = (\d+);")
_PACKAGE = re.compile(r"^package ([\w.]+);")
_STRUCT = re.compile(r"^type (\w+) struct \{")
_SLICE = re.compile(r"^type (\w+) \[\]")
_GO_FIELD = re.compile(r"^\t(?:(\w+) )?(\*?[\w.\[\]*]+) +`([^`]*)`")
_TAG = re.compile(r'(\w+):"([^"]*)"')


@dataclass
class ProtoField:
    number: int
    name: str
    type: str  # a scalar, or a message's full name
    repeated: bool = False
    map_key: str = ""  # a map<key, type>: the key's scalar type


@dataclass
class GoField:
    json: str  # "" when inlined
    omitempty: bool
    pointer: bool
    inline: bool


@dataclass
class Package:
    name: str
    messages: dict[str, list[ProtoField]] = field(default_factory=dict)
    go_fields: dict[tuple[str, int], GoField] = field(default_factory=dict)  # (struct, number)
    slices: set[str] = field(default_factory=set)  # Go types declared as slices


def _full(package: str, type_: str) -> str:
    if type_ in SCALARS:
        return type_
    return type_.lstrip(".") if type_.startswith(".") else f"{package}.{type_}"


def read_proto(path: Path) -> Package:
    lines = path.read_text().splitlines()
    package = next(m.group(1) for line in lines if (m := _PACKAGE.match(line)))
    pkg = Package(package)
    current: list[ProtoField] | None = None
    for line in lines:
        if (m := _MESSAGE.match(line)) is not None:
            current = pkg.messages.setdefault(f"{package}.{m.group(1)}", [])
        elif line == "}":
            current = None
        elif current is not None and (m := _MAP.match(line)) is not None:
            key, value, name, number = m.groups()
            current.append(ProtoField(int(number), name, _full(package, value), map_key=key))
        elif current is not None and (m := _FIELD.match(line)) is not None:
            label, type_, name, number = m.groups()
            current.append(ProtoField(int(number), name, _full(package, type_), repeated=label == "repeated"))
    return pkg


def read_go(pkg: Package, directory: Path) -> None:
    """The Go struct tags of the package's types: JSON names, omitempty, pointers, inlining."""
    for source in sorted(directory.glob("*.go")):
        if source.name.endswith("_test.go") or source.name.startswith("zz_generated") or "generated" in source.name:
            continue
        struct = None
        for line in source.read_text().splitlines():
            if (m := _STRUCT.match(line)) is not None:
                struct = m.group(1)
                continue
            if (m := _SLICE.match(line)) is not None:
                pkg.slices.add(m.group(1))
            if line.startswith("}"):
                struct = None
                continue
            if struct is None or (m := _GO_FIELD.match(line)) is None:
                continue
            name, go_type, tags = m.groups()
            tag = dict(_TAG.findall(tags))
            if "protobuf" not in tag:
                continue
            parts = tag["protobuf"].split(",")
            if len(parts) < 2 or not parts[1].isdigit():
                continue  # `protobuf:"-"`: not in the message
            json_name, _, options = tag.get("json", "").partition(",")
            inline = "inline" in options.split(",")
            pkg.go_fields[(struct, int(parts[1]))] = GoField(
                json="" if inline else (json_name or (name or go_type)),
                omitempty="omitempty" in options.split(","),
                pointer=go_type.startswith("*"),
                inline=inline,
            )


def schema(roots: dict[str, Path]) -> dict[str, object]:
    packages: dict[str, Package] = {}
    for root, directory, name in PACKAGES:
        where = roots[root] / directory
        pkg = read_proto(where / "generated.proto")
        assert pkg.name == name, (pkg.name, name)
        read_go(pkg, where)
        packages[name] = pkg
    messages: dict[str, object] = {}
    for pkg in packages.values():
        for full, fields in pkg.messages.items():
            short = full.rsplit(".", 1)[1]
            rows = []
            for f in sorted(fields, key=lambda f: f.number):
                go = pkg.go_fields.get((short, f.number))
                row: dict[str, object] = {"n": f.number, "proto": f.name, "type": f.type}
                row["json"] = go.json if go is not None else f.name
                if f.repeated:
                    row["repeated"] = True
                if f.map_key:
                    row["mapKey"] = f.map_key
                if go is not None and go.pointer:
                    row["pointer"] = True
                if go is not None and not go.omitempty and not go.inline:
                    row["always"] = True
                if go is not None and go.inline:
                    row["inline"] = True
                rows.append(row)
            entry: dict[str, object] = {"fields": rows}
            if short in pkg.slices and len(fields) == 1 and fields[0].name == "items" and fields[0].repeated:
                entry["list"] = True  # a Go slice type: in JSON the bare list of its items
            messages[full] = entry
    missing = sorted(
        {str(row["type"]) for entry in messages.values() for row in entry["fields"]}  # type: ignore[attr-defined]
        - SCALARS
        - set(messages)
    )
    if missing:
        raise SystemExit(f"messages referred to but not read: {', '.join(missing)}")
    return {"source": "k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver v0.36.2", "messages": messages}


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    roots = dict(zip(("api", "apimachinery", "apiextensions"), map(Path, sys.argv[1:]), strict=True))
    json.dump(schema(roots), sys.stdout, indent=None, separators=(",", ":"), sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
