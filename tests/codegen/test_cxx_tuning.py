"""The C++ tuning headers: shape, determinism, and compilation with nvcc (batched, in parallel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muh.check import tuning_headers as th
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import tuning
from muh.derive import derive
from muh.schema import load

ROOT = Path(__file__).resolve().parents[2]
SM90_LINE = "delay = fixed(ns = 576 ns"  # scan, sm90, float64.plus: unique in the spec


def ctx_of(name: str, text: str | None = None, file: str | None = None) -> BuildContext:
    path = ROOT / "specs" / f"{name}.muh"
    spec = load(text if text is not None else path.read_text(), file or f"specs/{name}.muh")
    return BuildContext(spec, derive(spec))


RADIX = """muh 1
hardware bi100 {
  vendor = iluvatar
  arch = ivcore10
  sm_count = 16
  warp_size = 64
  smem_per_block = 48 KiB
  toolchain { cuda = "10.2"  cxx = 14  compiler = clang  arch = "ivcore10" }
}
algorithm radix_sort on bi100 {
  types = [int32, float64]
  policy default {
    threads = 256
    items = 16
    radix_bits = 7
    onesweep { threads = 384  items = 21  radix_bits = 8  rank = match }
    downsweep { threads = 512  items = 23 }
  }
  policy float64 { threads = 128 }
}
"""


def headers(ctx: BuildContext) -> dict[str, str]:
    return {f.path: f.content for f in tuning.emit(ctx)}


@pytest.mark.parametrize("name", ["baseline", "nvidia"])
def test_headers_shape(name):
    ctx = ctx_of(name)
    files = headers(ctx)
    families = sorted({a.family for a in ctx.spec.algorithms.values()})
    assert sorted(files) == sorted(
        [f"include/muh/tuning/tuning_{f}.cuh" for f in families] + ["include/muh/tuning/common.cuh"]
    )
    for path, text in files.items():
        assert text.splitlines()[0] == ctx.header("//"), path
        assert "inline constexpr" not in text and "if constexpr" not in text
        assert all(len(line) <= 120 for line in text.splitlines()), (path, max(map(len, text.splitlines())))
        assert not re.search(r"\{\s*\.\w+\s*=", text), "designated initialisers are C++20"
        assert "compute_capability" not in text.replace("compute capability", "")
        assert "/work/" not in text and "/tmp/" not in text
        if path.endswith("common.cuh"):
            continue
        assert "MUH_TUNING_NAMESPACE_BEGIN" in text and "struct policy_selector" in text
        assert "MUH_HOST_DEVICE constexpr policy operator()(int arch) const" in text
        assert "#  pragma GCC system_header" in text
        assert "static_assert(" in text and "max_threads_per_block" in text
        # CUB's own policies (cub_parity) need not be warp multiples; other hardware's must be
        assert ("warp size" in text) == (name == "baseline")
        assert "return policy{};" not in text  # never a zero policy
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s+(-?\d+|\w+::\w+|delay_policy\{.*\}),", line):
                assert re.search(r"// \w+: \S", line) or re.match(r"\s+// ", lines[i - 1]), (
                    f"value without provenance: {line}"
                )


def test_sub_policies_are_nested_structs():
    text = headers(ctx_of("radix", text=RADIX))["include/muh/tuning/tuning_radix_sort.cuh"]
    assert "struct onesweep_policy" in text and "onesweep_policy onesweep;" in text
    assert "{ // onesweep" in text and ".onesweep.threads\n                  % hardware::bi100.warp_size == 0" in text
    assert "radix_rank_algorithm::match" in text


def test_headers_are_deterministic_and_path_independent():
    a = headers(ctx_of("nvidia"))
    b = headers(ctx_of("nvidia", file=str(ROOT / "specs" / "nvidia.muh")))
    assert a == b


def test_target_has_its_own_branch_and_measurements_are_cited():
    nvidia = headers(ctx_of("nvidia"))["include/muh/tuning/tuning_scan.cuh"]
    order = [m.group(1) for m in re.finditer(r"if \(arch >= hardware::(\w+)\.arch\)", nvidia)]
    assert order == ["sm100", "sm90", "sm86", "sm80"]
    comments = re.sub(r"\n\s*// ", " ", nvidia)  # a long provenance comment wraps over lines
    assert "ipt_23.tpb_416.ns_772.dcid_5.l2w_710.trp_1.ld_0 1.089468 1.015581 1.085630 1.264583" in comments
    base = headers(ctx_of("baseline"))["include/muh/tuning/tuning_scan.cuh"]
    assert "if (arch == hardware::bi100.arch)" in base
    assert "the tile must fit smem_per_block (49152 B)" in base


# ---- compilation: one batch per spec, units compiled in parallel ---------------------------------


def _patched(files: list[GeneratedFile], path_end: str, old: str, new: str) -> list[GeneratedFile]:
    out = []
    for f in files:
        if f.path.endswith(path_end):
            assert old in f.content, (path_end, old)
            f = GeneratedFile(f.path, f.content.replace(old, new, 1))
        out.append(f)
    return out


@pytest.fixture(scope="module")
def nvidia_results(nvcc):
    good = ctx_of("nvidia")
    bad = ctx_of(
        "nvidia", text=(ROOT / "specs" / "nvidia.muh").read_text().replace(SM90_LINE, SM90_LINE.replace("576", "580"))
    )
    g_files, b_files = th.header_files(good), th.header_files(bad)
    g_units = th.units_for(good, g_files)
    assert {u.name for u in g_units} == {"headers_cxx17", "cub_equal"}
    bad_unit = th.Unit("cub_equal_bad", th.equality_source(bad, b_files), 17, tuple(b_files))
    res = th.compile_units(g_files, g_units + [bad_unit])  # one batch, compiled in parallel
    return {k: v for k, v in res.items() if k != "cub_equal_bad"}, {"cub_equal": res["cub_equal_bad"]}


@pytest.fixture(scope="module")
def baseline_results(nvcc):
    ctx = ctx_of("baseline")
    files = th.header_files(ctx)
    src = th.include_all_source(files)
    units = th.units_for(ctx, files) + [th.Unit("headers_cxx17", src, 17)]
    # Negative controls: a thread count off the 64-wide warp, a tile larger than 48 KiB.
    warp = _patched(
        files,
        "tuning_scan.cuh",
        "reg_bound_threads(384, 22, element_size(type), 49152, 64)",
        "reg_bound_threads(352, 22, element_size(type), 49152, 64)",
    )
    smem = _patched(
        files, "tuning_scan.cuh", "reg_bound_items(22, element_size(type))", "reg_bound_items(100, element_size(type))"
    )
    # ... and a literal no `long long` holds (issue 42: a `2^70` bucket bound compiled, with a warning only)
    literal = _patched(
        files,
        "tuning_scan.cuh",
        "reg_bound_items(22, element_size(type))",
        "reg_bound_items(22 + 0 * (1180591620717411303424LL > 0), element_size(type))",
    )
    units += [
        th.Unit("bad_warp", src, 14, tuple(warp)),
        th.Unit("bad_smem", src, 14, tuple(smem)),
        th.Unit("bad_literal", src, 14, tuple(literal)),
    ]
    radix = th.header_files(ctx_of("radix", text=RADIX))
    units.append(th.Unit("radix_cxx14", th.include_all_source(radix), 14, tuple(radix)))
    return th.compile_units(files, units)


@pytest.mark.nvcc
def test_nvidia_headers_compile_and_equal_cub(nvidia_results):
    good, _ = nvidia_results
    for name, (ok, text) in good.items():
        assert ok, f"{name}:\n{text}"


@pytest.mark.nvcc
def test_changed_value_breaks_static_assert_against_cub(nvidia_results):
    _, bad = nvidia_results
    ok, text = bad["cub_equal"]
    assert not ok
    assert "scan sm90 float64 plus offset32: delay differs from CUB's" in text


@pytest.mark.nvcc
def test_baseline_headers_compile_as_cxx14_and_cxx17(baseline_results):
    assert baseline_results["headers_cxx14"][0], baseline_results["headers_cxx14"][1]
    assert baseline_results["headers_cxx17"][0], baseline_results["headers_cxx17"][1]
    assert baseline_results["radix_cxx14"][0], baseline_results["radix_cxx14"][1]


@pytest.mark.nvcc
def test_negative_controls_trip_static_asserts(baseline_results):
    ok, text = baseline_results["bad_warp"]
    assert not ok and "threads must be a multiple of the warp size (64)" in text
    ok, text = baseline_results["bad_smem"]
    assert not ok and "the tile must fit smem_per_block (49152 B)" in text


@pytest.mark.nvcc
def test_a_warning_fails_the_headers_check(baseline_results):
    """Warnings are errors: an overflowing literal is only a warning to a C++ compiler, and the tuning
    headers declare themselves system headers (no warnings shown) unless the check says otherwise."""
    ok, text = baseline_results["bad_literal"]
    assert not ok and "integer constant is too large" in text


@pytest.mark.nvcc
def test_check_is_registered(cli, nvcc):
    code, out, err = cli("check", ROOT / "specs" / "baseline.muh", "--only", "tuning_headers", cwd=ROOT)
    assert code == 0, out + err
    assert "tuning_headers" in out and "pass" in out


@pytest.mark.nvcc
def test_selectors_run_in_device_code_without_relaxed_constexpr(nvcc, tmp_path):
    """A __global__ kernel calls the selectors (at run time and in a constant expression); nvcc
    compiles it without --expt-relaxed-constexpr, and the element type a spec never lists gets a policy."""
    import subprocess

    files = th.header_files(ctx_of("nvidia"))
    for f in files:
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
    src = tmp_path / "kernel.cu"
    src.write_text("""#include "muh/tuning/tuning_scan.cuh"
