"""Compilation fan-out: a compile job is a pure function (source text in, binary bytes out), run
on a local thread pool by default or on a Ray cluster (optional extra ``muh[tune]``) when asked.

nvcc is a separate process, so threads are enough locally; on Ray each job runs in a worker of the
cluster (``--ray-address`` for an existing one, a local one otherwise) and ships the binary back.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Compiled:
    ok: bool
    binary: bytes
    log: str
    seconds: float
    timed_out: bool = False
    killed: bool = False  # nvcc died from a signal (Ctrl-C): no verdict on the source


def compile_job(source: str, args: list[str], nvcc: str = "nvcc", timeout: float = 600.0) -> Compiled:
    """Compile ``source`` (CUDA C++) into an executable; never raises for a compiler failure."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="muh-tune-") as tmp:
        src = Path(tmp) / "unit.cu"
        exe = Path(tmp) / "unit"
        src.write_text(source, encoding="utf-8")
        try:
            res = subprocess.run([nvcc, *args, "-o", str(exe), str(src)], capture_output=True, text=True,
                                 timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return Compiled(False, b"", f"nvcc ran past {timeout:.0f} s", time.monotonic() - t0, timed_out=True)
        except OSError as err:
            return Compiled(False, b"", f"cannot run {nvcc}: {err}", time.monotonic() - t0)
        log = (res.stdout + res.stderr)[-4000:]
        if res.returncode != 0 or not exe.exists():
            return Compiled(False, b"", log or f"nvcc exited with {res.returncode}", time.monotonic() - t0,
                            killed=res.returncode < 0)
        return Compiled(True, exe.read_bytes(), log, time.monotonic() - t0)


class LocalPool:
    """Threads running nvcc processes on this machine."""

    kind = "local"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or (os.cpu_count() or 2))
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="muh-nvcc")

    def submit(self, source: str, args: list[str], nvcc: str, timeout: float) -> Future:
        return self.pool.submit(compile_job, source, args, nvcc, timeout)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class RayPool:
    """Compile jobs as Ray tasks (a local cluster, or the one at ``address``)."""

    kind = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None):
        import ray  # optional extra: muh[tune]

        self.ray = ray
        if not ray.is_initialized():
            kw = {"address": address} if address else {"num_cpus": workers or (os.cpu_count() or 2)}
            from muh.tune.measure import SAFE_ENV

            ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False,
                     runtime_env={"env_vars": dict(SAFE_ENV)}, **kw)
        self.remote = ray.remote(num_cpus=1)(compile_job)
        self.workers = int(ray.cluster_resources().get("CPU", 1))

    def submit(self, source: str, args: list[str], nvcc: str, timeout: float) -> Future:
        return self.remote.remote(source, args, nvcc, timeout).future()

    def shutdown(self) -> None:
        self.ray.shutdown()


def make_pool(use_ray: bool, address: str | None, workers: int | None):
    if use_ray or address:
        return RayPool(address, workers)
    return LocalPool(workers)


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def store(binary: bytes, folder: Path) -> Path:
    """Write an executable into ``folder`` under its content hash."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("unit-" + hashlib.sha256(binary).hexdigest()[:16])
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(binary)
        tmp.chmod(0o755)
        tmp.replace(path)
    return path
