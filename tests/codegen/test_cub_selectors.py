"""CCCL 3.5's policy selectors (`include/muh/cub/tune/<family>.cuh`, muh/codegen/cxx/cub_tune.py): written only
for a spec whose toolchains say `cccl = "3.5"` (no hubs then; the bundled specs say nothing and keep their hubs),
and, compiled with nvcc against the CCCL 3.5.0 headers of the nvidia-cuda-cccl wheel, equal to CUB 3.5's own
selector on every reduce, histogram and for_each case of CUB's case list the spec covers, at every compute
capability of its ladder; a spec with other values gives another policy (the check can fail), and the
convenience entries run CUB's kernels templated on muh's selector (DeviceReduce::Sum's,
DeviceHistogram::HistogramEven's and DeviceFor::ForEachN's environment paths)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muh.check import cub_truth, parity
from muh.codegen.base import BuildContext
from muh.codegen.cxx import cub_hub, cub_tune, tuning
from muh.derive import derive
from muh.schema import load

ROOT = Path(__file__).resolve().parents[2]
TOOLCHAIN = 'toolchain { cuda = "13.0"'
#: Compute capabilities of no hardware in specs/nvidia.muh (major x 10 + minor).
OFF_LADDER = (75, 89, 120)


def nvidia35() -> str:
    """specs/nvidia.muh (whose reduce policies are CUB's) with every toolchain naming CCCL 3.5."""
    text = (ROOT / "specs" / "nvidia.muh").read_text()
    assert text.count(TOOLCHAIN) == 4
    return text.replace(TOOLCHAIN, TOOLCHAIN + '  cccl = "3.5"')


#: One sm_90 card (CUB's 48 KiB and warps) whose reduce policy sets threads and items only, not CUB's 256 x 16.
OTHER = """muh 1
hardware sm90 {
  vendor = nvidia
  compute_capability = 90
  sm_count = 132
  warp_size = 32
  smem_per_block = 48 KiB
  cub_parity = true
  arch = hopper
  toolchain { cuda = "13.0"  cccl = "3.5"  arch = "sm_90" }
}
algorithm reduce on sm90 {
  types = [float32]
  policy default { threads = 128  items = 8 }
}
"""


def ctx_of(text: str, name: str) -> BuildContext:
    spec = load(text, name)
    return BuildContext(spec, derive(spec))


def write(ctx: BuildContext, root: Path) -> dict[str, str]:
    """The spec's tuning headers and selectors under ``root`` (path -> content)."""
    files = {f.path: f.content for f in tuning.emit(ctx) if f.path.endswith(".cuh")}
    files.update({f.path: f.content for f in cub_tune.emit(ctx)})
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    return files


def compile_unit(nvcc: str, cccl: Path, root: Path, source: str) -> subprocess.CompletedProcess:
    """nvcc, C++17, sm_90, compile only (no GPU): the CCCL 3.5 headers first on the include path."""
    (root / "t.cu").write_text(source)
    return subprocess.run(
        [nvcc, "-std=c++17", "-arch=sm_90", "-I", str(cccl), "-I", str(root / "include"), "-c", "t.cu", "-o", "t.o"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )


def object_symbols(root: Path) -> str:
    """The demangled symbols of the unit compile_unit built (``nm -C t.o``), checked to be CCCL 3.5.0's build."""
    nm = shutil.which("nm")
    assert nm, "nm (binutils) is needed to read the object's symbols"
    symbols = subprocess.run([nm, "-C", str(root / "t.o")], capture_output=True, text=True, check=True).stdout
    assert "_V_300500_" in symbols, "not compiled against CCCL 3.5.0"
    return symbols


def other_spec(family: str, policy: str) -> str:
    """OTHER's sm_90 card with one float32 algorithm of ``family`` whose default policy is ``policy``."""
    return (
        OTHER.split("algorithm")[0]
        + f"algorithm {family} on sm90 {{\n  types = [float32]\n  policy default {{ {policy} }}\n}}\n"
    )


def differs_and_equality_fails(nvcc, cccl35, tmp_path, head: str, differs: str, label: str) -> None:
    """``head + differs`` (static_asserts that muh's policy ``Muh`` is not CUB's ``Cub`` at ``cc``) compiles, and
    ``static_assert(Muh{}(cc) == Cub{}(cc), label)`` then fails to compile, naming ``label``: the equality check
    of the proofs can fail."""
    proc = compile_unit(nvcc, cccl35, tmp_path, head + differs)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    same = f'static_assert(Muh{{}}(cc) == Cub{{}}(cc), "{label}");\n'
    proc = compile_unit(nvcc, cccl35, tmp_path, head + same)
    assert proc.returncode != 0
    assert label in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-4000:]


def test_only_a_cccl35_spec_gets_selectors_and_it_gets_no_hubs():
    plain = ctx_of((ROOT / "specs" / "nvidia.muh").read_text(), "specs/nvidia.muh")
    assert plain.spec.cccl == "3.0"
    assert cub_tune.emit(plain) == [] and "reduce" in cub_hub.hub_families(plain)
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    assert ctx.spec.cccl == "3.5"
    assert cub_hub.emit(ctx) == []
    files = {f.path: f.content for f in cub_tune.emit(ctx)}
    assert sorted(files) == [
        "include/muh/cub/tune/adjacent_difference.cuh",
        "include/muh/cub/tune/batch_memcpy.cuh",
        "include/muh/cub/tune/common.cuh",
        "include/muh/cub/tune/for_each.cuh",
        "include/muh/cub/tune/histogram.cuh",
        "include/muh/cub/tune/merge.cuh",
        "include/muh/cub/tune/merge_sort.cuh",
        "include/muh/cub/tune/partition.cuh",
        "include/muh/cub/tune/radix_sort.cuh",
        "include/muh/cub/tune/radix_sort_pairs.cuh",
        "include/muh/cub/tune/reduce.cuh",
        "include/muh/cub/tune/reduce_by_key.cuh",
        "include/muh/cub/tune/rle_encode.cuh",
        "include/muh/cub/tune/rle_non_trivial_runs.cuh",
        "include/muh/cub/tune/scan.cuh",
        "include/muh/cub/tune/scan_by_key.cuh",
        "include/muh/cub/tune/segmented_radix_sort.cuh",
        "include/muh/cub/tune/segmented_reduce.cuh",
        "include/muh/cub/tune/segmented_sort.cuh",
        "include/muh/cub/tune/select_flagged.cuh",
        "include/muh/cub/tune/select_if.cuh",
        "include/muh/cub/tune/three_way_partition.cuh",
        "include/muh/cub/tune/transform.cuh",
        "include/muh/cub/tune/unique.cuh",
        "include/muh/cub/tune/unique_by_key.cuh",
    ]
    text = files["include/muh/cub/tune/reduce.cuh"]
    # the ladder: one rung per compute capability of the spec's hardware, newest first
    assert re.findall(r"return (\d+);", text) == ["1000", "900", "860", "800"]
    assert "::cuda::execution::tune(" in text


def _sum_calls() -> str:
    return (
        "cudaError_t f32(const float* in, float* out, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::reduce_sum(in, out, n, s);\n}\n"
        "cudaError_t f64(const double* in, double* out, long long n) {\n"
        "  return muh::cub::tune::reduce::sum(in, out, n);\n}\n"
    )


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_selector_equals_cub_35_on_every_reduce_case_and_the_env_path_runs_it(nvcc, cccl35, tmp_path):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm == "reduce"]
    assert cases and not gaps
    assert sorted({p.cc for p in cases}) == [r.cc for r in cub_hub.chain(ctx.derived.of("reduce"))]
    structs = "".join(
        f"struct alignas({a}) {n} {{ char bytes[{s}]; }};\n" for n, s, a in cub_truth.struct_shapes(cases)
    )
    asserts = "".join(
        f'static_assert(same<{p.cxx_type}, {p.cxx_offset}, {p.cxx_op}>({p.cc // 10}), "{parity.case_name(p)}");\n'
        for p in cases
    )
    # devices between and beyond the spec's hardware take the rung below (the oldest below them all), as
    # CUB's own selector does for reduce: sm_75, sm_89, sm_120 run sm80's, sm86's and sm100's policies
    calls = sorted({(p.cxx_type, p.cxx_offset, p.cxx_op) for p in cases})
    asserts += "".join(
        f'static_assert(same<{t}, {o}, {op}>({cc}), "reduce cc {cc} {t} {op} {o}");\n'
        for t, o, op in calls
        for cc in OFF_LADDER
    )
    source = (
        '#include "muh/cub/tune/reduce.cuh"\n#include <cstdint>\n'
        f"namespace muh_probe {{\n{structs}}}\n"
        "template <class T, class O, class Op>\nconstexpr bool same(int cc) {\n"
        "  return muh::cub::tune::reduce::policy_selector<T, O, Op>{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::reduce::policy_selector_from_types<T, O, Op>{}(::cuda::compute_capability{cc});\n}\n"
        + asserts
        + _sum_calls()
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    # DeviceReduce::Sum's environment path instantiated CUB 3.5's kernels on muh's selector, for each call's types
    symbols = object_symbols(tmp_path)
    stubs = [line for line in symbols.splitlines() if "__device_stub" in line]
    for accum, offset in (("float", "unsigned int"), ("double", "unsigned long long")):
        mine = f"muh::cub::tune::reduce::policy_selector<{accum}, {offset}, cuda::std::__4::plus<void> >"
        for kernel in ("DeviceReduceKernel", "DeviceReduceSingleTileKernel"):
            assert any(kernel in s and mine.replace(" >", ">") in s.replace(" >", ">") for s in stubs), (kernel, mine)
    assert "policy_selector_from_types" not in "".join(stubs), "a kernel ran on CUB's own selector"


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    ctx = ctx_of(OTHER, "other.muh")
    write(ctx, tmp_path)
    head = (
        '#include "muh/cub/tune/reduce.cuh"\n'
        "using Muh = muh::cub::tune::reduce::policy_selector<float, unsigned, ::cuda::std::plus<>>;\n"
        "using Cub = ::cub::detail::reduce::policy_selector_from_types<float, unsigned, ::cuda::std::plus<>>;\n"
        "constexpr auto cc = ::cuda::compute_capability{90};\n"
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).multi_tile.threads_per_block == 128 && Muh{}(cc).multi_tile.items_per_thread == 8);\n"
        "static_assert(Cub{}(cc).multi_tile.threads_per_block == 256);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).multi_tile.vec_size == Cub{}(cc).multi_tile.vec_size);\n"
        "static_assert(Muh{}(cc).multi_tile.reduce_algorithm == Cub{}(cc).multi_tile.reduce_algorithm);\n"
        "static_assert(Muh{}(cc).single_tile.load_modifier == Cub{}(cc).single_tile.load_modifier);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "reduce sm90 float32")


