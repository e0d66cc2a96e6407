"""Measurement: run a compiled unit on one GPU and read its JSON lines, classifying every failure.

One worker per visible GPU (``CUDA_VISIBLE_DEVICES`` pins the process). A unit measures the
variants it is asked for against the base (index 0), printing one line per variant. A variant
that hangs (no line within the timeout) is a *timeout*; a process that dies or reports a CUDA error
marks the variant in flight a *launch error*; the remaining variants are run again in a fresh
process, so one bad variant never stops the run.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

SAFE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
"""Set in every process `muh tune` starts: NVLink multicast off (the lab machines' rule; tuning needs no
collective, and multicast on a shared host can take its GPUs out of service)."""


class BaseFailed(RuntimeError):
    """The base policy itself fails the correctness gate: nothing can be compared with it."""


@dataclass
class Result:
    """What the harness reports for one variant of a unit (``run_unit`` keys them by the variant's
    index): its status and, when it ran, the sizes and the median times of variant and base at each.
    A stored trial (``db.Trial``) is this record with what identifies and scores it."""

    status: str
    detail: str = ""
    sizes: list[int] = field(default_factory=list)
    variant_ns: list[float] = field(default_factory=list)
    base_ns: list[float] = field(default_factory=list)
    samples: int = 0


_LIVE: set[subprocess.Popen] = set()
_LIVE_LOCK = threading.Lock()


def kill_all() -> None:
    """Stop every measurement process this muh started (Ctrl-C)."""
    with _LIVE_LOCK:
        for p in list(_LIVE):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass


def _reader(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


class gpu_lock:
    """Exclusive use of GPU ``gpu`` by one measuring process of this machine at a time (an advisory
    ``flock`` on ``<tmp>/muh-tune-gpu<gpu>.lock``): several `muh tune` runs may compile side by side,
    but their timings never overlap on one GPU."""

    def __init__(self, gpu: str):
        import tempfile

        self.path = Path(tempfile.gettempdir()) / f"muh-tune-gpu{gpu}.lock"
        self.fd = None

    def __enter__(self):
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        return False


def run_unit(
    binary: Path,
    indices: list[int],
    gpu: str,
    *,
    sizes: list[int],
    runs: int,
    warmup: int,
    seed: int,
    timeout: float,
    stop: threading.Event | None = None,
) -> dict[int, Result]:
    """Measure ``indices`` of ``binary`` on GPU ``gpu``, holding the GPU's lock (``gpu_lock``); every
    index gets a Result."""
    with gpu_lock(gpu):
        return _run_unit(
            binary, indices, gpu, sizes=sizes, runs=runs, warmup=warmup, seed=seed, timeout=timeout, stop=stop
        )


def _run_unit(
    binary: Path,
    indices: list[int],
    gpu: str,
    *,
    sizes: list[int],
    runs: int,
    warmup: int,
    seed: int,
    timeout: float,
    stop: threading.Event | None = None,
) -> dict[int, Result]:
    results: dict[int, Result] = {}
    todo = [i for i in indices]
    attempts = 0
    while todo and not (stop and stop.is_set()):
        attempts += 1
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), **SAFE_ENV)
        cmd = [
            str(binary),
            "--variants",
            ",".join(map(str, todo)),
            "--sizes",
            ",".join(map(str, sizes)),
            "--runs",
            str(runs),
            "--warmup",
            str(warmup),
            "--seed",
            str(seed + attempts),
        ]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
        )
        with _LIVE_LOCK:
            _LIVE.add(proc)
        q: queue.Queue = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
        in_flight = todo[0]
        hung = False
        try:
            while True:
                try:
                    line = q.get(timeout=timeout)
                except queue.Empty:
                    hung = True
                    break
                if line is None:
                    break
                try:
                    msg = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "variant" not in msg:
                    continue
                idx = int(msg["variant"])
                if idx == 0 and msg.get("status") == "wrong_result" and str(msg.get("detail", "")).startswith("base: "):
                    raise BaseFailed(msg.get("detail", "the base policy fails the correctness check"))
                if idx == -1:
                    raise RuntimeError(msg.get("detail", "the measurement harness failed"))
                results[idx] = Result(
                    msg["status"],
                    msg.get("detail", ""),
                    msg.get("sizes", []),
                    msg.get("variant_ns", []),
                    msg.get("base_ns", []),
                    int(msg.get("samples", 0)),
                )
                rest = [i for i in todo if i not in results]
                in_flight = rest[0] if rest else None
        finally:
            if hung or proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (OSError, ProcessLookupError):
                    pass
            proc.wait()
            err = proc.stderr.read()[-1500:] if proc.stderr else ""
            with _LIVE_LOCK:
                _LIVE.discard(proc)
        if stop and stop.is_set():
            break
        if in_flight is not None and in_flight not in results:
            if hung:
                results[in_flight] = Result("timeout", f"no result within {timeout:.0f} s")
            else:
                results[in_flight] = Result(
                    "launch_error", f"process exited with {proc.returncode}: {err.strip()[-300:]}"
                )
        todo = [i for i in todo if i not in results]
    return results
