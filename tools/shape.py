"""The source's shape against its limits: files over 600 lines, functions over 60, and how often
`Any` is used (each `Any` in an annotation or expression; imports not counted), per package.

    .venv/bin/python -m tools.shape            # the report
    .venv/bin/python -m tools.shape --any      # the Any count alone, per package (make any-count)

The functions still over the limit are listed in `LONG_FUNCTIONS` with the length they may not
exceed, and `ANY_CEILING` is the count the source may not exceed: both only come down (a test
holds the source to them).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "kubesched"
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 60

# Functions still longer than MAX_FUNCTION_LINES, each with the length it may not exceed.
LONG_FUNCTIONS: dict[str, int] = {}

ANY_CEILING = 233


@dataclass(frozen=True)
class Function:
    path: str  # relative to src/kubesched
    name: str  # qualified within its module: Class.method
    line: int
    length: int

    @property
    def key(self) -> str:
        return f"{self.path}:{self.name}"


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py"))


def _relative(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def long_files() -> list[tuple[str, int]]:
    found = []
    for path in _modules():
        lines = len(path.read_text().splitlines())
        if lines > MAX_FILE_LINES:
            found.append((_relative(path), lines))
    return found


def functions() -> list[Function]:
    found: list[Function] = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        found.extend(_functions(tree, _relative(path), prefix=""))
    return found


def _functions(node: ast.AST, path: str, *, prefix: str) -> list[Function]:
    found: list[Function] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            found.extend(_functions(child, path, prefix=f"{prefix}{child.name}."))
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (child.end_lineno or child.lineno) - child.lineno + 1
            found.append(Function(path, f"{prefix}{child.name}", child.lineno, length))
            found.extend(_functions(child, path, prefix=f"{prefix}{child.name}."))
    return found


def long_functions() -> list[Function]:
    return [f for f in functions() if f.length > MAX_FUNCTION_LINES]


def any_uses() -> Counter[str]:
    """Uses of `Any` per top-level package (a module directly under kubesched counts as its own)."""
    counts: Counter[str] = Counter()
    for path in _modules():
        tree = ast.parse(path.read_text())
        package = _relative(path).split("/")[0].removesuffix(".py")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Name) and node.id == "Any") or (
                isinstance(node, ast.Attribute) and node.attr == "Any"
            ):
                counts[package] += 1
    return counts


def main(argv: list[str]) -> int:
    counts = any_uses()
    total = sum(counts.values())
    if "--any" in argv:
        for package, n in counts.most_common():
            print(f"{package:<12} {n:>5}")
        print(f"{'total':<12} {total:>5}  (ceiling {ANY_CEILING})")
        return 0
    files = long_files()
    print(f"files over {MAX_FILE_LINES} lines: {len(files)}")
    for path, lines in files:
        print(f"  {path} {lines}")
    long = long_functions()
    print(f"functions over {MAX_FUNCTION_LINES} lines: {len(long)}")
    for f in sorted(long, key=lambda f: -f.length):
        print(f"  {f.key} {f.length} (line {f.line})")
    print(f"Any: {total} (ceiling {ANY_CEILING})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
