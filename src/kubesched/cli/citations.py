"""`kubesched citations`: every upstream site kubesched cites, checked against kube-scheduler
v1.36.2 (the digests shipped with kubesched, or a source tree given with --source), and every
design document (KEP or design proposal) it refers to, checked against the digests of the
documents (or checkouts given with --enhancements and --design-proposals)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from kubesched.cli.commands import Subparsers
from kubesched.console import options
from kubesched.trace import documents
from kubesched.trace.digests import Problem, check, dumps, load_digests, reread
from kubesched.trace.upstream import SITES, TAG


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    cit = sub.add_parser(name, help=help)
    cit.set_defaults(run=citations_command)
    cit.add_argument(
        "--source",
        metavar="DIR",
        help=f"a kubernetes checkout at {TAG}, or a vendor/ directory holding k8s.io/kubernetes {TAG} "
        "and the staging modules: check the rows and the shipped digests against it",
    )
    cit.add_argument("--write", metavar="FILE", help="with --source: write the digests read from it to FILE")
    for name, (repo, commit) in documents.REPOSITORIES.items():
        cit.add_argument(
            f"--{name}",
            metavar="DIR",
            help=f"a checkout of {repo} at {commit[:12]}: check the design documents' rows against it",
        )
    cit.add_argument(
        "--write-documents",
        metavar="FILE",
        help="with --enhancements and --design-proposals: write the documents' digests read from them to FILE",
    )
    options.add_output_option(cit, "the rows and what was found wrong")


def citations_command(console: Console, args: argparse.Namespace) -> int:
    rows = list(SITES.values())
    docs = list(documents.DOCUMENTS.values())
    digests = load_digests()
    against = f"digests of {digests.get('read_from', '?')}"
    if args.write and not args.source:
        options.print_error(console, "--write: needs --source DIR to read the digests from")
        return 2
    if args.source:
        root = Path(args.source)
        if not root.is_dir():
            options.print_error(console, f"--source: {root} is not a directory")
            return 2
        fresh, problems = reread(rows, digests, root)
        against = f"the source in {root}"
        if args.write and not problems:
            Path(args.write).write_text(dumps(fresh))
    else:
        problems = check(rows, digests)
    read = _documents(console, args)
    if read is None:
        return 2
    doc_problems, doc_against = read
    if args.output == "json":
        json.dump(
            {
                "tag": TAG,
                "against": against,
                "rows": [{"symbol": s.symbol, "cite": s.cite, "expect": s.expect} for s in rows],
                "problems": [str(p) for p in problems],
                "documents": [{"id": d.id, "title": d.title, "section": d.section, "url": d.url} for d in docs],
                "documentProblems": [str(p) for p in doc_problems],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    else:
        for problem in problems:
            console.print(f"WRONG {problem}", markup=False, highlight=False, soft_wrap=True)
        held = len(rows) - len({p.symbol for p in problems if p.symbol != "*"})
        console.print(
            f"{held} of {len(rows)} upstream citations hold at kube-scheduler {TAG} (checked against {against})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        for problem in doc_problems:
            console.print(f"WRONG {problem}", markup=False, highlight=False, soft_wrap=True)
        held = len(docs) - len({p.symbol for p in doc_problems if p.symbol != "*"})
        console.print(
            f"{held} of {len(docs)} design document references hold (checked against {doc_against})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return 1 if problems or doc_problems else 0


def _documents(console: Console, args: argparse.Namespace) -> tuple[list[Problem], str] | None:
    """What is wrong with the design documents' rows, and what they were checked against; None
    (the error printed) for a checkout option that names no directory."""
    docs = list(documents.DOCUMENTS.values())
    roots = {n: getattr(args, n.replace("-", "_")) for n in documents.REPOSITORIES}
    given = {n: Path(r) for n, r in roots.items() if r}
    for name, root in given.items():
        if not root.is_dir():
            options.print_error(console, f"--{name}: {root} is not a directory")
            return None
    if args.write_documents and len(given) != len(roots):
        options.print_error(console, "--write-documents: needs --enhancements DIR and --design-proposals DIR")
        return None
    if not given:
        return documents.check(docs, documents.load_digests()), "their digests"
    fresh, problems = documents.record([d for d in docs if d.repository in given], given)
    if args.write_documents and not problems:
        Path(args.write_documents).write_text(documents.dumps(fresh))
    return problems, "the checkouts in " + ", ".join(str(r) for r in given.values())
