"""Where a sweep's points run. Each executor takes jobs (`simulate.run_job`'s input) and yields
their results as they finish, in whatever order that is.

`LocalExecutor` runs them in worker processes on this machine (pebble's process pool, one point a
task: a worker that dies — a crash, the OOM killer — fails its point and is replaced; the sweep
goes on). `RayExecutor` runs them as Ray tasks on an existing Ray cluster (`ray start --head`;
its workers need kubesched installed, and the sweep's files at the same paths).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import Protocol

from kubesched.whatif.sweep.simulate import FAILED, PointJson, PointResult, run_job
from kubesched.whatif.sweep.spec import Job

LOCAL, RAY = "local", "ray"
EXECUTORS = (LOCAL, RAY)


class ExecutorError(RuntimeError):
    """An executor that cannot start (Ray not installed, no cluster at the address), in one line."""


class Executor(Protocol):
    workers: int  # points run at once

    def run(self, jobs: Iterable[Job]) -> Iterator[PointJson]: ...


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _failed(job: Job, error: str) -> PointJson:
    return PointResult(int(job["index"]), dict(job["point"]), FAILED, error=error).to_json()


def _first_line(error: BaseException) -> str:
    """An error in one line: the first of its message (Ray's run to many), or its type."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _died(error: BaseException) -> str:
    code = getattr(error, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker running the point died ({name})"
    return f"the worker running the point died (exit code {code})"


class LocalExecutor:
    def __init__(self, workers: int | None = None, *, timeout: float | None = None) -> None:
        self.workers = workers or cores()
        self.timeout = timeout

    def run(self, jobs: Iterable[Job]) -> Iterator[PointJson]:
        from pebble import ProcessExpired, ProcessPool

        # Workers fork from a server that has imported the simulation once: quick to start, and
        # no thread of this process (the progress bar's) is copied into them.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["kubesched.whatif.sweep.simulate"])
        queue = deque(jobs)
        with ProcessPool(max_workers=self.workers, context=context) as pool:
            running: dict[Future[PointJson], Job] = {}
            try:
                while queue or running:
                    while queue and len(running) < 2 * self.workers:  # a few ahead, not all at once
                        job = queue.popleft()
                        running[pool.schedule(run_job, args=(job,), timeout=self.timeout)] = job
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        job = running.pop(future)
                        try:
                            yield future.result()
                        except ProcessExpired as e:
                            yield _failed(job, _died(e))
                        except TimeoutError:
                            yield _failed(job, f"took longer than --timeout {self.timeout:g}s")
            finally:
                stop: Callable[[], None] = pool.stop  # pebble leaves stop() unannotated
                stop()
                pool.join()


class RayExecutor:
    def __init__(self, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorError("--executor ray: Ray is not installed (pip install 'kubesched[ray]')") from None
        if address and address != "auto":
            _listening(address)
        try:
            ray.init(
                address=address or "auto",
                ignore_reinit_error=True,
                log_to_driver=False,
                logging_level=logging.ERROR,
                configure_logging=False,
            )
        except Exception as e:  # Ray's own errors for a cluster it cannot join are of several kinds
            raise ExecutorError(
                f"--address: no Ray cluster to connect to at {address or 'auto'}: {_first_line(e)}"
            ) from None
        resources: Callable[[], dict[str, float]] = ray.cluster_resources  # unannotated in Ray
        self.workers = max(1, int(resources().get("CPU", 1)))

    def run(self, jobs: Iterable[Job]) -> Iterator[PointJson]:
        import ray  # imported by __init__ already

        task = ray.remote(num_cpus=1, max_retries=0)(run_job)
        queue = deque(jobs)
        running: dict[ray.ObjectRef[PointJson], Job] = {}
        try:
            while queue or running:
                while queue and len(running) < 2 * self.workers:
                    job = queue.popleft()
                    running[task.remote(job)] = job
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    job = running.pop(ref)
                    try:
                        yield ray.get(ref)
                    except ray.exceptions.RayError as e:
                        yield _failed(job, f"the Ray task running the point failed: {_first_line(e)}")
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
            ray.shutdown()


def _listening(address: str) -> None:
    """ExecutorError unless something answers at `address` (HOST:PORT, or ray://HOST:PORT): Ray
    itself would wait a minute and more before saying so."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=3):
            return
    except ValueError:
        raise ExecutorError(f"--address: expected HOST:PORT, got {address!r}") from None
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise ExecutorError(f"--address: no Ray cluster to connect to at {address}: {why}") from None


def executor(
    name: str, *, workers: int | None = None, address: str | None = None, timeout: float | None = None
) -> Executor:
    """The executor `name` (local or ray); ExecutorError when it cannot start."""
    if name == LOCAL:
        return LocalExecutor(workers, timeout=timeout)
    if name == RAY:
        return RayExecutor(address)
    raise ExecutorError(f"--executor: {name!r} is not an executor (known: {', '.join(EXECUTORS)})")
