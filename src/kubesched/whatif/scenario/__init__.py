"""Scenarios with assertions: a cluster, a scheduler and steps at virtual times, checked (the idea
of kube-scheduler-simulator's scenario proposal, working). `spec` reads a file, `conditions` are
what its waits and assertions ask, `runner` runs it, `junit` reports runs for CI."""

from kubesched.whatif.scenario.fields import ScenarioError
from kubesched.whatif.scenario.runner import ScenarioRun, StepResult, run, scheduler_setup
from kubesched.whatif.scenario.spec import Scenario, Step, load

__all__ = ["Scenario", "ScenarioError", "ScenarioRun", "Step", "StepResult", "load", "run", "scheduler_setup"]
