"""Compilation fan-out: a compile job is a pure function (source text in, binary bytes out), run
on a local thread pool by default or on a Ray cluster (optional extra ``muh[tune]``) when asked.

nvcc is a separate process, so threads are enough locally; on Ray each job runs in a worker of the
cluster (``--ray-address`` for an existing one, a local one otherwise) and ships the binary back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from muh.runtime import ptxas


@dataclass
class Compiled:
    ok: bool
    binary: bytes
    log: str
    seconds: float
    timed_out: bool = False
    killed: bool = False  # nvcc died from a signal (Ctrl-C): no verdict on the source
    spills: tuple[ptxas.Spill, ...] = ()  # functions that spill registers (read with ptxas.FLAGS in the args)


def compile_job(source: str, args: list[str], nvcc: str = "nvcc", timeout: float = 600.0) -> Compiled:
    """Compile ``source`` (CUDA C++) into an executable; never raises for a compiler failure."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="muh-tune-") as tmp:
        src = Path(tmp) / "unit.cu"
        exe = Path(tmp) / "unit"
        src.write_text(source, encoding="utf-8")
        try:
            res = subprocess.run(
                [nvcc, *args, "-o", str(exe), str(src)], capture_output=True, text=True, timeout=timeout, cwd=tmp
            )
        except subprocess.TimeoutExpired:
            return Compiled(False, b"", f"nvcc ran past {timeout:.0f} s", time.monotonic() - t0, timed_out=True)
        except OSError as err:
            return Compiled(False, b"", f"cannot run {nvcc}: {err}", time.monotonic() - t0)
        full = res.stdout + res.stderr
        log = ptxas.quiet(full)[-4000:]  # the diagnostics, without ptxas's per-function report
        if res.returncode != 0 or not exe.exists():
            return Compiled(
                False,
                b"",
                log or f"nvcc exited with {res.returncode}",
                time.monotonic() - t0,
                killed=res.returncode < 0,
            )
        found = ptxas.spills(full)
        names = ptxas.demangle([s.function for s in found], nvcc)
        found = tuple(dataclasses.replace(s, name=names[s.function]) for s in found)
        return Compiled(True, exe.read_bytes(), log, time.monotonic() - t0, spills=found)


def unit_key(source: str, args: list[str], nvcc: str) -> str:
    """Content address of a compile job: the source, the flags and the compiler's own version line."""
    h = hashlib.sha256()
    for part in (source, "\0".join(args), _nvcc_version(nvcc)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


_VERSIONS: dict[str, str] = {}


def _nvcc_version(nvcc: str) -> str:
    if nvcc not in _VERSIONS:
        try:
            out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        _VERSIONS[nvcc] = out.strip().splitlines()[-1] if out.strip() else nvcc
    return _VERSIONS[nvcc]


class LocalPool:
    """Threads running nvcc processes on this machine. With ``cache`` (a folder), a compiled unit is
    kept under its content address (``unit_key``), with its spill report beside it, and the same source
    compiles only once: a size bucket's units, which differ from another bucket's only in the sizes
    they are run at, or a resumed run."""

    kind = "local"

    def __init__(self, workers: int | None = None, cache: Path | None = None):
        self.workers = max(1, workers or (os.cpu_count() or 2))
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="muh-nvcc")
        self.cache = cache

    def submit(self, source: str, args: list[str], nvcc: str, timeout: float) -> Future:
        if self.cache is None:
            return self.pool.submit(compile_job, source, args, nvcc, timeout)
        return self.pool.submit(self._cached, source, args, nvcc, timeout)

    def _cached(self, source: str, args: list[str], nvcc: str, timeout: float) -> Compiled:
        path = self.cache / f"unit-{unit_key(source, args, nvcc)}"
        report = path.with_suffix(".spills")
        if path.exists() and report.exists():
            try:
                found = tuple(ptxas.Spill(**s) for s in json.loads(report.read_text()))
                return Compiled(True, path.read_bytes(), "cached", 0.0, spills=found)
            except (ValueError, TypeError):
                pass  # an unreadable report: compile again
        comp = compile_job(source, args, nvcc, timeout)
        if comp.ok:
            self.cache.mkdir(parents=True, exist_ok=True)
            for dest, data in (
                (report, json.dumps([dataclasses.asdict(s) for s in comp.spills]).encode()),
                (path, comp.binary),
            ):  # the report first: a binary is never cached without it
                tmp = dest.with_suffix(f"{dest.suffix}.tmp{os.getpid()}")
                tmp.write_bytes(data)
                tmp.replace(dest)
        return comp

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

            ray.init(
                ignore_reinit_error=True,
                log_to_driver=False,
                include_dashboard=False,
                runtime_env={"env_vars": dict(SAFE_ENV)},
                **kw,
            )
        self.remote = ray.remote(num_cpus=1)(compile_job)
        self.workers = int(ray.cluster_resources().get("CPU", 1))

    def submit(self, source: str, args: list[str], nvcc: str, timeout: float) -> Future:
        return self.remote.remote(source, args, nvcc, timeout).future()

    def shutdown(self) -> None:
        self.ray.shutdown()


def make_pool(use_ray: bool, address: str | None, workers: int | None, cache: Path | None = None):
    if use_ray or address:
        return RayPool(address, workers)
    return LocalPool(workers, cache)


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
