"""The `kubesched` commands: each one's name, one line of help, and where its parser is defined.

A command's module holds its parser and what it does: `add_parser(sub, name, help)` adds the
subparser (with `set_defaults(run=...)`, the function `(console, args) -> exit status` that runs
it). Only the module of the command given is imported, so `kubesched --version`, `--help` and any
one command load nothing of the others.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # what add_parser adds to
AddParser = Callable[[Subparsers, str, str], None]


@dataclass(frozen=True)
class Command:
    name: str
    where: str  # "module:function" of its add_parser
    help: str

    def add_parser(self) -> AddParser:
        module, _, function = self.where.partition(":")
        add: AddParser = getattr(importlib.import_module(module), function)
        return add


COMMANDS: tuple[Command, ...] = (
    Command(
        "minimal", "kubesched.cli.minimal:add_parser", "run the from-scratch scheduler on fake nodes (virtual time)"
    ),
    Command("cluster", "kubesched.cli.cluster_up:add_parser", "the embedded cluster"),
    Command("queue", "kubesched.cli.queue:add_parser", "the pending pods in kubesched's scheduling queue"),
    Command("golden", "kubesched.cli.golden:add_parser", "run recorded kube-scheduler cases and compare node for node"),
    Command(
        "bench", "kubesched.cli.bench:add_parser", "upstream's scheduler_perf test cases on the memory cluster, pods/s"
    ),
    Command(
        "run", "kubesched.cli.run:add_parser", "schedule for a cluster (kubeconfig or in-cluster), with leader election"
    ),
    Command(
        "controllers",
        "kubesched.cli.run:add_controllers_parser",
        "run the controllers installed packages declare, against a cluster",
    ),
    Command(
        "explain", "kubesched.cli.explain:add_parser", "a pod's scheduling attempts: verdicts, scores, why this node"
    ),
    Command(
        "capacity",
        "kubesched.cli.capacity:add_parser",
        "how many instances of a pod a cluster can still schedule (cluster-capacity's question)",
    ),
    Command(
        "fit",
        "kubesched.cli.fit:add_parser",
        "what would make an unschedulable pod fit: changes searched, each verified by scheduling again",
    ),
    Command("snapshot", "kubesched.cli.snapshot:add_parser", "save a cluster's scheduling state to a file (read-only)"),
    Command(
        "scenario",
        "kubesched.cli.scenario:add_parser",
        "scenarios with assertions, run on virtual time (exit 1 on a failure)",
    ),
    Command(
        "sweep",
        "kubesched.cli.sweep:add_parser",
        "many simulations at once: a sweep file's points on every core or on Ray, kept, reported",
    ),
    Command(
        "record",
        "kubesched.cli.record:add_record_parser",
        "record a cluster's changes (nodes, pods, what placement depends on) as JSON Lines, read-only",
    ),
    Command(
        "replay",
        "kubesched.cli.record:add_replay_parser",
        "replay a recording on virtual time under scheduler configurations and compare the placements",
    ),
    Command(
        "capstone",
        "kubesched.cli.capstone:add_parser",
        "a measurement and a story: an out-of-tree plugin measured, a preemption told",
    ),
    Command(
        "citations",
        "kubesched.cli.citations:add_parser",
        "check every upstream file:line kubesched cites against kubernetes v1.36.2",
    ),
    Command(
        "compare",
        "kubesched.cli.compare:add_parser",
        "one workload under two or more scheduler configurations, side by side",
    ),
    Command(
        "plugins",
        "kubesched.cli.plugins:add_parser",
        "the registered plugins, the points they fill and the profiles using them",
    ),
    Command("drill", "kubesched.cli.drill:add_parser", "the curriculum's chaos drills, narrated (virtual time)"),
    Command(
        "ui",
        "kubesched.cli.ui:add_parser",
        "the web UI over a recorded run (a --trace file), a compare report or a sweep's results",
    ),
    Command(
        "lab",
        "kubesched.cli.lab:add_parser",
        "the curriculum's 37 labs: list them, run one narrated, or check their claims",
    ),
    Command("demo", "kubesched.cli.minimal:add_demo_parser", "watch the from-scratch scheduler overcommit a node"),
)

BY_NAME = {c.name: c for c in COMMANDS}
