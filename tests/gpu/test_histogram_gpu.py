"""histogram (HistogramEven) on the GPU: the H200's kernels natively, the BI-V100's (its policy,
warp 64) emulated on the 32-lane GPU, and the H200's with 4 sub-histograms for every sample type
(1-byte samples otherwise get 32, others 1), against a CPU reference of CUB's bin arithmetic and
torch.histc, exactly. Builds only the histogram (the other families' sources compile empty)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import NO_CUDA, requires_cuda  # noqa: E402

pytestmark = requires_cuda
VARIANTS = ("h200", "bi100-emu64", "h200-sub4")
INT_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32")


def configs() -> dict:
    """The kernel configs of VARIANTS, histogram only (bench/results/histogram-2026-12-01/histogram_prebuild.py
    builds them too)."""
    from bench import presets

    only = lambda cfg: replace(cfg, policies={"histogram": cfg.of("histogram")})  # noqa: E731
    h200 = only(presets.h200())
    sub4 = {d: replace(p, sub_histograms=4) for d, p in h200.of("histogram").items()}
    return {
        "h200": h200,
        "bi100-emu64": only(presets.bi100()).emulated(64),
        "h200-sub4": replace(h200.with_policies("histogram", sub4), name="h200-sub4"),
    }


@pytest.fixture(scope="module")
def hist_kernels(tmp_path_factory):
    if NO_CUDA:
        pytest.skip(f"GPU test: {NO_CUDA}")
    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    major, minor = torch.cuda.get_device_capability()
    root = tmp_path_factory.mktemp("hist")
    out = {}
    for name, cfg in configs().items():
        emitter.write(cfg, root / name)
        out[name] = Kernels.from_library(build.build_capi(root / name, arch=f"sm_{major}{minor}"), families.api())
    return out


def reference(x, bins: int, lower, upper):
    """CUB HistogramEven's bin of every sample, on the CPU (numpy, the sample type's arithmetic)."""
    import numpy as np

    a = x.cpu().numpy()
    if a.dtype.kind == "f":
        t = a.dtype.type
        lo, hi = t(lower), t(upper)
        scale = t(t(bins) / t(hi - lo))
        ok = (a >= lo) & (a < hi)
        b = ((a[ok] - lo) * scale).astype(np.int64)  # float arithmetic in the sample type, then truncation
    else:
        v = a.astype(np.int64)
        ok = (v >= lower) & (v < upper)
        b = (v[ok] - lower) * bins // (upper - lower)
    b = np.minimum(b, bins - 1)
    return np.bincount(b, minlength=bins).astype(np.int32)


def _check(kern, x, bins, lower, upper, what):
    import numpy as np

    from muh.families import calls

    got = calls.histogram_even(x, bins, lower, upper, kernels=kern).cpu().numpy()
    want = reference(x, bins, lower, upper)
    bad = np.nonzero(got != want)[0]
    assert not len(bad), f"{what}: {len(bad)} bins differ, first {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"
    return got


@pytest.mark.parametrize("variant", VARIANTS)
def test_float_samples_match_cpu_and_histc(hist_kernels, variant):
    import gpu_helpers as refs
    import torch

    k = hist_kernels[variant]
    for dtype in ("float32", "float64"):
        for n in (0, 1, 1000, 384 * 16 - 1, (1 << 20) + 3):
            # bin centres of 256 bins over [-2, 2) (exact in binary): no sample near an edge
            idx = torch.randint(-20, 276, (n,), device="cuda", generator=refs.gen())
            x = ((idx.double() + 0.5) / 64 - 2).to(refs.dt(dtype))
            if n > 10:
                x[3] = float("nan")
                x[5] = 2.0  # upper level: not counted (CUB); torch.histc would count it
            got = _check(k, x, 256, -2.0, 2.0, f"{variant} {dtype} n={n}")
            inside = x[(x >= -2) & (x < 2)]
            histc = torch.histc(inside.double(), 256, -2.0, 2.0).to(torch.int32).cpu().numpy()
            assert (got == histc).all(), f"{variant} {dtype} n={n}: differs from torch.histc"
        # arbitrary values: CUB's arithmetic (reciprocal in the sample type), not only bin centres
        x = torch.randn((1 << 20) + 5, device="cuda", generator=refs.gen(), dtype=torch.float64).to(refs.dt(dtype))
        _check(k, x, 100, -1.5, 2.5, f"{variant} {dtype} normal")
        _check(k, x[1:], 100, -1.5, 2.5, f"{variant} {dtype} unaligned")  # scalar loads


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_samples_match_cpu_and_histc(hist_kernels, variant, dtype):
    import numpy as np
    import torch

    k = hist_kernels[variant]
    info = np.iinfo(dtype)
    lo = max(int(info.min), -100)
    hi = lo + 4 * ((min(int(info.max), 156) - lo) // 4)  # a range of whole 4-wide bins
    rng = np.random.default_rng(int.from_bytes(__import__("os").urandom(4), "little"))
    for n in (1, 777, (1 << 20) + 7):
        a = rng.integers(max(int(info.min), lo - 40), min(int(info.max), hi + 40) + 1, n).astype(dtype)
        x = torch.from_numpy(a).cuda()
        got = _check(k, x, 64, lo, hi, f"{variant} {dtype} n={n} 64 bins")  # range/bins not an integer
        even = _check(k, x, (hi - lo) // 4, lo, hi, f"{variant} {dtype} n={n} width 4")
        inside = torch.from_numpy(a[(a.astype(np.int64) >= lo) & (a.astype(np.int64) < hi)].astype(np.float64))
        histc = torch.histc(inside.cuda(), (hi - lo) // 4, lo, hi).to(torch.int32).cpu().numpy()
        assert (even == histc).all(), f"{variant} {dtype} n={n}: differs from torch.histc"
        assert got.sum() == ((a.astype(np.int64) >= lo) & (a.astype(np.int64) < hi)).sum()


@pytest.mark.parametrize("variant", VARIANTS)
def test_more_bins_than_shared_memory_and_bad_arguments(hist_kernels, variant):
    import gpu_helpers as refs
    import torch

    from muh.families import calls
    from muh.runtime import MuhRuntimeError

    k = hist_kernels[variant]
    x = torch.rand((1 << 20) + 1, device="cuda", generator=refs.gen())
    _check(k, x, 50000, 0.0, 1.0, f"{variant} 50000 bins (global-memory counters)")
    _check(k, x, 5000, 0.0, 1.0, f"{variant} 5000 bins (4 copies do not fit: one)")
    with pytest.raises(ValueError, match="lower"):
        calls.histogram_even(x, 10, 1.0, 1.0, kernels=k)
    with pytest.raises(ValueError, match="bins"):
        calls.histogram_even(x, 0, 0.0, 1.0, kernels=k)
    xi = torch.zeros(10, dtype=torch.int32, device="cuda")
    with pytest.raises(MuhRuntimeError, match="must be integers"):
        calls.histogram_even(xi, 4, 0.5, 10.0, kernels=k)
    # bytes over [0, 256) in 256 bins (CUB's int levels for uint8 samples): every value its own bin
    xb = torch.arange(256, dtype=torch.uint8, device="cuda").repeat(1000)
    got = calls.histogram_even(xb, 256, 0, 256, kernels=k)
    assert bool((got == 1000).all()), f"{variant}: uint8 over [0, 256)"
    with pytest.raises(TypeError, match="not supported"):
        calls.histogram_even(x.half(), 4, 0.0, 1.0, kernels=k)
