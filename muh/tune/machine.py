"""The machine a tuning run measures on: visible GPUs, driver, toolkit, and their fingerprint."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from muh.runtime import toolchain


@dataclass(frozen=True)
class Gpu:
    index: int  # as CUDA_VISIBLE_DEVICES takes it (the physical index or UUID)
    name: str
    uuid: str = ""


@dataclass(frozen=True)
class Machine:
    gpus: tuple[Gpu, ...]
    driver: str
    toolkit: str  # nvcc release, e.g. "13.0.88"
    nvcc: str | None

    @property
    def gpu_name(self) -> str:
        return self.gpus[0].name if self.gpus else "none"

    @property
    def fingerprint(self) -> str:
        """What a timing depends on beyond the code: GPU model, driver, toolkit (12 hex digits)."""
        blob = "|".join([self.gpu_name, self.driver, self.toolkit])
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def find_nvcc() -> str | None:
    return toolchain.find_nvcc()


def toolkit_version(nvcc: str | None) -> str:
    if not nvcc:
        return "none"
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    m = re.search(r"V(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else "unknown"


def _visible(gpus: list[Gpu]) -> list[Gpu]:
    """Honour CUDA_VISIBLE_DEVICES (indices or UUIDs) as CUDA would."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return gpus
    out = []
    for tok in (t.strip() for t in env.split(",")):
        if not tok:
            break
        hit = [g for g in gpus if str(g.index) == tok or (g.uuid and g.uuid.startswith(tok))]
        if not hit:
            break  # CUDA stops at the first invalid entry
        out.append(hit[0])
    return out


def detect() -> Machine:
    """Visible NVIDIA GPUs through nvidia-smi (no CUDA context is created in this process)."""
    nvcc = find_nvcc()
    gpus: list[Gpu] = []
    driver = "none"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            res = subprocess.run(
                [smi, "--query-gpu=index,name,uuid,driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            for line in res.stdout.splitlines():
                parts = [p.strip() for p in line.split(",")]
                if len(parts) >= 4 and parts[0].isdigit():
                    gpus.append(Gpu(int(parts[0]), parts[1], parts[2]))
                    driver = parts[3]
        except (OSError, subprocess.SubprocessError):
            gpus = []
    return Machine(tuple(_visible(gpus)), driver, toolkit_version(nvcc), nvcc)
