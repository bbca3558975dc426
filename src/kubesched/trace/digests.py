"""Checking the citation table against kube-scheduler v1.36.2's source.

Every upstream `file:line` kubesched prints or documents is a row of `SITES`
(`kubesched.trace.upstream`): a file, a line span and a short excerpt expected on one line of that
span. Beside this module, `upstream-v1.36.2.json` holds digests of the source at that tag, read from
a tree that vendors `k8s.io/kubernetes v1.36.2` and the staging modules at v0.36.2 (the
kubernetes/autoscaler commit named in the file): per cited file its SHA-256 and line count, per
cited span the SHA-256 of each of its lines (whitespace trimmed), and per row the line that holds
its excerpt. No upstream source is kept but those anchor lines.

`check(sites, digests)` finds every way a row can be wrong without the source at hand: a span the
digests do not hold or hold with another length (a span shifted, a line removed), an excerpt
missing from its anchor line, an anchor outside its span or whose hash is not the span's line.
`check_source(sites, digests, root)` reads a real tree (a kubernetes checkout at v1.36.2, or a
`vendor/` directory holding `k8s.io/kubernetes` and the staging modules) and finds any row or
digest that disagrees with it. `record(sites, root)` makes the digests from such a tree.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TypedDict, cast

from kubesched.trace.upstream import MODULES, SITES, TAG, UpstreamSite

DIGESTS = f"upstream-{TAG}.json"
SOURCE = "github.com/kubernetes/autoscaler@3429a57149fa873cfc64bcfc66e3d534aedbecf9 cluster-autoscaler/vendor/"
# Where each prefix's files are, in a kubernetes checkout and in a vendor/ directory.
ROOTS: dict[str, tuple[str, ...]] = {
    "S/": ("pkg/scheduler/", "k8s.io/kubernetes/pkg/scheduler/"),
    "KS/": ("staging/src/k8s.io/kube-scheduler/", "k8s.io/kube-scheduler/"),
    "CG/": ("staging/src/k8s.io/client-go/", "k8s.io/client-go/"),
}
# Directories whose file lists are kept too (their Go files, tests aside), for the labs that ask
# which files upstream has.
TREES = ("S/backend/queue/",)
# An upstream citation as kubesched writes it anywhere: a prefixed path or a bare
# file name, a colon, a line or a span.
CITATION = re.compile(r"(?:\b(?:S|KS|CG)/)?[A-Za-z0-9_./-]*\.go:\d+(?:-\d+)?")


class FileDigest(TypedDict):
    """A cited file's digest: its path in the tree, its SHA-256 and line count, and per cited span
    (`first-last`, or one line) the hash of each of its lines."""

    path: str
    sha256: str
    lines: int
    spans: dict[str, list[str]]


class Anchor(TypedDict):
    """Where a row's excerpt was read: its citation, the line that holds it and that line's text."""

    cite: str
    line: int
    text: str


class Digests(TypedDict):
    """The digests as `upstream-v1.36.2.json` holds them (`record` makes them)."""

    tag: str
    modules: dict[str, str]
    read_from: str
    files: dict[str, FileDigest]
    anchors: dict[str, Anchor]
    trees: dict[str, list[str]]


def line_hash(line: str) -> str:
    """A line's digest: the first 16 hex digits of the SHA-256 of its trimmed text."""
    return hashlib.sha256(line.strip().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Problem:
    """One way a row (or the digests) disagrees with upstream's source."""

    cite: str
    symbol: str
    what: str

    def __str__(self) -> str:
        return f"{self.cite} ({self.symbol}): {self.what}"


def load_digests(path: Path | None = None) -> Digests:
    """The digests shipped beside this module (or those at `path`)."""
    text = path.read_text() if path is not None else resources.files("kubesched.trace").joinpath(DIGESTS).read_text()
    return cast(Digests, dict(json.loads(text)))  # the file is `record`'s digests, written by `dumps`


def dumps(digests: Mapping[str, object]) -> str:
    """The digests as the shipped file holds them: sorted, a span's hashes on one line."""
    text = json.dumps(digests, indent=1, sort_keys=True)
    return re.sub(r"\[\n\s*(\"[0-9a-f]{16}\"(?:,\n\s*\"[0-9a-f]{16}\")*)\n\s*\]", _one_line, text) + "\n"


def _one_line(match: re.Match[str]) -> str:
    return "[" + ", ".join(h.strip() for h in match.group(1).split(",")) + "]"


def check(sites: Iterable[UpstreamSite], digests: Digests) -> list[Problem]:
    """Every disagreement between the rows and the digests (empty: every row holds)."""
    problems: list[Problem] = []
    files = digests.get("files", {})
    anchors = digests.get("anchors", {})
    if digests.get("tag") != TAG:
        problems.append(Problem("*", "*", f"digests are of {digests.get('tag')}, the table cites {TAG}"))
    for site in sites:

        def wrong(what: str, site: UpstreamSite = site) -> None:
            problems.append(Problem(site.cite, site.symbol, what))

        first, last = site.span
        entry = files.get(site.file)
        if entry is None:
            wrong(f"no digest of {site.file} at {TAG}")
            continue
        if not 1 <= first <= last <= entry["lines"]:
            wrong(f"lines {site.lines} are outside the file's {entry['lines']} lines")
            continue
        hashes = entry["spans"].get(site.lines)
        if hashes is None:
            wrong(f"no digest of lines {site.lines}: the span moved since it was read")
            continue
        if len(hashes) != last - first + 1:
            wrong(f"the digest holds {len(hashes)} lines for a span of {last - first + 1}")
            continue
        anchor = anchors.get(site.symbol)
        if anchor is None:
            wrong("no anchor line read for this row")
            continue
        if anchor.get("cite") != site.cite:
            wrong(f"its excerpt was read at {anchor.get('cite')}")
            continue
        line, text = anchor["line"], anchor["text"]
        if site.expect not in text:
            wrong(f"{site.expect!r} is not on line {line} ({text.strip()!r})")
        elif not first <= line <= last:
            wrong(f"the excerpt is on line {line}, outside the span")
        elif hashes[line - first] != line_hash(text):
            wrong(f"line {line} of the span is not {text.strip()!r}")
    return problems


def _locate(root: Path, short: str, *, directory: bool = False) -> Path | None:
    """Where a file (or a directory) named with a facts-document prefix is under `root`."""
    for prefix, places in ROOTS.items():
        if short.startswith(prefix):
            for place in places:
                path = root / place / short[len(prefix) :]
                if path.is_dir() if directory else path.is_file():
                    return path
    return None


def _lines(path: Path) -> list[str]:
    return path.read_text().split("\n")


def _anchor(site: UpstreamSite, lines: list[str]) -> int | None:
    first, last = site.span
    return next((n for n in range(first, min(last, len(lines)) + 1) if site.expect in lines[n - 1]), None)


def record(sites: Iterable[UpstreamSite], root: Path) -> tuple[Digests, list[Problem]]:
    """The digests of `sites` read from the tree at `root`, and the rows that tree refutes (a
    file missing, a span past its end, an excerpt on no line of its span)."""
    files: dict[str, FileDigest] = {}
    anchors: dict[str, Anchor] = {}
    problems: list[Problem] = []
    for site in sites:
        path = _locate(root, site.file)
        if path is None:
            problems.append(Problem(site.cite, site.symbol, f"{site.path} is not in {root}"))
            continue
        lines = _lines(path)
        first, last = site.span
        if last > len(lines):
            problems.append(Problem(site.cite, site.symbol, f"the file has {len(lines)} lines"))
            continue
        entry = files.setdefault(
            site.file,
            {
                "path": site.path,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "lines": len(lines),
                "spans": {},
            },
        )
        entry["spans"][site.lines] = [line_hash(x) for x in lines[first - 1 : last]]
        at = _anchor(site, lines)
        if at is None:
            problems.append(Problem(site.cite, site.symbol, f"{site.expect!r} is on no line of the span"))
            continue
        anchors[site.symbol] = {"cite": site.cite, "line": at, "text": lines[at - 1].strip()}
    trees: dict[str, list[str]] = {}
    for tree in TREES:
        where = _locate(root, tree, directory=True)
        if where is None:
            continue
        trees[tree] = sorted(p.name for p in where.glob("*.go") if not p.name.endswith("_test.go"))
    digests: Digests = {
        "tag": TAG,
        "modules": MODULES,
        "read_from": SOURCE,
        "files": files,
        "anchors": anchors,
        "trees": trees,
    }
    return digests, problems


def upstream_files(tree: str, digests: Digests | None = None) -> list[str]:
    """The Go files (tests aside) of an upstream directory at v1.36.2, as the digests list them
    (`S/backend/queue/` → `active_queue.go`, ...); KeyError for a directory they do not list."""
    return list((digests if digests is not None else load_digests())["trees"][tree])


def check_source(sites: Iterable[UpstreamSite], digests: Digests, root: Path) -> list[Problem]:
    """Every row the tree at `root` refutes, and every digest that is not of that tree."""
    return reread(sites, digests, root)[1]


def reread(sites: Iterable[UpstreamSite], digests: Digests, root: Path) -> tuple[Digests, list[Problem]]:
    """The digests read afresh from the tree at `root`, and what `check_source` finds wrong."""
    rows = list(sites)
    fresh, problems = record(rows, root)
    for short, entry in digests.get("files", {}).items():
        now = fresh["files"].get(short)
        if now is None:
            continue
        if now["sha256"] != entry["sha256"]:
            problems.append(
                Problem(short, "*", f"the tree's {entry['path']} is not the one the digests were read from")
            )
        for lines, hashes in entry["spans"].items():
            if now["spans"].get(lines, hashes) != hashes:
                problems.append(
                    Problem(f"{short}:{lines}", "*", "these lines differ from those the digests were read from")
                )
    for tree, names in digests.get("trees", {}).items():
        if tree not in fresh["trees"]:
            problems.append(Problem(tree, "*", f"the directory is not in {root}"))
        elif fresh["trees"][tree] != names:
            problems.append(Problem(tree, "*", f"the tree holds {fresh['trees'][tree]}, the digests list {names}"))
    problems += check(rows, fresh)
    return fresh, problems


def citations_in(text: str) -> list[str]:
    """The upstream `file:line` citations written in `text`."""
    return CITATION.findall(text)


def uncited(paths: Iterable[Path], sites: Iterable[UpstreamSite] = ()) -> list[tuple[Path, str]]:
    """Each upstream `file:line` written in `paths` that is not a row of the table."""
    known = {s.cite for s in (sites or SITES.values())}
    return [(path, c) for path in paths for c in citations_in(path.read_text()) if c not in known]


def render_markdown(sites: Iterable[UpstreamSite] = ()) -> str:
    """The table as docs/upstream-map.md shows it."""
    rows = ["| what | where upstream (v1.36.2) | excerpt checked there | where in kubesched |", "|---|---|---|---|"]
    for s in sites or SITES.values():
        excerpt = s.expect.replace("|", "\\|")
        rows.append(f"| `{s.symbol}` | `{s.cite}` | `{excerpt}` | {s.ours} |")
    return "\n".join(rows) + "\n"
