"""`kubesched lab list|run|check`: the lab book, one lab performed and narrated, or only the checks."""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kubesched.cli.commands import Subparsers
from kubesched.cli.ui import add_ui_options
from kubesched.cluster import ApiError
from kubesched.console import options
from kubesched.console.serving import serve as serve_ui
from kubesched.console.tables import print_table
from kubesched.lab.book import BOOK, LABS, Lab
from kubesched.lab.harness import recording
from kubesched.lab.result import LabResult
from kubesched.ui import Recording

ANSWERED = "5.4.2"  # the lab that takes an answer file
SKIPPED = 3  # `lab check --all`'s exit status when nothing failed but some labs could not run here
ANSWER_HELP = f"lab {ANSWERED}: your queue state machine (YAML) to compare with the queue's"
KUBECONFIG_HELP = "the live cluster of the labs that need one (kubesched cluster up writes a kubeconfig)"


def add_parser(sub: Subparsers, name: str, help: str) -> None:
    lab = sub.add_parser(name, help=help)
    lab.set_defaults(run=lab_command)
    verbs = lab.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="every lab with its id, title, module and what it needs")
    options.add_output_option(listing, "the lab book")
    run = verbs.add_parser("run", help="perform a lab on the memory cluster and tell it, ending with its check")
    run.add_argument("id", help="a lab's id, as `lab list` shows it (5.1.6)")
    run.add_argument("--seed", type=int, default=1, help="the store's and the scheduler's seed (default 1)")
    run.add_argument(
        "--output", choices=("table", "json", "md"), default="table", help="table (default), json or md: the lab told"
    )
    run.add_argument("--answer", metavar="FILE", help=ANSWER_HELP)
    run.add_argument("--kubeconfig", metavar="K", help=KUBECONFIG_HELP)
    add_ui_options(run, "the lab's recorded run (its last cluster)")
    check = verbs.add_parser("check", help="run only the checks; exit 1 when a claim does not hold")
    check.add_argument("id", nargs="?", help="a lab's id")
    check.add_argument("--all", action="store_true", help="every lab kubesched runs")
    check.add_argument("--seed", type=int, default=1, help="the store's and the scheduler's seed (default 1)")
    check.add_argument("--answer", metavar="FILE", help=ANSWER_HELP)
    check.add_argument("--kubeconfig", metavar="K", help=KUBECONFIG_HELP)
    check.add_argument(
        "--require-all",
        action="store_true",
        help="with --all: a lab that cannot run here (a live one without --kubeconfig) fails instead of being skipped",
    )


def lab_command(console: Console, args: argparse.Namespace) -> int:
    if args.verb == "list":
        return _list(console, as_json=args.output == "json")
    if args.verb == "check" and args.all:
        if args.id:
            raise options.UsageError("lab check: give a lab's id or --all, not both")
        if args.answer:
            raise options.UsageError(f"--answer: only lab {ANSWERED} takes an answer file, not --all")
        labs = [lab for lab in BOOK if lab.runnable]
    else:
        if not args.id:
            raise options.UsageError("lab check: give a lab's id or --all")
        labs = [_runnable(args.id)]
        if args.answer and args.id != ANSWERED:
            raise options.UsageError(f"--answer: only lab {ANSWERED} takes an answer file, not {args.id}")
        if args.kubeconfig and not labs[0].takes_cluster:
            raise options.UsageError(f"--kubeconfig: lab {args.id} runs on the memory cluster, not against one")
    if args.verb == "run":
        if not args.ui:
            return _run(
                console, labs[0], seed=args.seed, output=args.output, answer=args.answer, kubeconfig=args.kubeconfig
            )
        if labs[0].live or args.kubeconfig:
            raise options.UsageError(f"--ui: lab {args.id} runs against a live cluster: open its own UI instead")
        bind = options.host_port("--ui-bind", args.ui_bind)
        with recording() as clusters:
            code = _run(console, labs[0], seed=args.seed, output=args.output, answer=args.answer, kubeconfig=None)
        if not clusters or not clusters[-1].records:
            raise options.UsageError(f"--ui: lab {args.id} runs no cluster to replay")
        if len(clusters) > 1:
            console.print(f"The lab ran {len(clusters)} clusters; the UI replays the last one.")
        serve_ui(console, bind, recording=Recording(clusters[-1].records, name=f"lab {args.id}"))
        return code
    if args.require_all and not args.all:
        raise options.UsageError("--require-all: only with --all")
    return _check(console, labs, args)


