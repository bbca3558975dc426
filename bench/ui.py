"""The UI at scale: `cluster up --scheduler` (in process) holding N nodes and P bound pods, its cluster
page opened in headless Chromium.

    .venv/bin/python -m bench.ui [--nodes 5000] [--pods 50000] [--changes-per-second 1000] [--seconds 10]

Reported: the seconds `/ui/api/cluster` takes to answer and its size; the seconds from opening the
page until every node has its place and the cards on screen are drawn, and from a scroll to the
last node until it is drawn; then, with the page open, pods relabelled at the given rate
for the given seconds (each a pod update the scheduler's informers see): how far behind the page's
stream was at the end, and how long the page took to catch up. The pods are created already bound
and no kubelet runs, so what is measured is the UI, not scheduling.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import urllib.request
from typing import Any

from lightkube.resources import core_v1
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from kubesched.cli.cluster import ClusterSpec, ClusterThread
from kubesched.cli.runtime import tune_gc
from kubesched.workloads.templates import make_pod_from

BATCH = 1000  # pods created per call into the cluster's loop
# In the page: every node has its card, and every card on screen is drawn.
SHOWN = """
const cards = document.querySelectorAll('section.node');
if (cards.length < arguments[0]) return false;
for (const card of cards) {
  const box = card.getBoundingClientRect();
  if (box.bottom > 0 && box.top < innerHeight && !card.dataset.drawn) return false;
}
return true;
"""


def _browser(profile: str) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
        "--disable-background-networking", "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
    ):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=options)


def _fill(cluster: ClusterThread, nodes: int, pods: int) -> None:
    def create(start: int, count: int) -> Any:
        def run(embedded: Any) -> None:
            for i in range(start, start + count):
                pod = make_pod_from("pod-default.yaml", i, "default")
                pod.spec.nodeName = f"node-{i % nodes}"
                embedded.store.create(pod)

        return run

    for start in range(0, pods, BATCH):
        cluster.call(create(start, min(BATCH, pods - start)))


def _mirror_version(cluster: ClusterThread) -> int:
    return int(cluster.call(lambda c: c.mirror.version))


def _page_version(browser: webdriver.Chrome) -> int:
    """The last change the page's stream has delivered."""
    return int(browser.execute_script("return Number(document.getElementById('live').dataset.version || 0)"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50000)
    parser.add_argument("--changes-per-second", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    tune_gc()
    spec = ClusterSpec(nodes=args.nodes, port=0, scheduler=True, scheduler_port=0, kubelets=False)
    with ClusterThread(spec) as cluster, tempfile.TemporaryDirectory() as profile:
        started = time.perf_counter()
        _fill(cluster, args.nodes, args.pods)
        while cluster.call(lambda c: c.scheduler.cache.pod_count) < args.pods:
            time.sleep(0.1)
        filled = time.perf_counter() - started
        print(f"{args.nodes} nodes, {args.pods} bound pods in the scheduler's cache after {filled:.1f} s")
        url = f"{cluster.scheduler_url}/ui/api/cluster"
        for _ in range(3):
            begun = time.perf_counter()
            body = urllib.request.urlopen(url, timeout=60).read()
            print(f"GET /ui/api/cluster: {time.perf_counter() - begun:.2f} s, {len(body) / 2**20:.1f} MiB")
        browser = _browser(profile)
        try:
            for _ in range(3):
                browser.get("about:blank")
                begun = time.perf_counter()
                browser.get(f"{cluster.scheduler_url}/ui/")
                while not browser.execute_script(SHOWN, args.nodes):
                    time.sleep(0.02)
                loaded = time.perf_counter() - begun
                begun = time.perf_counter()
                browser.execute_script("document.querySelector('section.node:last-of-type').scrollIntoView()")
                while not browser.execute_script(SHOWN, args.nodes):
                    time.sleep(0.02)
                print(
                    f"cluster page, every node placed and the cards on screen drawn: {loaded:.2f} s; "
                    f"scrolled to the last node and drawn: {time.perf_counter() - begun:.2f} s"
                )
            while not browser.execute_script("return document.querySelector('#live.on') !== null"):
                time.sleep(0.02)
            total = int(args.changes_per_second * args.seconds)
            begun = time.perf_counter()
            for i in range(total):
                if i % 100 == 0:  # paced: the changes arrive at the rate asked, not all at once
                    ahead = begun + i / args.changes_per_second - time.perf_counter()
                    if ahead > 0:
                        time.sleep(ahead)
                key = i % args.pods
                cluster.call(
                    lambda c, k=key, n=i: c.store.patch(
                        core_v1.Pod, f"pod-{k:06d}", {"metadata": {"labels": {"rev": str(n)}}}, namespace="default"
                    )
                )
            sent = time.perf_counter() - begun
            target = _mirror_version(cluster)
            behind = max(0, target - _page_version(browser))
            caught = time.perf_counter()
            while _page_version(browser) < target:
                time.sleep(0.02)
            print(
                f"{total} pod changes in {sent:.1f} s ({total / sent:.0f}/s): the page was {behind} changes behind "
                f"at the end and caught up {time.perf_counter() - caught:.2f} s later"
            )
        finally:
            browser.quit()


if __name__ == "__main__":
    main()
