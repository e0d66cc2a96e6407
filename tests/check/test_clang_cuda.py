"""`clang_cuda` and `warp_smem`: the BI-V100 profile's kernels compile with upstream clang 16 in CUDA
mode, and none orders shared memory by a warp barrier alone (the CoreX clang's measured miscompile).

The clang tests need clang-16 and the CUDA root (``python -m muh.check.clang_cuda --fetch``, fetched
here when missing): on CI a skip is a failure (tests/conftest.py; .ci/run installs both).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from muh.check import clang_cuda, run_checks, warp_smem
from muh.codegen.base import BuildContext
from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"
# nvcc accepts this (warning #20011-D, exit 0); clang rejects it: a host function reached from device code
HOST_FROM_DEVICE = """
int muh_host_only(int x) { return x + 1; }
__host__ __device__ inline int muh_hd(int x) { return muh_host_only(x); }
__global__ void muh_k(int* p) { p[0] = muh_hd(p[0]); }
"""


def ctx_of(path: Path) -> BuildContext:
    loaded = load_file(path)
    return BuildContext(loaded.spec, loaded.derived)


@pytest.fixture(scope="module")
def clang():
    """(clang, CUDA root): the root is assembled into muh's cache when missing (skips only when that
    cannot be done; on CI a skip is a failure)."""
    try:
        cc = clang_cuda.find_clang()
    except clang_cuda.Missing as e:
        pytest.skip(str(e))
    try:
        root = clang_cuda.cuda_root()
    except clang_cuda.Missing:
        try:
            root = clang_cuda.fetch()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError, StopIteration) as e:
            pytest.skip(f"the CUDA wheels for clang are not downloadable: {e}")
    return cc, root


@pytest.mark.clang
def test_the_baseline_compiles_with_clang_16_in_cuda_mode(clang):
    (res,) = run_checks(ctx_of(BASELINE), ["clang_cuda"])
    assert res.status == "pass", "\n".join([res.detail, *res.cases])
    units = {line.split(": ")[0] for line in res.cases[1:]}
    for src in (
        "kernels/ops.cu",
        "kernels/common.cu",
        "kernels/reduce.cu",
        "kernels/scan.cu",
        "kernels/topk.cu",
        "muh_kernels/build_info.cu",
        "all_headers.cu",
    ):
        assert {f"{src} cuda-device-only", f"{src} cuda-host-only"} <= units, (src, units)
    assert res.cases[0].startswith("Debian clang version 16") or "clang version 16" in res.cases[0]


@pytest.mark.clang
def test_what_clang_rejects_fails_with_the_compilers_line(clang):
    cc, root = clang
    ((_, hw, files),) = clang_cuda.folders(ctx_of(BASELINE))
    files = {**files, "kernels/common.cu": files["kernels/common.cu"] + HOST_FROM_DEVICE}
    results = clang_cuda.compile_folder(cc, root, files, hw.toolchain.cxx, hw.warp_size)
    bad = {u.name: text for u, ok, text in results if not ok}
    assert list(bad) == ["kernels/common.cu cuda-device-only"], list(bad)
    assert (
        "reference to __host__ function 'muh_host_only' in __host__ __device__ function"
        in bad["kernels/common.cu cuda-device-only"]
    )


@pytest.mark.clang
def test_the_header_unit_covers_every_generated_header(clang):
    ((_, _, files),) = clang_cuda.folders(ctx_of(BASELINE))
    units, headers = clang_cuda.sources(files)
    assert "include/muh/ops/ops.cuh" in headers and "include/muh/warp.cuh" in headers
    assert headers == sorted(p for p in files if p.startswith("include/") and p.endswith((".cuh", ".h")))
    assert not any(u.startswith("kernels/bindings/") for u in units)  # host C++ against PyTorch: not CUDA


def test_a_missing_clang_or_cuda_root_is_skipped_with_the_fix(monkeypatch, tmp_path):
    """A tool the target alone needs: `skipped: not installed` with the install line (issue 37.7: it does not
    block `muh deploy`; `muh check --strict`, what CI runs, fails it)."""
    monkeypatch.setenv("MUH_CLANG", str(tmp_path / "no-clang"))
    (res,) = run_checks(ctx_of(BASELINE), ["clang_cuda"])
    assert res.status == "skip" and res.detail.startswith("skipped: not installed: ")
    assert "apt-get install -y clang-16" in res.detail and "$MUH_CLANG" in res.detail
    monkeypatch.setenv("MUH_CLANG", "sh")  # found: the root is what is missing now
    monkeypatch.setenv("MUH_CLANG_CUDA", str(tmp_path / "empty"))
    (res,) = run_checks(ctx_of(BASELINE), ["clang_cuda"])
    assert res.status == "skip" and "-m muh.check.clang_cuda --fetch" in res.detail, res.detail
    assert "include/cuda_runtime.h" in res.detail


def test_a_spec_without_a_clang_toolchain_skips():
    for name in ("clang_cuda", "warp_smem"):
        (res,) = run_checks(ctx_of(ROOT / "specs" / "nvidia.muh"), [name])
        assert res.status == "skip" and "compiler = clang" in res.detail


def test_the_baseline_orders_no_shared_memory_by_a_warp_barrier():
    (res,) = run_checks(ctx_of(BASELINE), ["warp_smem"])
    assert res.status == "pass", res.cases
    (site,) = res.cases  # the warp layer's own barrier: no kernel calls it
    assert site.startswith("include/muh/warp.cuh:") and "warp barrier in `barrier` (0 non-volatile" in site


MISCOMPILED = """namespace muh {
template <int N>
__global__ void tree_sum(float* out) {
  __shared__ float partial[64];
  __shared__ volatile float seen[64];
  partial[threadIdx.x] = 2.0f;
  warp::barrier();
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = partial[i] + seen[i];
}
}  // namespace muh
"""


def test_the_measured_miscompile_pattern_is_found_and_volatile_passes():
    sites, bad = warp_smem.scan({"kernels/x.cu": MISCOMPILED})
    assert len(sites) == 1 and "in `tree_sum`" in sites[0]
    assert len(bad) == 1 and bad[0].startswith("kernels/x.cu:9: `partial`") and "line 7" in bad[0]
    fixed = MISCOMPILED.replace("__shared__ float partial", "__shared__ volatile float partial")
    fixed_sites, fixed_bad = warp_smem.scan({"kernels/x.cu": fixed})
    assert fixed_bad == [] and "(0 non-volatile __shared__ variable(s)" in fixed_sites[0]
    comment = MISCOMPILED.replace("  warp::barrier();", "  // warp::barrier();")
    assert warp_smem.scan({"kernels/x.cu": comment}) == ([], [])
