"""The controllers' runtime: the work queue, the informers' write-through cache, `--controllers`."""

import pytest

from kubesched.controllers import CONTROLLERS, parse_controllers
from kubesched.controllers.base import work
from kubesched.controllers.workqueue import BATCH_SECONDS, WorkQueue


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("*", sorted(CONTROLLERS)),
        ("*,-job,-daemonset", sorted(set(CONTROLLERS) - {"job", "daemonset"})),
        ("replicaset,deployment", ["deployment", "replicaset"]),
        ("", []),
    ],
)
def test_controllers_are_chosen_as_kube_controller_manager_chooses(text, expected):
    assert parse_controllers(text) == expected


def test_an_unknown_controller_is_named():
    with pytest.raises(ValueError, match="unknown controller\\(s\\) cronjob, ttl"):
        parse_controllers("*,cronjob,-ttl")


def _drain(clock, queue, processed, *, cost=0.0):
    async def worker():
        while True:
            key = await queue.get()
            processed.append((round(clock.now() - start, 3), key))
            queue.done(key, cost=cost)

    start = clock.now()
    clock.loop.create_task(worker())


def test_a_key_is_queued_once_and_again_when_added_while_processed(clock):
    queue = WorkQueue(clock)
    seen = []

    async def worker():
        key = await queue.get()
        queue.add(key)  # changed while being processed
        queue.add(key)
        seen.append(key)
        queue.done(key)
        seen.append(await queue.get())

    for key in ("a", "a", "b"):
        queue.add(key)
    clock.loop.create_task(worker())
    clock.advance(0.1)
    assert seen == ["a", "b"] and len(queue) == 1  # "a" again, once, behind "b"


@pytest.mark.parametrize(("cost", "delay"), [(0.0, BATCH_SECONDS), (0.02, 0.2)])
def test_batched_adds_wait_for_the_burst_and_for_the_keys_cost(clock, cost, delay):
    queue = WorkQueue(clock)
    processed = []
    _drain(clock, queue, processed, cost=cost)
    queue.add("rs")
    clock.advance(0.001)
    for _ in range(100):
        queue.add_batched("rs")
    clock.advance(1)
    assert [k for _, k in processed] == ["rs", "rs"]
    assert processed[1][0] == pytest.approx(delay, abs=0.002)


def test_retries_back_off_exponentially_until_forgotten(clock):
    queue = WorkQueue(clock)
    processed = []
    _drain(clock, queue, processed)
    for _ in range(3):
        queue.retry("x")
    clock.advance(1)
    assert [t for t, _ in processed] == pytest.approx([0.005, 0.01, 0.02], abs=0.001)


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (("default", "web"), "replicaset: syncing default/web failed"),
        (("v1", "Pod", "uid-1"), "replicaset: syncing v1/Pod/uid-1 failed"),
    ],
    ids=["namespace-name", "garbage-collector-key"],
)
def test_a_failed_sync_is_logged_with_its_whole_key_and_retried(clock, caplog, key, said):
    queue = WorkQueue(clock)
    tries = []

    async def sync(item):
        tries.append(item)
        raise RuntimeError("boom")

    queue.add(key)
    clock.loop.create_task(work(queue, sync, name="replicaset"))
    clock.advance(0.1)
    assert tries[:2] == [key, key]  # retried, not dropped
    assert said in [r.getMessage() for r in caplog.records]
