"""Record a live `cluster up` (its scheduler placing pods) over more than 5,000 pod changes, then
replay the recording: under the same configuration every pod lands where the live scheduler put
it; under MostAllocated the differences are reported."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time

import aiohttp

from bench.durable import PODS, start_cluster_up
from kubesched.cli.main import main
from kubesched.whatif.record import load

DEFAULT = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
MOST_ALLOCATED = (
    DEFAULT
    + """profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""
)


def pod(name: str, cpu: str) -> dict[str, object]:
    container = {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}}


async def workload(url: str) -> None:
    """800 pods created one after another, 350 of them deleted, 800 more: each phase waited for,
    so that no deletion races a decision."""
    rng = random.Random(7)
    async with aiohttp.ClientSession(url) as client:

        async def settled(count: int) -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                async with client.get(PODS) as response:
                    items = (await response.json())["items"]
                if len(items) == count and all(p["spec"].get("nodeName") for p in items):
                    return
                await asyncio.sleep(0.2)
            raise AssertionError(f"the live cluster did not settle at {count} bound pods")

        async def create(names: range) -> None:
            for i in names:
                body = pod(f"p-{i}", rng.choice(["50m", "100m", "150m", "200m"]))
                async with client.post(PODS, json=body) as response:
                    assert response.status == 201, await response.text()

        await create(range(800))
        await settled(800)
        for i in rng.sample(range(800), 350):
            async with client.delete(f"{PODS}/p-{i}") as response:
                assert response.status == 202  # graceful: the kubelet confirms
        await settled(450)
        await create(range(800, 1600))
        await settled(1250)


def test_a_recording_replayed_under_its_config_places_every_pod_as_the_live_scheduler(tmp_path, capsys):
    up, url, _ = start_cluster_up(tmp_path / "kubeconfig", "--nodes", "50", "--scheduler", "--scheduler-port", "0")
    recording = tmp_path / "live.jsonl"
    record = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kubesched",
            "record",
            "--kubeconfig",
            str(tmp_path / "kubeconfig"),
            "-o",
            str(recording),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        while not recording.exists() or recording.stat().st_size == 0:  # listed, now watching
            assert time.monotonic() < deadline and record.poll() is None
            time.sleep(0.1)
        time.sleep(0.5)
        asyncio.run(workload(url))
        time.sleep(1.5)  # the last kubelet updates
    finally:
        record.send_signal(signal.SIGINT)
        _, said = record.communicate(timeout=20)
        up.send_signal(signal.SIGINT)
        up.communicate(timeout=20)
    assert record.returncode == 0, said
    loaded = load(recording)
    pod_changes = [c for c in loaded.changes if c.object["kind"] == "Pod"]
    assert len(pod_changes) >= 5000
    assert said.strip() == f"recorded {len(loaded.changes)} changes to {recording}"

    same, most = tmp_path / "default.yaml", tmp_path / "most.yaml"
    same.write_text(DEFAULT)
    most.write_text(MOST_ALLOCATED)
    assert main(["replay", str(recording), "--config", str(same), "--config", str(most), "--output", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    runs = body["runs"]
    assert runs["recorded"]["placed"] == runs[str(same)]["placed"] == runs[str(most)]["placed"] == 1600
    assert runs[str(same)]["placements"] == runs["recorded"]["placements"]
    moved = [d for d in body["differences"] if d["nodes"]["recorded"] != d["nodes"][str(most)]]
    assert len(moved) > 100
    assert all(d["nodes"]["recorded"] == d["nodes"][str(same)] for d in body["differences"])

    assert main(["replay", str(recording), "--config", str(same), "--config", str(most)]) == 0
    table = capsys.readouterr().out
    assert f"{len(body['differences'])} pods placed differently:" in table
    first = body["differences"][0]
    assert f"  {first['pod']}  recorded: {first['nodes']['recorded']}, {same}: " in table
