"""CCCL 3.5's policy selectors for transform, batch_memcpy, adjacent_difference and segmented_reduce
(`include/muh/cub/tune/<family>.cuh`, muh/codegen/cxx/cub_tune.py, muh.families.cub.SELECTORS): compiled with nvcc
against the CCCL 3.5.0 headers of the nvidia-cuda-cccl wheel, on every case of CUB's case list for the family
(`parity.coverage`) and at compute capabilities of no hardware of the spec (OFF_LADDER), muh's selector equals CUB
3.5's own where 3.5 kept CUB 3.0.1's values (specs/nvidia.muh holds 3.0.1's) and differs, field by field as named in
TRANSFORM_RETUNED, where 3.5 retuned them (DeviceTransform only); the convenience entries run CUB 3.5's kernels
templated on muh's selector; a spec with other values gives another policy (the equality check can fail) while the
fields it leaves unset stay CUB's."""

from __future__ import annotations

import pytest
from test_cub_selectors import (
    OFF_LADDER,
    compile_unit,
    ctx_of,
    differs_and_equality_fails,
    nvidia35,
    object_symbols,
    other_spec,
    write,
)

from muh.check import cub_truth, parity
from muh.codegen.cxx import cub_hub

pytestmark = [pytest.mark.nvcc, pytest.mark.cccl35, pytest.mark.slow]

TUNING = "cub/device/dispatch/tuning/tuning_transform.cuh"

#: Where CUB 3.5's DeviceTransform selector answers otherwise than CUB 3.0.1 (whose values specs/nvidia.muh holds),
#: for a call of one `T*` input into a `T*` output, by compute capability (x 10; 89 and 120 are off the ladder and
#: run sm86's and sm100's policies): field -> (muh's value: 3.0.1's, CUB 3.5's, where 3.5 says so). 3.0.1 ran its
#: sm_30 policy (12 KiB, prefetch) up to sm_89 and 48 KiB from sm_90 on (its tuning_transform.cuh,
#: arch_to_min_bytes_in_flight and policy300/900/1000). sm_90 kept 48 KiB, ublkcp and 256 threads.
_SM80 = {
    "min_bytes_in_flight": ("12 * 1024", "16 * 1024", f"{TUNING}:319-321 (cc_to_min_bytes_in_flight, 'A100')"),
    "algorithm": (
        "::cub::TransformAlgorithm::prefetch",
        "::cub::TransformAlgorithm::ldgsts",
        f"{TUNING}:456-494 (the cc >= 8.0 branch: ldgsts, new in 3.5)",
    ),
}
_SM100 = {"min_bytes_in_flight": ("48 * 1024", "64 * 1024", f"{TUNING}:311-314 (cc_to_min_bytes_in_flight, 'B200')")}
#: Below sm_80 (7.5 runs muh's oldest rung, sm80's prefetch) 3.5 runs its vectorized kernel for value types of a
#: power-of-two size (the fallback branch), where 3.0.1 prefetched.
_SM75_POW2 = {
    "algorithm": (
        "::cub::TransformAlgorithm::prefetch",
        "::cub::TransformAlgorithm::vectorized",
        f"{TUNING}:496-506 (fallback branch: vectorized for power-of-two value sizes)",
    )
}
#: TransformPolicy's members in the order of the bit mask `diff` returns.
TRANSFORM_FIELDS = ("min_bytes_in_flight", "algorithm", "prefetch", "vectorized", "async_copy")


def transform_retuned(cc: int, size: int) -> dict[str, tuple[str, str, str]]:
    """The fields of CUB 3.5's TransformPolicy that differ from 3.0.1's at compute capability ``cc`` (x 10) for
    values of ``size`` bytes (TRANSFORM_RETUNED's reading of tuning_transform.cuh)."""
    if 80 <= cc < 90:
        return _SM80
    if cc >= 100:
        return _SM100
    if cc < 80 and size & (size - 1) == 0:
        return _SM75_POW2
    return {}


def _size(cxx_type: str, shapes: dict[str, int]) -> int:
    builtin = {"float": 4, "double": 8}
    if cxx_type in builtin:
        return builtin[cxx_type]
    if cxx_type.startswith("muh_probe::"):
        return shapes[cxx_type.removeprefix("muh_probe::")]
    bits = "".join(ch for ch in cxx_type if ch.isdigit())
    return int(bits) // 8


