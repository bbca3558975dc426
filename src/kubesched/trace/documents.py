"""The SIG's design documents kubesched's labs and docs refer to: KEPs from kubernetes/enhancements
and the scheduling design proposals from kubernetes/design-proposals-archive, each by its id, its
title as the document gives it, and the section meant.

Like the source citations (`kubesched.trace.upstream`), every row is checked by a machine:
`documents.json`, shipped beside this module, holds per document the path found in its repository
at the pinned commit, the SHA-256 prefix of its title, and per section cited the heading's line and
the SHA-256 prefix of its text. `check(rows, digests)` finds a row whose title or section is not the document's;
`record(rows, roots)` reads the digests from checkouts of the two repositories and refutes any row
they do not bear out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TypedDict, cast

from kubesched.trace.digests import Problem, line_hash

DIGESTS = "documents.json"
# Each repository a row may come from, at the commit the digests were read at.
REPOSITORIES = {
    "enhancements": ("kubernetes/enhancements", "64765b4b02389318f2113119dd9e491479f978a0"),
    "design-proposals": ("kubernetes/design-proposals-archive", "acc25e14ca83dfda4f66d8cb1f1b491f26e78ffe"),
}
KEP_ID = re.compile(r"\bKEP-(\d+)\b")


@dataclass(frozen=True)
class Document:
    """One design document and the section of it meant: `id` is `KEP-624` or, for a design
    proposal, `design/pod-preemption`; `title` is the KEP's `title:` (or the proposal's first
    heading), `section` a heading of the document, word for word."""

    id: str
    title: str
    path: str  # inside its repository
    section: str

    @property
    def repository(self) -> str:
        return "enhancements" if self.id.startswith("KEP-") else "design-proposals"

    @property
    def url(self) -> str:
        """The section on GitHub, at the commit the row was checked at."""
        repo, commit = REPOSITORIES[self.repository]
        return f"https://github.com/{repo}/blob/{commit}/{self.path}#{anchor(self.section)}"

    @property
    def cite(self) -> str:
        """`KEP-4247 "Per-plugin callback ..." § Overview`, as the docs write it."""
        return f"{self.id} “{self.title}” § {self.section}"

    @property
    def key(self) -> str:
        return f"{self.id} § {self.section}"


def anchor(heading: str) -> str:
    """The fragment GitHub gives a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


def _kep(number: int, slug: str, title: str, section: str) -> Document:
    return Document(f"KEP-{number}", title, f"keps/sig-scheduling/{number}-{slug}/README.md", section)


def _design(name: str, title: str, section: str) -> Document:
    return Document(f"design/{name}", title, f"scheduling/{name}.md", section)


_FRAMEWORK = ("scheduling-framework", "Scheduling Framework")
_HINTS = ("queueinghint", "Per-plugin callback functions for efficient requeueing in the scheduling queue")
_PREEMPT = ("pod-preemption", "Pod Preemption in Kubernetes")
_SPREAD = ("pod-topology-spread", "Pod Topology Spread")
_PROFILES = ("multi-scheduling-profiles", "Multi Scheduling Profiles")
_STRATEGY = ("node-resource-score-strategy", "Preferred Fit Strategy")

DOCUMENTS: dict[str, Document] = {
    d.key: d
    for d in (
        _kep(624, *_FRAMEWORK, "Scheduling Cycle & Binding Cycle"),
        _kep(624, *_FRAMEWORK, "Extension points"),
        _kep(624, *_FRAMEWORK, "Filter"),
        _kep(624, *_FRAMEWORK, "Scoring"),
        _kep(624, *_FRAMEWORK, "Reserve"),
        _kep(624, *_FRAMEWORK, "Permit"),
        _kep(624, *_FRAMEWORK, "CycleState"),
        _kep(624, *_FRAMEWORK, "Concurrency"),
        _kep(624, *_FRAMEWORK, "Plugin Registration"),
        _kep(624, *_FRAMEWORK, "Configuring Plugins"),
        _kep(624, *_FRAMEWORK, "Custom Scheduler Plugins (out of tree)"),
        _kep(4247, *_HINTS, "Overview"),
        _kep(4247, *_HINTS, "When to skip/not skip backoff"),
        _kep(4247, *_HINTS, "How QueueingHint is executed in the scheduling queue"),
        _kep(4247, *_HINTS, "Pod rejected by one or more plugins"),
        _kep(4247, *_HINTS, "Track Pods being processed in the scheduling queue"),
        _kep(5142, "pop-backoffq-when-activeq-empty", "Pop pod from backoffQ when activeQ is empty", "Proposal"),
        _kep(3521, "pod-scheduling-readiness", "Pod Scheduling Readiness", "Implementation"),
        _kep(4832, "async-preemption", "Asynchronous Preemption", "Design Details"),
        _kep(1923, "prefer-nominated-node", "Prefer Nominated Node", "Implementation Details"),
        _kep(1451, *_PROFILES, "Kube-Scheduler implementation"),
        _kep(2458, *_STRATEGY, "Design Details"),
        _kep(895, *_SPREAD, "MaxSkew"),
        _kep(
            3094,
            "pod-topology-spread-considering-taints",
            "Take taints/tolerations into consideration when calculating PodTopologySpread skew",
            "Design Details",
        ),
        _kep(5598, "opportunistic-batching", "Opportunistic batching", "Batching mechanism"),
        _design(*_PREEMPT, "Preemption order"),
        _design(*_PREEMPT, "Starvation Problem"),
        _design(*_PREEMPT, "Supporting PodDisruptionBudget"),
        _design("multiple-schedulers", "Multi-Scheduler in Kubernetes", "Challenges in multiple schedulers"),
    )
}


