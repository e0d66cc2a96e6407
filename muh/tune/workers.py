"""Measuring workers: one per GPU, each measuring whole units on its own GPU.

A unit carries the base (index 0) and its variants, so every speedup is a ratio of two timings
taken in one process on one GPU; timings are never compared across GPUs. Two implementations of one
small interface (``submit(job) -> Future[Outcome]``, ``close()``):

- :class:`ThreadWorkers`: one thread per GPU visible on this machine (``CUDA_VISIBLE_DEVICES`` pins
  each unit's process to the worker's GPU). The default.
- :class:`RayWorkers`: one Ray actor per GPU of the cluster (``num_gpus=1``, so Ray pins each actor
  to a GPU of its own), on a local cluster (``ray.init()``) or an existing one (``--ray-address``).
  Binaries travel as bytes, so actors may sit on other nodes. Ray schedules; muh only keeps one
  queue of units that the actors take from. An actor that dies loses the unit in flight, which goes
  back to the queue and is measured by another actor (at most ``retries`` times).

Every process a worker starts runs with NVLink multicast off (:data:`SAFE_ENV`): tuning needs no
collective, and multicast on a shared host can take its GPUs out of service.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from muh.tune.measure import SAFE_ENV, Result, run_unit


@dataclass
class Job:
    """One unit to measure: which indices of the binary, how."""

    binary: Path
    indices: list[int]
    sizes: list[int]
    runs: int
    warmup: int
    seed: int
    timeout: float
    tries: int = 0


@dataclass
class Outcome:
    results: dict[int, Result]
    device: str
    """The GPU that measured the unit: ``"<name> <uuid>"`` (or the worker's name where no uuid is known)."""
    worker: str = ""
    retried: int = 0
    errors: list[str] = field(default_factory=list)


def gpu_identity(index: str) -> tuple[str, str, str]:
    """(name, UUID, driver) of the GPU at ``index`` (as CUDA_VISIBLE_DEVICES names it), via nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            res = subprocess.run(
                [smi, "-i", str(index), "--query-gpu=name,uuid,driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            parts = [p.strip() for p in res.stdout.strip().splitlines()[0].split(",")] if res.returncode == 0 else []
            if len(parts) >= 3:
                return parts[0], parts[1], parts[2]
        except (OSError, subprocess.SubprocessError, IndexError):
            pass
    return "unknown GPU", f"index {index}", "unknown"


class ThreadWorkers:
    """One thread per local GPU; ``measure`` is :func:`muh.tune.measure.run_unit` (tests pass a fake)."""

    kind = "local"

    def __init__(self, gpus, measure: Callable | None = None, stop: threading.Event | None = None):
        self._measure = measure or run_unit
        self._stop = stop or threading.Event()
        self._q: queue.Queue = queue.Queue()
        self._threads = []
        for g in gpus:
            label = f"{g.name} {g.uuid}".strip() if getattr(g, "uuid", "") else f"{g.name} #{g.index}"
            t = threading.Thread(target=self._loop, args=(g.index, label), daemon=True, name=f"muh-gpu{g.index}")
            t.start()
            self._threads.append(t)
        self.count = len(self._threads)

    def _loop(self, gpu, label: str) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            job, fut = item
            try:
                res = self._measure(
                    job.binary,
                    list(job.indices),
                    gpu,
                    sizes=list(job.sizes),
                    runs=job.runs,
                    warmup=job.warmup,
                    seed=job.seed,
                    timeout=job.timeout,
                    stop=self._stop,
                )
                fut.set_result(Outcome(res, label, f"thread:{gpu}"))
            except BaseException as err:  # noqa: BLE001 - handed to the orchestrator, which decides
                fut.set_exception(err)

    def submit(self, job: Job) -> Future:
        fut: Future = Future()
        self._q.put((job, fut))
        return fut

    def close(self) -> None:
        for _ in self._threads:
            self._q.put(None)


def _actor_class(ray):
    """The Ray actor measuring on the one GPU Ray gave it (defined lazily: Ray is an optional extra)."""

    class GpuActor:
        def __init__(self):
            os.environ.update(SAFE_ENV)
            ids = ray.get_gpu_ids()
            self.gpu = os.environ.get("CUDA_VISIBLE_DEVICES") or (str(ids[0]) if ids else "0")
            self.gpu = self.gpu.split(",")[0]
            self.name, self.uuid, self.driver = gpu_identity(self.gpu)
            self.node = ray.get_runtime_context().get_node_id()[:8]
            self.tmp = Path(tempfile.mkdtemp(prefix="muh-tune-actor-"))

        def where(self) -> tuple[str, str, str, str]:
            return self.name, self.uuid, self.driver, self.node

        def measure(self, name: str, binary: bytes, indices, sizes, runs, warmup, seed, timeout):
            path = self.tmp / name
            if not path.exists():
                tmp = path.with_suffix(".tmp")
                tmp.write_bytes(binary)
                tmp.chmod(0o755)
                tmp.replace(path)
            return run_unit(
                path, list(indices), self.gpu, sizes=list(sizes), runs=runs, warmup=warmup, seed=seed, timeout=timeout
            )

    return GpuActor


class RayWorkers:
    """One Ray actor per GPU of the cluster; a shared queue; a dead actor's unit is retried elsewhere."""

    kind = "ray"

    def __init__(
        self, address: str | None = None, gpus: int | None = None, retries: int = 2, stop: threading.Event | None = None
    ):
        import ray  # optional extra: muh[tune]

        self.ray = ray
        if not ray.is_initialized():
            kw = {"address": address} if address else {}
            ray.init(
                ignore_reinit_error=True,
                log_to_driver=False,
                include_dashboard=False,
                runtime_env={"env_vars": dict(SAFE_ENV)},
                **kw,
            )
        total = int(ray.cluster_resources().get("GPU", 0))
        n = min(total, gpus) if gpus else total
        if n < 1:
            raise RuntimeError(
                "the Ray cluster has no GPU resources; start its nodes with their GPUs "
                "(ray start --num-gpus N) or measure locally without --ray"
            )
        self._threads: list[threading.Thread] = []
        actor = ray.remote(num_gpus=1, num_cpus=0, max_restarts=0)(_actor_class(ray))
        self.actors = [actor.options(runtime_env={"env_vars": dict(SAFE_ENV)}).remote() for _ in range(n)]
        # who is where, before anything is measured: one GPU model per run (timings of different
        # models are never mixed under one fingerprint)
        self.where = ray.get([a.where.remote() for a in self.actors])
        models = sorted({w[0] for w in self.where})
        if len(models) > 1:
            self.close()
            raise RuntimeError(
                f"the Ray cluster mixes GPU models ({', '.join(models)}); tune one model per run "
                "(start the workers on one kind of node, or pass --gpus to limit them)"
            )
        self.retries = retries
        self._stop = stop or threading.Event()
        self._q: queue.Queue = queue.Queue()
        self._busy: dict[int, Job] = {}
        self._lock = threading.Lock()
        self._alive = n
        self._threads += [
            threading.Thread(target=self._loop, args=(i,), daemon=True, name=f"muh-ray-gpu{i}") for i in range(n)
        ]
        for t in self._threads:
            t.start()
        self.count = n

    def machine(self, toolkit: str, nvcc: str | None):
        """The cluster's GPUs as a :class:`muh.tune.machine.Machine` (what the results are keyed by)."""
        from muh.tune.machine import Gpu, Machine

        gpus = tuple(Gpu(i, w[0], w[1]) for i, w in enumerate(self.where))
        return Machine(gpus, self.where[0][2], toolkit, nvcc)

    def busy(self) -> dict[int, Job]:
        """Actors (by position in ``actors``) and the unit each is measuring now."""
        with self._lock:
            return dict(self._busy)

    def _loop(self, i: int) -> None:
        ray = self.ray
        actor = self.actors[i]
        name, uuid, _, node = self.where[i]
        device = f"{name} {uuid}".strip()
        while True:
            item = self._q.get()
            if item is None:
                return
            job, fut, errors = item
            with self._lock:
                self._busy[i] = job
            try:
                data = Path(job.binary).read_bytes()
                ref = actor.measure.remote(
                    Path(job.binary).name, data, job.indices, job.sizes, job.runs, job.warmup, job.seed, job.timeout
                )
                res = ray.get(ref)
                fut.set_result(Outcome(res, device, f"ray:{node}:{i}", job.tries, errors))
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as err:
                # the actor died with this unit in flight: only this unit is lost; measure it elsewhere
                errors = errors + [f"{device} on {node}: {type(err).__name__}"]
                job.tries += 1
                if job.tries > self.retries or self._stop.is_set():
                    fut.set_exception(
                        RuntimeError(f"a measuring worker died {job.tries} time(s) on this unit: " + "; ".join(errors))
                    )
                else:
                    self._q.put((job, fut, errors))
                with self._lock:
                    self._busy.pop(i, None)
                self._retire(i)
                return
            except BaseException as err:  # noqa: BLE001
                fut.set_exception(err)
            with self._lock:
                self._busy.pop(i, None)

    def _retire(self, i: int) -> None:
        with self._lock:
            self._alive -= 1
            alive = self._alive
        if alive <= 0:  # nobody left to take queued units: fail them instead of waiting forever
            while True:
                try:
                    item = self._q.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[1].set_exception(RuntimeError("every measuring worker has died"))

    def submit(self, job: Job) -> Future:
        fut: Future = Future()
        with self._lock:
            dead = self._alive <= 0
        if dead:
            fut.set_exception(RuntimeError("every measuring worker has died"))
        else:
            self._q.put((job, fut, []))
        return fut

    def close(self) -> None:
        for _ in self._threads:
            self._q.put(None)
        for a in self.actors:
            try:
                self.ray.kill(a)
            except Exception:  # noqa: BLE001
                pass