def _cases(ctx, family: str):
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm == family]
    assert cases and not [p for p, _ in gaps if p.algorithm == family]
    assert sorted({p.cc for p in cases}) == [r.cc for r in cub_hub.chain(ctx.derived.of(family))]
    return cases


def _transform_asserts(cases) -> tuple[str, int, int]:
    """One assertion per transform case and off-ladder call: equal where 3.5 kept 3.0.1's values, else exactly the
    retuned fields differ, each with muh's (3.0.1's) and CUB 3.5's value. Returns (source, equal, retuned)."""
    shapes = {n: s for n, s, _ in cub_truth.struct_shapes(cases)}
    calls = [(p.cc // 10, p.cxx_type, parity.case_name(p)) for p in cases]
    calls += [(cc, t, f"transform cc {cc} {t}") for t in sorted({p.cxx_type for p in cases}) for cc in OFF_LADDER]
    out, equal, retuned = [], 0, 0
    for cc, t, name in calls:
        fields = transform_retuned(cc, _size(t, shapes))
        if not fields:
            equal += 1
            out.append(f'static_assert(tr_muh<{t}>({cc}) == tr_cub<{t}>({cc}), "{name}");\n')
            continue
        retuned += 1
        mask = sum(1 << TRANSFORM_FIELDS.index(f) for f in fields)
        out.append(f'static_assert(tr_diff<{t}>({cc}) == {mask}, "{name}: 3.5 retuned {", ".join(fields)}");\n')
        for field, (mine, cub, where) in fields.items():
            out.append(
                f"static_assert(tr_muh<{t}>({cc}).{field} == {mine} && tr_cub<{t}>({cc}).{field} == {cub},\n"
                f'              "{name}: {field} 3.0.1 {mine}, 3.5 {cub}: {where}");\n'
            )
    return "".join(out), equal, retuned


TRANSFORM_HELPERS = """
template <class T>
using TrMuh = muh::cub::tune::transform::policy_selector<false, true, ::cuda::std::tuple<T*>, T*>;
template <class T>
using TrCub = ::cub::detail::transform::policy_selector_from_types<false, true, ::cuda::std::tuple<T*>, T*>;
template <class T>
constexpr ::cub::TransformPolicy tr_muh(int cc) { return TrMuh<T>{}(::cuda::compute_capability{cc}); }
template <class T>
constexpr ::cub::TransformPolicy tr_cub(int cc) { return TrCub<T>{}(::cuda::compute_capability{cc}); }
template <class T>
constexpr int tr_diff(int cc) {
  const auto m = tr_muh<T>(cc);
  const auto c = tr_cub<T>(cc);
  return (m.min_bytes_in_flight != c.min_bytes_in_flight) | (m.algorithm != c.algorithm) << 1
       | (m.prefetch != c.prefetch) << 2 | (m.vectorized != c.vectorized) << 3 | (m.async_copy != c.async_copy) << 4;
}
"""

ENTRIES = """
struct negate { __device__ float operator()(float x) const { return -x; } };
cudaError_t tr(const float* in, float* out, int n, cudaStream_t s) {
  return muh::cub::tune::transform_unary(in, out, n, negate{}, s);
}
cudaError_t bm(const void* const* in, void* const* out, const ::cuda::std::size_t* sizes, long long n, cudaStream_t s) {
  return muh::cub::tune::memcpy_batched(in, out, sizes, n, s);
}
cudaError_t ad(const float* in, float* out, int n, cudaStream_t s) {
  return muh::cub::tune::subtract_left_copy(in, out, n, ::cuda::std::minus<>{}, s);
}
cudaError_t sr(const float* in, float* out, long long segments, const int* begin, const int* end, cudaStream_t s) {
  return muh::cub::tune::segmented_reduce_sum(in, out, segments, begin, end, s);
}
"""


def test_selectors_equal_cub_35_where_it_kept_301s_values_differ_where_it_retuned_and_the_env_paths_run_them(
    nvcc, cccl35, tmp_path
):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    tr_cases = _cases(ctx, "transform")
    ad_cases = _cases(ctx, "adjacent_difference")
    bm_cases = _cases(ctx, "batch_memcpy")
    sr_cases = _cases(ctx, "segmented_reduce")
    assert (len(tr_cases), len(ad_cases), len(bm_cases), len(sr_cases)) == (52, 52, 4, 384)
    structs = "".join(
        f"struct alignas({a}) {n} {{ char bytes[{s}]; }};\n"
        for n, s, a in cub_truth.struct_shapes(tr_cases + ad_cases + sr_cases)
    )
    transform, equal, retuned = _transform_asserts(tr_cases)
    # 3.5 kept sm_90's values (13 types) and the 12-byte record's prefetch below sm_80; every other call differs
    assert (equal, retuned) == (14, 77)
    # adjacent difference: one policy since sm_50 in 3.0.1 and 3.5 alike; the copying call (MayAlias = false)
    adjacent = "".join(
        f'static_assert(ad_same<{p.cxx_type}>({p.cc // 10}), "{parity.case_name(p)}");\n' for p in ad_cases
    )
    adjacent += "".join(
        f'static_assert(ad_same<{t}>({cc}), "adjacent_difference cc {cc} {t}");\n'
        for t in sorted({p.cxx_type for p in ad_cases})
        for cc in OFF_LADDER
    )
    # batch memcpy: CUB's selector takes no types; every case of a compute capability asks the same question
    batch = "".join(f'static_assert(bm_same({p.cc // 10}), "{parity.case_name(p)}");\n' for p in bm_cases)
    batch += "".join(f'static_assert(bm_same({cc}), "batch_memcpy cc {cc}");\n' for cc in OFF_LADDER)
    # segmented reduce: CUB 3.5's large-segment pass is reduce's multi-tile pass, whose 3.0.1 values 3.5 keeps;
    # its warp- and thread-per-segment passes are CUB's in muh's selector
    segmented = "".join(
        f'static_assert(sr_same<{p.cxx_type}, {p.cxx_offset}, {p.cxx_op}>({p.cc // 10}), "{parity.case_name(p)}");\n'
        for p in sr_cases
    )
    segmented += "".join(
        f'static_assert(sr_same<{t}, {o}, {op}>({cc}), "segmented_reduce cc {cc} {t} {op} {o}");\n'
        for t, o, op in sorted({(p.cxx_type, p.cxx_offset, p.cxx_op) for p in sr_cases})
        for cc in OFF_LADDER
    )
    source = (
        '#include "muh/cub/tune/transform.cuh"\n#include "muh/cub/tune/batch_memcpy.cuh"\n'
        '#include "muh/cub/tune/adjacent_difference.cuh"\n#include "muh/cub/tune/segmented_reduce.cuh"\n'
        "#include <cstdint>\n"
        f"namespace muh_probe {{\n{structs}}}\n"
        + TRANSFORM_HELPERS
        + "template <class T>\nconstexpr bool ad_same(int cc) {\n"
        "  return muh::cub::tune::adjacent_difference::policy_selector<T*, false>{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::adjacent_difference::policy_selector_from_types<T*, false>{}("
        "::cuda::compute_capability{cc});\n}\n"
        "constexpr bool bm_same(int cc) {\n"
        "  return muh::cub::tune::batch_memcpy::policy_selector{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::batch_memcpy::policy_selector{}(::cuda::compute_capability{cc});\n}\n"
        "template <class T, class O, class Op>\nconstexpr bool sr_same(int cc) {\n"
        "  return muh::cub::tune::segmented_reduce::policy_selector<T, O, Op>{}(::cuda::compute_capability{cc})\n"
        "      == ::cub::detail::segmented_reduce::policy_selector_from_types<T, O, Op>{}("
        "::cuda::compute_capability{cc});\n}\n" + transform + adjacent + batch + segmented + ENTRIES
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    # each entry's environment path instantiated CUB 3.5's kernels on muh's selector, none on CUB's own
    symbols = object_symbols(tmp_path)
    stubs = [line.replace(" >", ">") for line in symbols.splitlines() if "__device_stub" in line]
    for kernel, mine in (
        (
            "transform_kernel",
            "muh::cub::tune::transform::policy_selector<false, true, cuda::std::__4::tuple<float const*>",
        ),
        ("BatchMemcpyKernel", "muh::cub::tune::batch_memcpy::policy_selector"),
        ("MultiBlockBatchMemcpyKernel", "muh::cub::tune::batch_memcpy::policy_selector"),
        (
            "DeviceAdjacentDifferenceDifferenceKernel",
            "muh::cub::tune::adjacent_difference::policy_selector<float const*, false>",
        ),
        (
            "DeviceSegmentedReduceKernel",
            "muh::cub::tune::segmented_reduce::policy_selector<float, int, cuda::std::__4::plus<void>>",
        ),
    ):
        assert any(kernel in s and mine in s for s in stubs), (kernel, mine)
    theirs = [s.replace("muh::cub::tune::", "") for s in stubs]
    assert not any("policy_selector_from_types" in s for s in theirs), "a kernel ran on CUB's own selector"
    assert not any("cub::detail::batch_memcpy::policy_selector" in s for s in theirs), (
        "a kernel ran on CUB's own selector"
    )


# ---- other values: another policy, the unset fields CUB's, and the equality check fails ----------------------------


def _head(family: str, muh: str, cub: str) -> str:
    return (
        f'#include "muh/cub/tune/{family}.cuh"\n'
        f"using Muh = {muh};\nusing Cub = {cub};\n"
        "constexpr auto cc = ::cuda::compute_capability{90};\n"
    )


#: One sm_90 card whose transform prefetches 16 KiB in flight with 128 threads, not CUB's bulk copy of 48 KiB by 256.
OTHER_TRANSFORM = other_spec("transform", "threads = 128  bytes_in_flight = 16 KiB  algorithm = prefetch")


def test_transform_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    write(ctx_of(OTHER_TRANSFORM, "other_transform.muh"), tmp_path)
    head = _head(
        "transform",
        "muh::cub::tune::transform::policy_selector<false, true, ::cuda::std::tuple<float*>, float*>",
        "::cub::detail::transform::policy_selector_from_types<false, true, ::cuda::std::tuple<float*>, float*>",
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).min_bytes_in_flight == 16 * 1024 && Cub{}(cc).min_bytes_in_flight == 48 * 1024);\n"
        "static_assert(Muh{}(cc).algorithm == ::cub::TransformAlgorithm::prefetch);\n"
        "static_assert(Cub{}(cc).algorithm == ::cub::TransformAlgorithm::ublkcp);\n"
        "// muh's threads are the block size of the kernel that runs; the others' sub-policies stay CUB's\n"
        "static_assert(Muh{}(cc).prefetch.threads_per_block == 128 && Cub{}(cc).prefetch.threads_per_block == 256);\n"
        "static_assert(Muh{}(cc).async_copy == Cub{}(cc).async_copy && Muh{}(cc).vectorized == Cub{}(cc).vectorized);\n"
        "static_assert(Muh{}(cc).prefetch.max_items_per_thread == Cub{}(cc).prefetch.max_items_per_thread);\n"
        "// two inputs: CUB's own policy\n"
        "using Two = ::cuda::std::tuple<const float*, const float*>;\n"
        "static_assert(muh::cub::tune::transform::policy_selector<false, true, Two, float*>{}(cc)\n"
        "    == ::cub::detail::transform::policy_selector_from_types<false, true, Two, float*>{}(cc));\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "transform sm90 float32")


#: One sm_90 card whose batch memcpy copies small buffers with 256 threads and large ones with 128 x 64 bytes (the
#: same 8 KiB tile), not CUB's 128 and 256 x 32.
OTHER_BATCH_MEMCPY = other_spec(
    "batch_memcpy", "small { threads = 256 }  large { threads = 128  bytes_per_thread = 64 }"
)


def test_batch_memcpy_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    write(ctx_of(OTHER_BATCH_MEMCPY, "other_batch_memcpy.muh"), tmp_path)
    head = _head(
        "batch_memcpy", "muh::cub::tune::batch_memcpy::policy_selector", "::cub::detail::batch_memcpy::policy_selector"
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "constexpr auto m = Muh{}(cc).lookback;\nconstexpr auto c = Cub{}(cc).lookback;\n"
        "static_assert(m.small_buffer.threads_per_block == 256 && c.small_buffer.threads_per_block == 128);\n"
        "static_assert(m.large_buffer.threads_per_block == 128 && m.large_buffer.bytes_per_thread == 64);\n"
        "static_assert(c.large_buffer.threads_per_block == 256 && c.large_buffer.bytes_per_thread == 32);\n"
        "// fields the spec leaves unset, the look-back delays and the algorithm are CUB's\n"
        "static_assert(m.small_buffer.buffers_per_thread == c.small_buffer.buffers_per_thread);\n"
        "static_assert(m.small_buffer.block_level_tile_size == c.small_buffer.block_level_tile_size);\n"
        "static_assert(m.small_buffer.buffer_lookback_delay == c.small_buffer.buffer_lookback_delay);\n"
        "static_assert(m.small_buffer.block_lookback_delay == c.small_buffer.block_lookback_delay);\n"
        "static_assert(Muh{}(cc).algorithm == Cub{}(cc).algorithm);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "batch_memcpy sm90")


#: One sm_90 card whose adjacent difference runs 256 threads x 4 items, not CUB's 128 x 7.
OTHER_ADJACENT_DIFFERENCE = other_spec("adjacent_difference", "threads = 256  items = 4")


def test_adjacent_difference_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    write(ctx_of(OTHER_ADJACENT_DIFFERENCE, "other_adjacent_difference.muh"), tmp_path)
    head = _head(
        "adjacent_difference",
        "muh::cub::tune::adjacent_difference::policy_selector<const float*, false>",
        "::cub::detail::adjacent_difference::policy_selector_from_types<const float*, false>",
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).threads_per_block == 256 && Muh{}(cc).items_per_thread == 4);\n"
        "static_assert(Cub{}(cc).threads_per_block == 128 && Cub{}(cc).items_per_thread == 7);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).load_algorithm == Cub{}(cc).load_algorithm);\n"
        "static_assert(Muh{}(cc).load_modifier == Cub{}(cc).load_modifier);\n"
        "static_assert(Muh{}(cc).store_algorithm == Cub{}(cc).store_algorithm);\n"
        "// in place (MayAlias): muh's threads and items, CUB's load modifier (LOAD_CA)\n"
        "using InPlace = muh::cub::tune::adjacent_difference::policy_selector<float*, true>;\n"
        "using CubInPlace = ::cub::detail::adjacent_difference::policy_selector_from_types<float*, true>;\n"
        "static_assert(InPlace{}(cc).threads_per_block == 256);\n"
        "static_assert(InPlace{}(cc).load_modifier == ::cub::LOAD_CA);\n"
        "static_assert(CubInPlace{}(cc).load_modifier == ::cub::LOAD_CA);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "adjacent_difference sm90 float32")


#: One sm_90 card whose segmented reduce's large-segment pass is 128 threads x 8 items, not CUB's 256 x 16.
OTHER_SEGMENTED_REDUCE = other_spec("segmented_reduce", "threads = 128  items = 8")


def test_segmented_reduce_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    write(ctx_of(OTHER_SEGMENTED_REDUCE, "other_segmented_reduce.muh"), tmp_path)
    head = _head(
        "segmented_reduce",
        "muh::cub::tune::segmented_reduce::policy_selector<float, int, ::cuda::std::plus<>>",
        "::cub::detail::segmented_reduce::policy_selector_from_types<float, int, ::cuda::std::plus<>>",
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).large_reduce.threads_per_block == 128);\n"
        "static_assert(Muh{}(cc).large_reduce.items_per_thread == 8);\n"
        "static_assert(Cub{}(cc).large_reduce.threads_per_block == 256);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).large_reduce.vec_size == Cub{}(cc).large_reduce.vec_size);\n"
        "static_assert(Muh{}(cc).large_reduce.reduce_algorithm == Cub{}(cc).large_reduce.reduce_algorithm);\n"
        "static_assert(Muh{}(cc).large_reduce.load_modifier == Cub{}(cc).large_reduce.load_modifier);\n"
        "// the warp- and thread-per-segment passes are CUB's (from CUB's own large-segment pass, 256 threads)\n"
        "static_assert(Muh{}(cc).medium_reduce == Cub{}(cc).medium_reduce);\n"
        "static_assert(Muh{}(cc).small_reduce == Cub{}(cc).small_reduce);\n"
        "static_assert(Muh{}(cc).medium_reduce.threads_per_block == 256);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "segmented_reduce sm90 float32")
