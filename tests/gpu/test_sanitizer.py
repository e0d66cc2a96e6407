"""compute-sanitizer memcheck and racecheck over every kernel, on small sizes."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]

DRIVER = Path(__file__).with_name("sanitize_driver.cu")


def _sanitizer() -> str:
    exe = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not Path(exe).exists():
        pytest.skip("compute-sanitizer is not installed")
    return exe


@pytest.fixture(scope="module")
def drivers(generated, tmp_path_factory):
    import torch

    from muh.runtime import build

    major, minor = torch.cuda.get_device_capability()
    out = {}
    for variant in ("h200", "bi100-emu64"):
        gen = generated[variant]
        exe = tmp_path_factory.mktemp("san") / f"driver-{variant}"
        cmd = [build.nvcc(), "-O2", "-lineinfo", "-std=c++17", f"-arch=sm_{major}{minor}", "-I", str(gen / "include"),
               "-o", str(exe), str(DRIVER), *map(str, build.sources(gen))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out[variant] = exe
    return out


@pytest.mark.parametrize("variant", ["h200", "bi100-emu64"])
@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_sanitizer_clean(drivers, variant, tool):
    r = subprocess.run([_sanitizer(), "--tool", tool, "--error-exitcode", "9", str(drivers[variant])],
                       capture_output=True, text=True, timeout=300)
    text = r.stdout + r.stderr
    clean = "ERROR SUMMARY: 0 errors" in text if tool == "memcheck" else "(0 errors, 0 warnings)" in text
    assert r.returncode == 0 and clean, text[-4000:]