class DocumentDigest(TypedDict):
    """A document's digest: its path in its repository, the hash of its title, and per section
    cited the heading's line (as a string) and the hash of its text."""

    path: str
    title: str
    sections: dict[str, str]


class Digests(TypedDict):
    """The digests as `documents.json` holds them (`record` makes them): the commit of each
    repository they were read at, and each document's digest by its id."""

    commits: dict[str, str]
    documents: dict[str, DocumentDigest]


def document(key: str) -> Document:
    """A row by its key (`KEP-624 § Filter`); KeyError names a key the table lacks."""
    return DOCUMENTS[key]


def load_digests(path: Path | None = None) -> Digests:
    text = path.read_text() if path is not None else resources.files("kubesched.trace").joinpath(DIGESTS).read_text()
    return cast(Digests, dict(json.loads(text)))  # the file is `record`'s digests, written by `dumps`


def check(rows: Iterable[Document], digests: Digests) -> list[Problem]:
    """Every row the digests do not bear out: a document not read, another path, a title or a
    section heading that is not the document's."""
    problems: list[Problem] = []
    for row in rows:
        read = digests.get("documents", {}).get(row.id)
        if read is None:
            problems.append(Problem(row.id, row.key, "the digests hold no such document"))
            continue
        if read["path"] != row.path:
            problems.append(Problem(row.id, row.key, f"the document is {read['path']}, not {row.path}"))
        if read["title"] != line_hash(row.title):
            problems.append(Problem(row.id, row.key, f"{row.title!r} is not the document's title"))
        if line_hash(row.section) not in read["sections"].values():
            problems.append(Problem(row.id, row.key, f"{row.section!r} is not a heading of the document"))
    for name, (_, commit) in REPOSITORIES.items():
        if digests.get("commits", {}).get(name) != commit:
            problems.append(Problem(name, "*", f"the digests are not of {name} at {commit}"))
    return problems


def _title(path: Path, text: list[str]) -> str | None:
    if path.name == "README.md":  # a KEP: the title in kep.yaml beside it
        for line in (path.parent / "kep.yaml").read_text().splitlines():
            if line.startswith("title:"):
                return line.partition(":")[2].strip().strip("\"'")
        return None
    return next((line[2:].strip() for line in text if line.startswith("# ")), None)


def _heading_line(text: list[str], section: str) -> int | None:
    """The line of the heading `section` (any level), if the document has it."""
    return next(
        (n for n, line in enumerate(text, start=1) if line.startswith("#") and line.lstrip("#").strip() == section),
        None,
    )


def record(rows: Iterable[Document], roots: Mapping[str, Path]) -> tuple[Digests, list[Problem]]:
    """The digests of `rows` read from checkouts of the repositories (`roots` by the names of
    `REPOSITORIES`), and the rows those checkouts refute."""
    documents: dict[str, DocumentDigest] = {}
    problems: list[Problem] = []
    for row in rows:
        root = roots.get(row.repository)
        path = root / row.path if root is not None else None
        if path is None or not path.is_file():
            problems.append(Problem(row.id, row.key, f"{row.path} is not in {root}"))
            continue
        text = path.read_text().splitlines()
        title = _title(path, text)
        entry = documents.setdefault(row.id, {"path": row.path, "title": line_hash(title or ""), "sections": {}})
        if title != row.title:
            problems.append(Problem(row.id, row.key, f"the document's title is {title!r}"))
        at = _heading_line(text, row.section)
        if at is None:
            problems.append(Problem(row.id, row.key, f"{row.section!r} is not a heading of the document"))
        else:
            entry["sections"][str(at)] = line_hash(row.section)
    digests: Digests = {"commits": {name: commit for name, (_, commit) in REPOSITORIES.items()}, "documents": documents}
    return digests, problems


def dumps(digests: Mapping[str, object]) -> str:
    return json.dumps(digests, indent=1, sort_keys=True) + "\n"


def unknown_keps(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """Each `KEP-N` written in `paths` that no row of the table is."""
    known = {d.id for d in DOCUMENTS.values()}
    return [(p, f"KEP-{n}") for p in paths for n in KEP_ID.findall(p.read_text()) if f"KEP-{n}" not in known]


def render_markdown(rows: Iterable[Document] = ()) -> str:
    """The table as docs/upstream-map.md shows it."""
    lines = ["| document | section | title |", "|---|---|---|"]
    for d in rows or DOCUMENTS.values():
        lines.append(f"| `{d.id}` | [{d.section}]({d.url}) | {d.title} |")
    return "\n".join(lines) + "\n"
