"""The histogram family without a GPU: its policy from both bundled specs, the numbers its kernel is
instantiated with (and their rules), and its static CUDA compiling on its own for both profiles."""
from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from muh import families
from muh.codegen.kernels import emitter, presets


def _params(cfg) -> str:
    return dict(emitter.generate(cfg))["include/muh/kernels/params.cuh"]


def test_policies_come_from_the_specs():
    h = presets.h200().histogram
    assert (h["float32"].threads, h["float32"].items) == (384, 16)  # specs/h200.muh: CUB's sm_90 default
    assert (h["uint8"].threads, h["uint8"].items) == (768, 12)
    assert (h["uint16"].threads, h["uint16"].items) == (960, 10)
    b = presets.bi100().histogram
    assert set(b) == set(families.get("histogram").dtypes)
    assert {(p.threads, p.items) for p in b.values()} == {(384, 16)}


def test_params_say_their_rule():
    text = _params(presets.h200())
    block = re.search(r"namespace histogram_uint8 \{(.*?)\}", text, re.S).group(1)
    # 12 one-byte samples per thread at vec 4: 4-byte loads (not 16-byte ones: 12 is no multiple of 16)
    assert re.search(r"constexpr int kVec = 4;  // largest power of two <= min\(vec, 16 B / sample size\) "
                     r"dividing items \(vec=4, items=12, element_size=1\)", block)
    u16 = re.search(r"namespace histogram_uint16 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kVec = 2;" in u16  # 10 two-byte samples: pairs
    f32 = re.search(r"namespace histogram_float32 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kVec = 4;" in f32
    assert "constexpr int kSmemBins = 12288;  // smem_per_block / 4 B" in f32


def test_api_has_the_family_entry_point():
    api = dict(emitter.generate(presets.h200()))["include/muh/kernels/api.h"]
    assert "int muh_histogram_even(int dtype, const void* samples, long long n, int bins, double lower, " in api
    from muh.runtime.library import signatures

    assert "muh_histogram_even" in signatures()


def _lowest_arch(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout.split()
    nums = sorted(int(a.split("_")[1]) for a in out if a.startswith("compute_") and a.split("_")[1].isdigit())
    return f"sm_{nums[0]}"


@pytest.mark.nvcc
def test_static_cuda_compiles_standalone_for_both_profiles(nvcc, tmp_path):
    """Every family's static .cuh compiles on its own (CUDA toolkit headers only): the H200 profile
    (C++17, sm_90) and the BI-V100 profile (C++14, the lowest arch this nvcc knows). The generated
    sources that instantiate them compile in test_kernels_nvcc (warp 32 native and warp 64)."""
    from importlib.resources import files as res

    statics = [s for r in families.records() for s in r.static]
    assert "histogram.cuh" in statics
    jobs = []
    for name in statics:
        src = tmp_path / name
        src.write_text(res("muh.codegen.kernels").joinpath("templates", name).read_text())
        for std, arch in (("c++17", "sm_90"), ("c++14", _lowest_arch(nvcc))):
            jobs.append([nvcc, "-x", "cu", f"-std={std}", f"-arch={arch}", "-c", str(src), "-o",
                         str(tmp_path / f"{name}.{std}.o")])
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
    failed = [" ".join(c) + "\n" + r.stderr[-2000:] for c, r in zip(jobs, results) if r.returncode]
    assert not failed, "\n".join(failed)
