"""GPU test helpers: variants, skip reasons, fresh random inputs, poisoning (no fixtures here).

Variants: the H200's own kernels (native warp 32) and the BI-V100's kernels (its policies, its
tiles) with the logical warp emulated at 64 (the card's), 16 and 128 on the 32-lane GPU, plus the
negative control (a block reduce that assumes 32 lanes) natively and emulated at 64.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest


def _no_cuda_reason() -> str | None:
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed (pip install 'muh[runtime]')"
    if not torch.cuda.is_available():
        return "no CUDA device"
    return None


NO_CUDA = _no_cuda_reason()
requires_cuda = pytest.mark.skipif(NO_CUDA is not None, reason=f"GPU test: {NO_CUDA}")

CHECKED = ("h200", "bi100-emu64", "bi100-emu16", "bi100-emu128")


def variant_configs() -> dict:
    from bench import presets

    bi = presets.bi100()
    return {
        "h200": presets.h200(),
        "bi100-native": bi,  # must refuse a 32-lane GPU at launch
        "bi100-emu64": bi.emulated(64),
        "bi100-emu16": bi.emulated(16),
        "bi100-emu128": bi.emulated(128),
        "planted-native32": replace(presets.h200(), name="planted-native32"),  # with PLANTED's bug
        "planted-emu64": bi.emulated(64),
    }


PLANTED = ("planted-native32", "planted-emu64")  # built with presets.plant_lane32_bug in the block layer


def prebuild(root, jobs: int | None = None) -> dict:
    """Generate and build every variant (C interface, content-hash cache); {name: library path}."""
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    import torch

    from muh.codegen.kernels import emitter
    from muh.runtime import build

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    cfgs = variant_configs()
    dirs = {}
    from bench import presets

    for name, cfg in cfgs.items():
        emitter.write(cfg, Path(root) / name)
        dirs[name] = Path(root) / name
        if name in PLANTED:
            block = dirs[name] / presets.BLOCK_LAYER
            block.write_text(presets.plant_lane32_bug(block.read_text()))
    per = max(1, (jobs or os.cpu_count() or 2) // len(dirs))
    with ThreadPoolExecutor(max_workers=len(dirs)) as pool:
        return dict(zip(dirs, pool.map(lambda d: build.build_capi(d, arch=arch, jobs=per), dirs.values())))


# ---- inputs and references (torch imported lazily: this module is imported on machines without it) ----

SEED = int.from_bytes(os.urandom(4), "little")  # fresh inputs every run; printed on failure
_gen = None
FLOAT = ("float32", "float64", "float16", "bfloat16")


def dt(name: str):
    import torch

    return getattr(torch, name)


def gen():
    import torch

    global _gen
    if _gen is None:
        _gen = torch.Generator(device="cuda")
        _gen.manual_seed(SEED)
    return _gen


def small_ints(n: int, dtype: str, lo: int = -8, hi: int = 9):
    """Integer-valued random data (as any dtype): sums of up to 2^28 of them stay exact in float32."""
    import torch

    return torch.randint(lo, hi, (n,), device="cuda", generator=gen(), dtype=torch.int64).to(dt(dtype))


def normal(n: int, dtype: str):
    import torch

    return torch.randn(n, device="cuda", generator=gen(), dtype=torch.float64).to(dt(dtype))


def poison(t):
    if t.dtype.is_floating_point:
        return t.fill_(float("nan"))
    return t.fill_(-7777777)


def wrap_int32(v: int) -> int:
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def same_as_cub_rows(programs, program: str) -> list[dict]:
    """Run one of bench/cub_hub.py's or bench/cub_selectors.py's CUDA programs (``programs/program``) and check
    that every case it printed says "same as CUB", its exit status is 0 and a size that fills the GPU (2^20) is
    among the cases; its JSON lines."""
    import json
    import subprocess

    exe = programs / program
    assert exe.is_file(), (programs / f"{program}.build.log").read_text()[-3000:]
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    verdicts = [r for r in rows if "status" in r]
    assert verdicts, proc.stdout + proc.stderr
    bad = [r for r in verdicts if r["status"] != "same as CUB"]
    assert not bad and proc.returncode == 0, bad or proc.stderr
    assert {r["n"] for r in verdicts} >= {1 << 20}
    return rows