# ---- histogram (DeviceHistogram: cub::HistogramPolicy, one flat struct) ----------------------------------


def _histogram_calls() -> str:
    return (
        "cudaError_t h8(void* t, size_t& b, const unsigned char* in, int* out, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::histogram_even(t, b, in, out, 257, 0, 256, n, s);\n}\n"
        "cudaError_t hf(void* t, size_t& b, const float* in, int* out, int n) {\n"
        "  return muh::cub::tune::histogram::even(t, b, in, out, 65, 0.0f, 1.0f, n);\n}\n"
    )


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_histogram_selector_equals_cub_35_on_every_case_and_the_env_path_runs_it(nvcc, cccl35, tmp_path):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm == "histogram"]
    assert cases and not [p for p, _ in gaps if p.algorithm == "histogram"]
    assert sorted({p.cc for p in cases}) == [r.cc for r in cub_hub.chain(ctx.derived.of("histogram"))]
    # CUB's cases are DeviceHistogram::HistogramEven's, one channel, int counters (its 3.0 table's hub)
    asserts = "".join(f'static_assert(same<{p.cxx_type}>({p.cc // 10}), "{parity.case_name(p)}");\n' for p in cases)
    asserts += "".join(
        f'static_assert(same<{t}>({cc}), "histogram cc {cc} {t}");\n'
        for t in sorted({p.cxx_type for p in cases})
        for cc in OFF_LADDER
    )
    source = (
        '#include "muh/cub/tune/histogram.cuh"\n#include <cstdint>\n'
        "template <class T>\nconstexpr bool same(int cc) {\n"
        "  return muh::cub::tune::histogram::policy_selector<T, int, 1, 1, true>{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::histogram::policy_selector_from_types<T, int, 1, 1, true>{}("
        "::cuda::compute_capability{cc});\n}\n" + asserts + _histogram_calls()
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    symbols = object_symbols(tmp_path)
    stubs = [line.replace(" >", ">") for line in symbols.splitlines() if "__device_stub" in line]
    for sample in ("unsigned char", "float"):
        mine = f"muh::cub::tune::histogram::policy_selector<{sample}, int, 1, 1, true>"
        for kernel in ("DeviceHistogramInitKernel", "DeviceHistogramSweepKernel"):
            assert any(kernel in s and mine in s for s in stubs), (kernel, mine)
    assert "policy_selector_from_types" not in "".join(stubs), "a kernel ran on CUB's own selector"


#: One sm_90 card whose histogram policy sets threads and pixels only, not CUB's 384 x 16 (sm_90, 4-byte samples).
OTHER_HISTOGRAM = other_spec("histogram", "threads = 256  pixels_per_thread = 8")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_histogram_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    ctx = ctx_of(OTHER_HISTOGRAM, "other_histogram.muh")
    write(ctx, tmp_path)
    head = (
        '#include "muh/cub/tune/histogram.cuh"\n'
        "using Muh = muh::cub::tune::histogram::policy_selector<float, int, 1, 1, true>;\n"
        "using Cub = ::cub::detail::histogram::policy_selector_from_types<float, int, 1, 1, true>;\n"
        "constexpr auto cc = ::cuda::compute_capability{90};\n"
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).threads_per_block == 256 && Muh{}(cc).pixels_per_thread == 8);\n"
        "static_assert(Cub{}(cc).threads_per_block == 384);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).load_modifier == Cub{}(cc).load_modifier);\n"
        "static_assert(Muh{}(cc).rle_compress == Cub{}(cc).rle_compress);\n"
        "static_assert(Muh{}(cc).init_kernel_pdl_trigger_max_bins == Cub{}(cc).init_kernel_pdl_trigger_max_bins);\n"
        "// several active channels: CUB's own policy\n"
        "static_assert(muh::cub::tune::histogram::policy_selector<float, int, 4, 3, true>{}(cc)\n"
        "    == ::cub::detail::histogram::policy_selector_from_types<float, int, 4, 3, true>{}(cc));\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "histogram sm90 float32")


