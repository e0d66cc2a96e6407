"""The convenience entries of the CUB policy hubs (`muh::cub::<family>::run`, …): every hub has one, and each
entry hands CUB's dispatch muh's hub — the kernels it instantiates are CUB's kernels templated on
`muh::cub::<family>::policy_hub…`, never on CUB's own `cub::detail::<family>::policy_hub` (so the policy CUB
selects at run time is the one the hub's chain holds, which `cub_dispatch` proves equal to CUB's)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from muh.check import cub_dispatch as cd
from muh.codegen.base import BuildContext
from muh.codegen.cxx import cub_hub
from muh.derive import derive
from muh.schema import load

ROOT = Path(__file__).resolve().parents[2]
#: Entry names of the hubs whose entry is not `run` (reduce.cuh.j2, scan.cuh.j2).
OTHER_ENTRIES = ("sum", "reduce_sum", "segmented_reduce_sum", "inclusive_sum")

#: The entries added for issue 41's leftovers, one call each with CUB's element types (int32 keys and values),
#: and CUB 3.0.1's kernels each must instantiate (cub/device/dispatch/*.cuh, kernels/*.cuh) — with the CUB
#: hub's namespace for the negative check.
CALLS = {
    "adjacent_difference": (
        "run(t, b, in, out, n)",
        ("DeviceAdjacentDifferenceDifferenceKernel",),
        "adjacent_difference",
    ),
    "batch_memcpy": (
        "run(t, b, src, dst, sizes, n)",
        ("BatchMemcpyKernel", "MultiBlockBatchMemcpyKernel"),
        "batch_memcpy",
    ),
    "for_each": ("run(out, n, Bump{})", ("static_kernel",), "for_each"),
    "merge": (
        "run(t, b, in, n, in + n, n, out)",
        ("device_merge_kernel", "device_partition_merge_path_kernel"),
        "merge",
    ),
    "rle_encode": ("run(t, b, in, out, out2, count, int(n))", ("DeviceReduceByKeyKernel",), "rle::encode"),
    "rle_non_trivial_runs": (
        "run(t, b, in, out, out2, count, int(n))",
        ("DeviceRleSweepKernel",),
        "rle::non_trivial_runs",
    ),
    "three_way_partition": (
        "run(t, b, in, out, out2, out3, count, n, Below{0}, Below{10})",
        ("DeviceThreeWayPartitionKernel",),
        "three_way_partition",
    ),
}


def ctx_of(name: str) -> BuildContext:
    spec = load((ROOT / "specs" / name).read_text(), f"specs/{name}")
    return BuildContext(spec, derive(spec))


def test_every_hub_has_a_convenience_entry():
    """specs/nvidia.muh renders a hub for every family CUB tunes; each header defines an entry that calls
    CUB's dispatch with it."""
    ctx = ctx_of("nvidia.muh")
    files = {f.path: f.content for f in cub_hub.emit(ctx)}
    missing = []
    for family in cub_hub.hub_families(ctx):
        text = files[f"include/muh/cub/{family}.cuh"]
        names = re.findall(r"^cudaError_t (\w+)\(", text, re.M)
        if not names or not set(names) <= {"run", *OTHER_ENTRIES}:
            missing.append((family, names))
    assert missing == []


def _unit() -> str:
    includes = "".join(f'#include "muh/cub/{f}.cuh"\n' for f in CALLS)
    calls = "".join(f"  e = e ? e : muh::cub::{f}::{call};\n" for f, (call, _, _) in CALLS.items())
    return (
        includes + "struct Below { int v; __host__ __device__ bool operator()(int x) const { return x < v; } };\n"
        "struct Bump { __device__ void operator()(int& x) const { x += 1; } };\n"
        "cudaError_t entries(void* t, size_t& b, int* in, int* out, int* out2, int* out3, int* count,\n"
        "                    const void** src, void** dst, const size_t* sizes, long long n) {\n"
        "  cudaError_t e = cudaSuccess;\n" + calls + "  return e;\n}\n"
    )


@pytest.mark.nvcc
def test_each_new_entry_instantiates_cub_s_kernels_on_muh_s_hub(nvcc, tmp_path):
    """One translation unit (PTX only: no ptxas) calls every entry; the object's kernel symbols name muh's
    hub as the kernels' policy chain, and no kernel is templated on CUB's own hub."""
    nm = shutil.which("nm")
    assert nm, "nm (binutils) is needed to read the object's symbols"
    ctx = ctx_of("nvidia.muh")
    assert set(CALLS) <= set(cub_hub.hub_families(ctx))
    for f in cd.hub_files(ctx):
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
    (tmp_path / "t.cu").write_text(_unit())
    proc = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-x",
            "cu",
            "-c",
            str(tmp_path / "t.cu"),
            "-o",
            str(tmp_path / "t.o"),
            "-gencode",
            "arch=compute_90,code=compute_90",
            "-I",
            str(tmp_path / "include"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    symbols = subprocess.run([nm, "-C", str(tmp_path / "t.o")], capture_output=True, text=True, check=True).stdout
    kernels = [line.split(" ", 2)[2] for line in symbols.splitlines() if " t void " in line or " T void " in line]
    for family, (_, names, cub_ns) in CALLS.items():
        for name in names:
            mine = [k for k in kernels if re.search(rf"::{name}<muh::cub::{family}::policy_hub", k)]
            assert mine, (family, name)
        assert f"detail::{cub_ns}::policy_hub" not in symbols, family