#include "muh/tuning/tuning_radix_sort.cuh"
namespace mt = muh::tuning;
__global__ void pick(int* out, int arch)
{
  constexpr mt::scan::policy p = mt::scan::policy_selector{mt::element::float32, mt::operation::max, 32}(900);
  static_assert(p.threads == 128 && p.items == 24, "scan with max on sm_90: CUB's sm_90 tuning");
  constexpr mt::scan::policy h = mt::scan::policy_selector{mt::element::float16, mt::operation::plus, 32}(900);
  static_assert(h.threads > 0 && h.items > 0, "a type the spec does not list gets a fallback, not zeros");
  constexpr mt::scan::policy r = mt::scan::policy_selector{mt::element::pair16, mt::operation::mul, 32}(900);
  static_assert(r.threads == 128 && r.items == 3, "a 16-byte record: MemBoundScaling<128, 15, T> of CUB");
  out[0] = mt::scan::policy_selector{mt::element::float64, mt::operation::plus, 64}(arch).threads;
  out[1] = mt::radix_sort::policy_selector{mt::element::uint8, mt::operation::plus, 64}(arch).onesweep.items;
}
""")
    proc = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            "-I",
            str(tmp_path / "include"),
            "-c",
            str(src),
            "-o",
            str(tmp_path / "kernel.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ["baseline", "nvidia"])
def test_headers_are_plain_cxx14_for_a_host_compiler(name, tmp_path):
    """The headers are pure C++14: a strict host compiler accepts them without warnings."""
    import shutil
    import subprocess

    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no host C++ compiler (g++ or clang++)")
    files = th.header_files(ctx_of(name))
    for f in files:
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
    src = tmp_path / "all.cpp"
    src.write_text(th.include_all_source(files))
    proc = subprocess.run(
        [
            cxx,
            "-std=c++14",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Wshadow",
            "-Werror",
            "-I",
            str(tmp_path / "include"),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