# ---- for_each (DeviceFor: cub::ForPolicy, one selector for every call) ----------------------------------


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_for_each_selector_equals_cub_35_on_every_case_and_the_env_path_runs_it(nvcc, cccl35, tmp_path):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm == "for_each"]
    assert cases and not [p for p, _ in gaps if p.algorithm == "for_each"]
    assert sorted({p.cc for p in cases}) == [r.cc for r in cub_hub.chain(ctx.derived.of("for_each"))]
    # CUB's selector takes no types: every case of a compute capability asks the same question
    asserts = "".join(f'static_assert(same({p.cc // 10}), "{parity.case_name(p)}");\n' for p in cases)
    asserts += "".join(f'static_assert(same({cc}), "for_each cc {cc}");\n' for cc in OFF_LADDER)
    source = (
        '#include "muh/cub/tune/for_each.cuh"\n'
        "constexpr bool same(int cc) {\n"
        "  return muh::cub::tune::for_each::policy_selector{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::for_each::policy_selector{}(::cuda::compute_capability{cc});\n}\n"
        + asserts
        + "struct twice { __device__ void operator()(float& x) const { x *= 2; } };\n"
        "cudaError_t f(float* d, int n, cudaStream_t s) { return muh::cub::tune::for_each_n(d, n, twice{}, s); }\n"
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    symbols = object_symbols(tmp_path)
    stubs = [line for line in symbols.splitlines() if "__device_stub" in line and "for_each" in line]
    assert any("muh::cub::tune::for_each::policy_selector" in s for s in stubs), stubs
    assert not any("cub::detail::for_each::policy_selector" in s.replace("muh::cub::tune::", "") for s in stubs), (
        "a kernel ran on CUB's own selector"
    )


#: One sm_90 card whose for_each policy is 128 threads x 4 items, not CUB's 256 x 2.
OTHER_FOR_EACH = other_spec("for_each", "threads = 128  items = 4")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_for_each_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    ctx = ctx_of(OTHER_FOR_EACH, "other_for_each.muh")
    write(ctx, tmp_path)
    head = (
        '#include "muh/cub/tune/for_each.cuh"\n'
        "using Muh = muh::cub::tune::for_each::policy_selector;\n"
        "using Cub = ::cub::detail::for_each::policy_selector;\n"
        "constexpr auto cc = ::cuda::compute_capability{90};\n"
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).threads_per_block == 128 && Muh{}(cc).items_per_thread == 4);\n"
        "static_assert(Cub{}(cc).threads_per_block == 256 && Cub{}(cc).items_per_thread == 2);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "for_each sm90")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_every_entry_links_into_a_program(nvcc, cccl35, tmp_path):
    """bench/cub_selectors.py's programs (every convenience entry of the nvidia and h200 selectors against CUB's
    own, tests/gpu/test_cub_selectors_gpu.py runs them on a GPU) compile and link here: CUB also asks a selector
    at run time, so a function a selector calls must be defined, not only declared (a compile-only unit misses
    that)."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cub_selectors.py"), "gen", str(tmp_path), "--cccl", str(cccl35)],
        check=True,
        cwd=ROOT,
    )
    env = {**os.environ, "PATH": f"{Path(nvcc).parent}:{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["bash", str(tmp_path / "build.sh")], capture_output=True, text=True, env=env, timeout=900)
    for program in ("sel_nvidia", "sel_h200"):
        log = (tmp_path / f"{program}.build.log").read_text()
        assert (tmp_path / program).is_file(), f"{program}: {proc.stdout}\n{log[-4000:]}"
        families = re.findall(r"#define MUH_SEL_(\w+) 1", (tmp_path / f"{program}.cu").read_text())
        assert "REDUCE" in families and "SCAN" in families, families
