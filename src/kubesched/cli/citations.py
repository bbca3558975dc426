"""`kubesched citations`: every upstream site kubesched cites, checked against kube-scheduler
v1.36.2 (the digests shipped with kubesched, or a source tree given with --source)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from kubesched.cli import options
from kubesched.trace.digests import check, dumps, load_digests, reread
from kubesched.trace.upstream import SITES, TAG


def add_parser(sub: Any) -> None:
    cit = sub.add_parser("citations", help=f"check every upstream file:line kubesched cites against {TAG}")
    cit.add_argument(
        "--source",
        metavar="DIR",
        help=f"a kubernetes checkout at {TAG}, or a vendor/ directory holding k8s.io/kubernetes {TAG} "
        "and the staging modules: check the rows and the shipped digests against it",
    )
    cit.add_argument("--write", metavar="FILE", help="with --source: write the digests read from it to FILE")
    options.add_output_option(cit, "the rows and what was found wrong")


def citations_command(console: Console, args: argparse.Namespace) -> int:
    rows = list(SITES.values())
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
    if args.output == "json":
        json.dump(
            {
                "tag": TAG,
                "against": against,
                "rows": [{"symbol": s.symbol, "cite": s.cite, "expect": s.expect} for s in rows],
                "problems": [str(p) for p in problems],
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
    return 1 if problems else 0