def _check(console: Console, labs: list[Lab], args: argparse.Namespace) -> int:
    """Each lab's check, a line each, then `N passed, M failed, K skipped (why)`. Exit status: 0
    when every lab ran and passed, 1 when one failed (or, with --require-all, was skipped),
    SKIPPED when none failed but some could not run here."""
    passed: list[Lab] = []
    failed: list[Lab] = []
    skipped: list[Lab] = []
    for lab in labs:
        if lab.live and not args.kubeconfig:
            if not args.all:
                raise options.UsageError(_needs_cluster(lab))
            skipped.append(lab)
            verdict = "[red]FAIL[/red]" if args.require_all else "[yellow]SKIP[/yellow]"
            console.print(
                f"{verdict} {lab.id} {escape(lab.title)}: {escape(_needs_cluster(lab))}",
                highlight=False,
                soft_wrap=True,
            )
            continue
        result = _perform(lab, seed=args.seed, answer=args.answer, kubeconfig=args.kubeconfig)
        held = result.check is not None and result.check.passed
        (passed if held else failed).append(lab)
        mark = "[green]PASS[/green]" if held else "[red]FAIL[/red]"
        console.print(f"{mark} {lab.id} {escape(lab.title)}", highlight=False)
    console.print(_summary(passed, failed, skipped, required=args.require_all), highlight=False, soft_wrap=True)
    if failed or (skipped and args.require_all):
        return 1
    return SKIPPED if skipped else 0


def _summary(passed: list[Lab], failed: list[Lab], skipped: list[Lab], *, required: bool) -> str:
    text = f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped"
    if skipped:
        ids = ", ".join(lab.id for lab in skipped)
        counted = "; --require-all counts them as failed" if required else ""
        text += f" ({ids}: they run against a live cluster; give --kubeconfig{counted})"
    if failed:
        text += f"; failed: {', '.join(lab.id for lab in failed)}"
    return text


def _runnable(lab_id: str) -> Lab:
    lab = LABS.get(lab_id)
    if lab is None:
        raise options.UsageError(f"lab: no lab {lab_id!r} (see `kubesched lab list`)")
    if not lab.runnable:
        where = f"; run it with `{lab.command}`" if lab.command else ""
        raise options.UsageError(f"lab {lab_id}: not runnable as a lab yet{where}")
    return lab


def _needs_cluster(lab: Lab) -> str:
    return f"lab {lab.id} runs against {lab.needs}: give --kubeconfig"


def _perform(lab: Lab, *, seed: int, answer: str | None = None, kubeconfig: str | None = None) -> LabResult:
    assert lab.run is not None
    given: dict[str, object] = {"seed": seed}
    if answer:
        given["answer"] = answer
    if not lab.takes_cluster or (not lab.live and not kubeconfig):
        return lab.run(**given)
    if not kubeconfig:
        raise options.UsageError(_needs_cluster(lab))
    try:
        return lab.run(**given, kubeconfig=kubeconfig)
    except ApiError as e:  # the cluster refused or could not be reached
        raise options.UsageError(f"lab {lab.id}: {e}") from None


def _list(console: Console, *, as_json: bool) -> int:
    if as_json:
        json.dump([lab.to_json() for lab in BOOK], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    table = Table("id", "title", "module", "needs", "how")
    for lab in BOOK:
        row = lab.to_json()
        table.add_row(lab.id, escape(lab.title), row["module"], lab.needs, row["command"] or "not runnable yet")
    print_table(console, table)
    return 0


def _run(console: Console, lab: Lab, *, seed: int, output: str, answer: str | None, kubeconfig: str | None) -> int:
    result = _perform(lab, seed=seed, answer=answer, kubeconfig=kubeconfig)
    if output == "json":
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif output == "md":
        sys.stdout.write(result.to_markdown())
    else:
        console.print(f"[bold]{lab.id} — {escape(lab.title)}[/bold]")
        for step in result.steps:
            sites = " · ".join(x for x in (step.site, *step.upstream) if x)
            console.print(
                f"[dim]t+{step.time:g}s[/dim] {escape(step.text)}  [dim]{escape(sites)}[/dim]", soft_wrap=True
            )
        if result.check is not None:
            mark = "[green]PASS[/green]" if result.check.passed else "[red]FAIL[/red]"
            console.print(f"{mark} {escape(result.check.claim)}")
            for key, value in result.check.evidence.items():
                console.print(f"  {key}: {escape(json.dumps(value, sort_keys=True))}", soft_wrap=True, highlight=False)
    return 0 if result.check is not None and result.check.passed else 1
