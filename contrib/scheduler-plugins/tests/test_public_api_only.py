"""The package is written against kubesched's plugin API only: `kubesched.plugin` (and its
`preemption` library) and the object model `kubesched.api`, nothing else of kubesched."""

from __future__ import annotations

import ast
from pathlib import Path

import kubesched_scheduler_plugins

ALLOWED = ("kubesched.plugin", "kubesched.api")


def imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return names


def test_only_the_public_plugin_api_is_imported() -> None:
    root = Path(kubesched_scheduler_plugins.__file__).parent
    offending = {
        f"{path.relative_to(root)}: {name}"
        for path in root.rglob("*.py")
        for name in imported(path)
        if (name == "kubesched" or name.startswith("kubesched.")) and not name.startswith(ALLOWED)
    }
    assert not offending, sorted(offending)
