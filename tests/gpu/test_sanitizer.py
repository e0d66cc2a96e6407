"""compute-sanitizer memcheck and racecheck over every kernel, on small sizes.

The emulated warp-64 build's scan is racechecked separately: its look-back runs warp collectives in
logical warp 0 alone (named barrier 1 over 64 threads) while the other warps wait at
__syncthreads(). `racecheck_probe.cu` holds that shape in a dozen lines, race-free by the PTX
memory model; if racecheck flags the probe too, a scan report of the same shape is the tool's
(see docs/warp-emulation.md) and the scan test is an expected failure with the counts; a report on
the scan while the probe stays clean fails. Full sanitizer output goes to MUH_SANITIZER_LOG_DIR
when set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]

DRIVER = Path(__file__).with_name("sanitize_driver.cu")
PROBE = Path(__file__).with_name("racecheck_probe.cu")
PROBE_VARIANTS = ("plain", "subset", "subset-diverged", "subset-aligned", "all-warps", "warp-layer")


def _sanitizer() -> str:
    exe = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not Path(exe).exists():
        pytest.skip("compute-sanitizer is not installed")
    return exe


def _sanitize(tool: str, exe, *args: str, log: str) -> tuple[int, str, int]:
    """(return code, output, errors reported) of one sanitizer run; the output is kept when asked."""
    r = subprocess.run(
        [_sanitizer(), "--tool", tool, "--error-exitcode", "9", str(exe), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    text = r.stdout + r.stderr
    if os.environ.get("MUH_SANITIZER_LOG_DIR"):
        d = Path(os.environ["MUH_SANITIZER_LOG_DIR"])
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{log}.log").write_text(text)
    m = (
        re.search(r"\((\d+) errors?, (\d+) warnings?\)", text)
        if tool == "racecheck"
        else re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    )
    errors = int(m.group(1)) + (int(m.group(2)) if tool == "racecheck" else 0) if m else -1
    return r.returncode, text, errors


@pytest.fixture(scope="module")
def drivers(generated, tmp_path_factory):
    import torch

    from muh.runtime import build

    major, minor = torch.cuda.get_device_capability()
    arch = f"-arch=sm_{major}{minor}"
    out = {}
    for variant in ("h200", "bi100-emu64"):
        gen = generated[variant]
        exe = tmp_path_factory.mktemp("san") / f"driver-{variant}"
        cmd = [
            build.nvcc(),
            "-O2",
            "-lineinfo",
            "-std=c++17",
            arch,
            "-I",
            str(gen / "include"),
            "-o",
            str(exe),
            str(DRIVER),
            *map(str, build.sources(gen)),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out[variant] = exe
    exe = tmp_path_factory.mktemp("san") / "racecheck-probe"
    r = subprocess.run(
        [
            build.nvcc(),
            "-O2",
            "-lineinfo",
            "-std=c++17",
            arch,
            "-I",
            str(generated["bi100-emu64"] / "include"),
            "-o",
            str(exe),
            str(PROBE),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    out["probe"] = exe
    return out


@pytest.mark.parametrize(
    "variant,tool,which",
    [
        ("h200", "memcheck", "all"),
        ("h200", "racecheck", "all"),
        ("bi100-emu64", "memcheck", "all"),
        ("bi100-emu64", "racecheck", "noscan"),
    ],
)
def test_sanitizer_clean(drivers, variant, tool, which):
    rc, text, errors = _sanitize(tool, drivers[variant], which, log=f"{tool}-{variant}-{which}")
    assert rc == 0 and errors == 0, text[-4000:]


def test_racecheck_named_barrier_probe(drivers):
    """The experiment: racecheck's verdict on race-free shapes of a partial named barrier.

    Asserts what must hold whatever racecheck says: every variant reads the right values on the
    hardware, and the control (no named barrier) is racecheck-clean. The counts are printed
    (and logged) for docs/warp-emulation.md.
    """
    rows = []
    for v in PROBE_VARIANTS:
        r = subprocess.run([str(drivers["probe"]), v], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"probe {v} read wrong values on the hardware: {r.stdout}{r.stderr}"
        rc, text, errors = _sanitize("racecheck", drivers["probe"], v, log=f"racecheck-probe-{v}")
        rows.append((v, errors))
    print("racecheck on race-free probes:", ", ".join(f"{v}: {e} error(s)" for v, e in rows))
    assert dict(rows)["plain"] == 0, rows


def test_racecheck_emu64_scan(drivers):
    rc, text, errors = _sanitize("racecheck", drivers["bi100-emu64"], "scan", log="racecheck-bi100-emu64-scan")
    if rc == 0 and errors == 0:
        return
    _, _, plain = _sanitize("racecheck", drivers["probe"], "plain", log="racecheck-probe-plain")
    _, _, subset = _sanitize("racecheck", drivers["probe"], "subset", log="racecheck-probe-subset")
    _, _, layer = _sanitize("racecheck", drivers["probe"], "warp-layer", log="racecheck-probe-warp-layer")
    if plain == 0 and subset > 0 and layer > 0:
        pytest.xfail(
            f"racecheck reports {errors} hazard(s) on the emulated scan, and {subset} / {layer} on the "
            f"race-free probes `subset` / `warp-layer` (0 on the control): its model of a named barrier "
            f"used by part of the block, not a race in the scan (docs/warp-emulation.md)"
        )
    pytest.fail(
        f"racecheck: {errors} hazard(s) in the emulated scan while the probes give plain={plain}, "
        f"subset={subset}, warp-layer={layer}:\n{text[-4000:]}"
    )
