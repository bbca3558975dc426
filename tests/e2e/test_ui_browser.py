"""The UI in a real headless Chromium (Debian's, driven by selenium through its chromedriver),
against `cluster up --scheduler`: the cluster page fills and follows a pod created through the API
without a reload, a pod page shows the numbers `kubesched explain` prints, and the queue page shows
an unschedulable pod with what will wake it; and `kubesched ui` replaying drill c2's trace shows the
victim leaving and the preemptor arriving at their recorded moments; a sweep's point opened from
its page is replayed on the cluster page. Each page's screenshot is written beside the test's files."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from lightkube.resources.core_v1 import Pod
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

from builders import compare_report, served, sweep_document, sweep_file
from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cli.main import main
from kubesched.sim import KubeletConfig
from kubesched.ui import Recording, load_comparison, mount_comparison, mount_replay, mount_sweep, serve_pages
from kubesched.workloads.templates import make_pod_from

WAIT = 15.0  # seconds a page may take to show what it is waited for


@pytest.fixture(scope="module")
def ui_cluster() -> Iterator[ClusterThread]:
    spec = ClusterSpec(
        nodes=3,
        port=0,
        scheduler=True,
        scheduler_port=0,
        kubelet=KubeletConfig(start_seconds=0.2, stop_seconds=5.0),  # deleted pods stay Terminating a while
        ui_actions=True,
    )
    with ClusterThread(spec) as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail("Chromium and chromedriver are not installed: run .ci/run (it installs Debian's)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(flag)
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def create_pod(cluster: ClusterThread, name: str, cpu: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10.1",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                }
            ]
        },
    }
    request = urllib.request.Request(
        f"{cluster.url}/api/v1/namespaces/default/pods",
        data=json.dumps(pod).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        assert response.status == 201


def read(browser: webdriver.Chrome, script: str) -> Any:
    """What `script` returns, read in the page in one go (the page redraws as the cluster changes,
    so elements found earlier may be gone)."""
    return browser.execute_script(script)


def slips(browser: webdriver.Chrome) -> list[str]:
    """Each value the drawing code failed to turn into text, with the text around it (none when
    the page is drawn cleanly)."""
    text = read(browser, "return document.querySelector('main').textContent")
    return [
        text[max(0, at - 60) : at + 60]
        for slip in ("null", "undefined", "[object ", "NaN")
        for at in range(len(text))
        if text.startswith(slip, at)
    ]


def wait_until(browser: webdriver.Chrome, script: str) -> Any:
    """The first truthy value `script` returns in the page, within WAIT seconds (on a timeout the
    page's address and text are printed, for the report)."""
    try:
        return WebDriverWait(browser, WAIT).until(lambda b: b.execute_script(script))
    except TimeoutException:
        print("page at", browser.current_url, "shows:", browser.find_element("css selector", "main").text[:1000])
        raise


def test_the_cluster_page_shows_the_nodes_and_a_new_pod_moves_to_its_node_without_a_reload(ui_cluster, browser, shots):
    browser.get(f"{ui_cluster.scheduler_url}/ui/")
    nodes = wait_until(
        browser,
        "const n = [...document.querySelectorAll('section.node')]; return n.length === 3 && n.map(c => c.dataset.node)",
    )
    assert nodes == ["node-0", "node-1", "node-2"]
    wait_until(browser, "return document.querySelector('#live.on') !== null")  # following the stream
    browser.execute_script("window.notReloaded = true")
    create_pod(ui_cluster, "web-1", "500m")
    node = wait_until(
        browser,
        "const a = document.querySelector(\"section.node a.chip[href='#/pod/default/web-1']\"); "
        "return a && a.closest('section').dataset.node",
    )
    bound = json.loads(urllib.request.urlopen(f"{ui_cluster.url}/api/v1/namespaces/default/pods/web-1").read())
    assert node == bound["spec"]["nodeName"]
    assert read(browser, "return window.notReloaded") is True
    cpu = read(browser, f"return document.querySelector(\"section[data-node='{node}'] .gauge output\").textContent")
    assert cpu.startswith("500m / ")
    assert slips(browser) == []
    browser.save_screenshot(str(shots / "cluster.png"))
    browser.get(f"{ui_cluster.scheduler_url}/ui/#/pods")  # the same pods as a table, with their nodes
    row = wait_until(
        browser,
        "const r = document.querySelector(\"tr[data-pod='default/web-1']\"); "
        "return r && [...r.querySelectorAll('td')].map(td => td.textContent)",
    )
    assert row[0] == "default/web-1" and row[2] == node


def test_a_pod_page_shows_the_numbers_kubesched_explain_prints(ui_cluster, browser, shots, capsys):
    create_pod(ui_cluster, "web-2", "250m")
    browser.get(f"{ui_cluster.scheduler_url}/ui/#/pod/default/web-2")
    shown = wait_until(
        browser,
        "const table = document.querySelector(\"article.attempt table[aria-label='Scores']\"); "
        "const chosen = table && table.querySelector('tr.chosen'); "
        "const rows = table && [...table.querySelectorAll('tbody tr')]; "
        "return chosen && {chosen: chosen.dataset.node, "
        "totals: Object.fromEntries(rows.map(r => [r.dataset.node, Number(r.querySelector('td.total').textContent)]))}",
    )
    assert main(["explain", "default/web-2", "--url", ui_cluster.scheduler_url, "--output", "json"]) == 0
    explained = json.loads(capsys.readouterr().out)["attempts"][-1]
    assert shown["chosen"] == explained["selectedNode"]
    assert shown["totals"] == {s["node"]: s["total"] for s in explained["scores"]}
    assert slips(browser) == []
    browser.save_screenshot(str(shots / "pod.png"))


def test_the_queue_page_shows_an_unschedulable_pod_with_what_wakes_it(ui_cluster, browser, shots):
    create_pod(ui_cluster, "too-big", "64")
    browser.get(f"{ui_cluster.scheduler_url}/ui/#/queue")
    row = wait_until(
        browser,
        "const row = document.querySelector(\"tr[data-pod='default/too-big']\"); "
        "return row && row.textContent.includes('unschedulablePods') && row.textContent",
    )
    assert "NodeResourcesFit" in row and "Node(Add|UpdateNodeAllocatable)" in row
    assert slips(browser) == []
    browser.save_screenshot(str(shots / "queue.png"))
    browser.get(f"{ui_cluster.scheduler_url}/ui/#/scheduler")
    wait_until(browser, "return document.querySelector(\"table[aria-label='profile default-scheduler']\") !== null")
    assert slips(browser) == []
    browser.save_screenshot(str(shots / "scheduler.png"))
    for name in ("queue", "scheduler"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


def test_with_actions_on_the_page_cordons_a_node_creates_a_pod_and_deletes_it(ui_cluster, browser):
    browser.get(f"{ui_cluster.scheduler_url}/ui/")
    wait_until(browser, "return document.querySelector(\"section[data-node='node-2'] button.cordon\") !== null")
    browser.execute_script("document.querySelector(\"section[data-node='node-2'] button.cordon\").click()")
    wait_until(browser, "return document.querySelector(\"section[data-node='node-2'] .badge\") !== null")
    node = json.loads(urllib.request.urlopen(f"{ui_cluster.url}/api/v1/nodes/node-2").read())
    assert node["spec"]["unschedulable"] is True
    browser.find_element("name", "name").send_keys("made-here")
    browser.find_element("name", "cpu").send_keys("100m")
    browser.find_element("id", "create-pod").click()
    placed = wait_until(
        browser,
        "const a = document.querySelector(\"section.node a.chip[data-pod='default/made-here']\"); "
        "return a && a.closest('section').dataset.node",
    )
    assert placed in ("node-0", "node-1")  # not the cordoned node
    browser.get(f"{ui_cluster.scheduler_url}/ui/#/pod/default/made-here")
    wait_until(browser, "return document.getElementById('delete-pod') !== null")
    browser.find_element("id", "delete-pod").click()
    wait_until(browser, "return (document.getElementById('said') || {}).textContent === 'deleted default/made-here'")
    pod = json.loads(urllib.request.urlopen(f"{ui_cluster.url}/api/v1/namespaces/default/pods/made-here").read())
    assert pod["metadata"]["deletionTimestamp"]
    browser.execute_script(
        "fetch('/ui/api/nodes/node-2/uncordon', {method: 'POST', headers: {'Content-Type': 'application/json'}})"
    )


def test_replaying_drill_c2_shows_the_victim_leaving_and_the_preemptor_arriving_at_their_moments(
    browser, shots, tmp_path
):
    trace = tmp_path / "c2.jsonl"
    assert main(["drill", "c2", "--trace", str(trace)]) == 0
    recording = Recording.load(trace)
    app = web.Application()
    mount_replay(app, recording)

    def at(kind: str, pod: str) -> float:
        return next(r.time for r in recording.records if r.kind == kind and r.pod == pod) - recording.start

    gone, bound = at("store.pod.deleted", "default/batch-b"), at("store.pod.bound", "default/urgent")
    where = (
        "const chip = document.querySelector(\"a.chip[data-pod='default/%s']\"); "
        "const drawn = [...document.querySelectorAll('section.node')].every(c => c.dataset.drawn); "
        "return drawn && document.getElementById('page').dataset.t === '%.3f' "
        "&& (chip ? (chip.closest('section') ? chip.closest('section').dataset.node : 'unscheduled') : 'none')"
    )
    with served(app) as url:
        browser.get(f"{url}/ui/#/?t={gone - 0.001:.6f}")  # just before the victim goes
        assert wait_until(browser, where % ("batch-b", gone - 0.001)) == "node-0"
        assert read(browser, where % ("urgent", gone - 0.001)) == "unscheduled"
        browser.save_screenshot(str(shots / "replay-before.png"))
        browser.execute_script(  # the slider moved to the moment the victim is deleted
            "const s = document.getElementById('at'); s.value = arguments[0]; s.dispatchEvent(new Event('input'))",
            f"{gone:.6f}",
        )
        assert wait_until(browser, where % ("batch-b", gone)) == "none"
        assert read(browser, where % ("urgent", gone)) == "unscheduled"
        browser.find_element("id", "next").click()  # the next moment worth stopping at: the binding
        assert wait_until(browser, where % ("urgent", bound)) == "node-0"
        browser.save_screenshot(str(shots / "replay-after.png"))


def test_a_sweeps_point_opened_from_its_page_is_replayed_on_the_cluster_page(browser, shots, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["sweep", str(sweep_file(tmp_path, sweep_document())), "--out", str(out), "--workers", "1"]
    assert main([*argv, "--output", "json"]) == 0
    capsys.readouterr()
    app = web.Application()
    mount_sweep(app, out)
    rows = "return [...document.querySelectorAll('tr[data-index]')].map(r => r.dataset.index)"
    cards = (
        "const cards = [...document.querySelectorAll('section.node')]; "
        "if (location.hash !== '#/' || cards.length !== 3 || !cards.every(c => c.dataset.drawn)) return null; "
        "return cards.map(c => c.querySelectorAll('a.chip').length).sort()"
    )
    with served(app) as url:
        browser.get(f"{url}/ui/")  # nothing replayed yet: the sweep's page first
        listed = "return location.hash === '#/sweep' && document.querySelectorAll('button.open').length === 2"
        wait_until(browser, listed)
        assert read(browser, rows) == ["0", "1"]
        assert not slips(browser)
        browser.find_element("xpath", "//th/button[text()='nodesUsed']").click()
        assert read(browser, rows) == ["1", "0"]  # MostAllocated packs: fewer nodes used
        browser.save_screenshot(str(shots / "sweep.png"))
        browser.find_element("css selector", "button[aria-label='open point 1']").click()
        assert wait_until(browser, cards) == [0, 0, 4]
        assert "point 1 (strategy=MostAllocated)" in read(
            browser, "return document.getElementById('replaying').textContent"
        )
        browser.save_screenshot(str(shots / "sweep-point.png"))
        browser.get(f"{url}/ui/#/sweep")
        wait_until(browser, listed)
        browser.find_element("css selector", "button[aria-label='open point 0']").click()
        assert wait_until(browser, cards) == [1, 1, 2]  # LeastAllocated spreads


def test_a_page_on_a_larger_cluster_loads_quickly_and_keeps_up_with_pod_changes(browser):
    """At a tenth of the bench's scale (bench.ui: 5,000 nodes, 50,000 pods): the page has every node
    and its first cards drawn within 2 s, and 2,000 pod changes sent as fast as they go all reach it."""
    nodes, pods = 500, 5000
    spec = ClusterSpec(nodes=nodes, port=0, scheduler=True, scheduler_port=0, kubelets=False)
    with ClusterThread(spec) as cluster:

        def fill(embedded: Any) -> None:
            for i in range(pods):
                pod = make_pod_from("pod-default.yaml", i, "default")
                pod.spec.nodeName = f"node-{i % nodes}"
                embedded.store.create(pod)

        cluster.call(fill)
        begun = time.perf_counter()
        browser.get(f"{cluster.scheduler_url}/ui/")
        wait_until(
            browser,
            f"return document.querySelectorAll('section.node').length === {nodes} "
            "&& document.querySelector('section.node[data-drawn]') !== null",
        )
        assert time.perf_counter() - begun < 2.0
        assert read(browser, "return document.querySelectorAll('a.chip').length") > 0
        wait_until(browser, "return document.querySelector('#live.on') !== null")

        def relabel(embedded: Any) -> None:
            for i in range(2000):
                embedded.store.patch(
                    Pod, f"pod-{i % pods:06d}", {"metadata": {"labels": {"rev": str(i)}}}, namespace="default"
                )

        cluster.call(relabel)
        target = cluster.call(lambda c: c.mirror.version)
        wait_until(browser, f"return Number(document.getElementById('live').dataset.version) >= {target}")


def test_the_compare_page_sets_two_configurations_side_by_side(browser, shots, tmp_path, capsys):
    report = load_comparison(compare_report(tmp_path, capsys))
    app = web.Application()
    serve_pages(app)
    mount_comparison(app, report)
    with served(app) as url:
        browser.get(f"{url}/ui/#/compare")
        shown = wait_until(
            browser,
            "const s = [...document.querySelectorAll('.compare section')]; "
            "return s.length === 2 && s.map(c => [c.dataset.config, "
            "[...c.querySelectorAll('.node-use')].map(n => [n.dataset.node, n.querySelector('output').textContent])])",
        )
        browser.save_screenshot(str(shots / "compare.png"))
    expected = [[c["config"], [[n["name"], _cpu_text(n["cpu"])] for n in c["nodes"]]] for c in report["configs"]]
    assert shown == expected
    assert expected[0][1] != expected[1][1]  # the two configurations placed the pods differently


def _cpu_text(cpu: dict[str, int]) -> str:
    def show(milli: int) -> str:
        return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"

    return f"{show(cpu['requested'])} / {show(cpu['allocatable'])}"
