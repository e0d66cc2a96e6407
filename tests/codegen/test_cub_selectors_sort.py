"""CCCL 3.5's policy selectors of the sort families (`include/muh/cub/tune/{radix_sort,radix_sort_pairs,
segmented_sort,segmented_radix_sort,merge_sort,merge}.cuh`, muh/codegen/cxx/cub_tune.py): compiled with nvcc against
the CCCL 3.5.0 headers of the nvidia-cuda-cccl wheel, equal to CUB 3.5's own selector on every case of CUB's case
list for these families that the spec covers, at every compute capability of its ladder and at 8.9 and 12.0; below
the ladder (7.5) the families whose CUB policy changes below sm_80 differ, named; a spec with other values gives
another policy (the check can fail), and the convenience entries run CUB's kernels templated on muh's selector
(DeviceRadixSort::SortKeys/SortPairs', DeviceSegmentedSort::SortKeys', DeviceSegmentedRadixSort::SortKeys',
DeviceMergeSort::SortKeys' and DeviceMerge::MergeKeys' environment paths).

CCCL 3.5 kept CUB 3.0.1's values (specs/nvidia.muh's) for every case compared here: no retuning of these families
shows, so no case is excused."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Family:
    """One sort family's selectors as the proof asks them for a case's key type ``{t}`` and offset type ``{o}``
    (the types CUB's entry computes with), and the kernels (their names in CUB 3.5) its convenience entry must
    instantiate on muh's selector."""

    muh: str
    cub: str
    kernels: tuple[str, ...]


#: The families, each asked as its CCCL 3.5 entry asks CUB's own selector (device_radix_sort.cuh's
#: select_tuning_and_dispatch, device_segmented_sort.cuh's, dispatch_segmented_radix_sort.cuh's dispatch with
#: 32-bit segment sizes, device_merge_sort.cuh's and device_merge.cuh's dispatch_with_env_and_tuning).
FAMILIES = {
    "radix_sort": Family(
        "muh::cub::tune::radix_sort::policy_selector<{t}, ::cub::NullType, {o}>",
        "::cub::detail::radix_sort::policy_selector_from_types<{t}, ::cub::NullType, {o}>",
        ("DeviceRadixSortOnesweepKernel", "DeviceRadixSortHistogramKernel", "DeviceRadixSortSingleTileKernel"),
    ),
    # CUB's case list asks pair sorts with values of the key's type (the spec excuses the other pairs)
    "radix_sort_pairs": Family(
        "muh::cub::tune::radix_sort_pairs::policy_selector<{t}, {t}, {o}>",
        "::cub::detail::radix_sort::policy_selector_from_types<{t}, {t}, {o}>",
        ("DeviceRadixSortOnesweepKernel", "DeviceRadixSortHistogramKernel", "DeviceRadixSortSingleTileKernel"),
    ),
    "segmented_sort": Family(
        "muh::cub::tune::segmented_sort::policy_selector<{t}, ::cub::NullType>",
        "::cub::detail::segmented_sort::policy_selector_from_types<{t}, ::cub::NullType>",
        ("DeviceSegmentedSortFallbackKernel", "DeviceSegmentedSortKernelSmall", "DeviceSegmentedSortKernelLarge"),
    ),
    "segmented_radix_sort": Family(
        "muh::cub::tune::segmented_radix_sort::policy_selector<{t}, ::cub::NullType, ::cuda::std::int32_t>",
        "::cub::detail::segmented_radix_sort::policy_selector_from_types<{t}, ::cub::NullType, ::cuda::std::int32_t>",
        ("DeviceSegmentedRadixSortKernel",),
    ),
    "merge_sort": Family(
        "muh::cub::tune::merge_sort::policy_selector<{t}*>",
        "::cub::detail::merge_sort::policy_selector_from_types<{t}*>",
        ("DeviceMergeSortBlockSortKernel", "DeviceMergeSortMergeKernel"),
    ),
    "merge": Family(
        "muh::cub::tune::merge::policy_selector<{t}*, ::cub::NullType*, {t}*, ::cub::NullType*, ::cuda::std::int64_t>",
        "::cub::detail::merge::policy_selector_from_types<{t}*, ::cub::NullType*, {t}*, ::cub::NullType*, "
        "::cuda::std::int64_t>",
        ("device_merge_kernel", "device_partition_merge_path_kernel"),
    ),
}

#: Below the spec's ladder (no hardware older than sm_80): muh's selector answers its oldest rung's (sm_80)
#: values, as the 3.0 hubs' ChainedPolicy did (the fields the spec leaves unset stay CUB's for the device's own
#: compute capability). For these families CUB 3.5's own selector has another policy below sm_80 (its
#: `cc >= compute_capability{7, 0}` branches), so the equality fails at 7.5, on the field named here among others:
#: radix sort's sm_70 histogram pass (256 threads x 8 items; sm_80's 128 x 16) and onesweep pass (256 threads;
#: sm_80's 384) in tuning_radix_sort.cuh, segmented sort's sm_70 large-segment pass (19 nominal items, direct loads;
#: sm_80's 23, transposed) and sub-warp passes (direct loads, other items) in tuning_segmented_sort.cuh. The
#: other families' sm_70 and sm_80 policies are the same for these calls (equal at 7.5 as well).
BELOW_LADDER = 75
CUB_OLDER_POLICY = {
    "radix_sort": "histogram.threads_per_block",
    "radix_sort_pairs": "histogram.threads_per_block",
    "segmented_sort": "large_segment.items_per_thread",
}


def _calls() -> str:
    """One call of each convenience entry (they pass muh's selector in CUB's tuning environment)."""
    return (
        "cudaError_t rk(const float* i, float* o, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::radix_sort_keys(i, o, n, 0, 32, s);\n}\n"
        "cudaError_t rk8(const unsigned char* i, unsigned char* o, long long n) {\n"
        "  return muh::cub::tune::radix_sort::sort_keys(i, o, n);\n}\n"
        "cudaError_t rp(const int* ki, int* ko, const int* vi, int* vo, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::radix_sort_by_key(ki, ko, vi, vo, n, 0, 32, s);\n}\n"
        "cudaError_t ss(const float* i, float* o, long long n, long long m, const int* b, const int* e) {\n"
        "  return muh::cub::tune::segmented_sort_keys(i, o, n, m, b, e);\n}\n"
        "cudaError_t sr(const double* i, double* o, long long n, long long m, const int* b, const int* e) {\n"
        "  return muh::cub::tune::segmented_radix_sort_keys(i, o, n, m, b, e);\n}\n"
        "cudaError_t ms(float* k, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::merge_sort_keys(k, n, ::cuda::std::less<>{}, s);\n}\n"
        "cudaError_t mg(const int* a, long long na, const int* b, long long nb, int* o) {\n"
        "  return muh::cub::tune::merge_keys(a, na, b, nb, o);\n}\n"
    )


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_sort_selectors_equal_cub_35_on_every_case_and_the_env_paths_run_them(nvcc, cccl35, tmp_path):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm in FAMILIES]
    assert not [p for p, _ in gaps if p.algorithm in FAMILIES]
    counts = {f: sum(p.algorithm == f for p in cases) for f in FAMILIES}
    assert counts == {
        "radix_sort": 80,
        "radix_sort_pairs": 80,
        "segmented_sort": 40,
        "segmented_radix_sort": 40,
        "merge_sort": 52,
        "merge": 52,
    }, counts
    for family in FAMILIES:
        ladder = [r.cc for r in cub_hub.chain(ctx.derived.of(family))]
        assert sorted({p.cc for p in cases if p.algorithm == family}) == ladder
    structs = "".join(
        f"struct alignas({a}) {n} {{ char bytes[{s}]; }};\n" for n, s, a in cub_truth.struct_shapes(cases)
    )

    def sel(p, which: str) -> str:
        return getattr(FAMILIES[p.algorithm], which).format(t=p.cxx_type, o=p.cxx_offset)

    # every case on muh's own path (a type muh names: else CUB's policy would answer and the equality say nothing)
    asserts = "".join(
        f'static_assert(muh::cub::tune::known_v<{t}>, "muh names {t}");\n' for t in sorted({p.cxx_type for p in cases})
    )
    asserts += "".join(
        f'static_assert(same<{sel(p, "muh")}, {sel(p, "cub")}>({p.cc // 10}), "{parity.case_name(p)}");\n'
        for p in cases
    )
    calls = {(p.algorithm, p.type, p.offset): p for p in cases}
    off = 0
    for p in calls.values():
        for cc in OFF_LADDER:
            name = f"{p.algorithm} cc {cc} {p.type} offset{p.offset}"
            m, c = sel(p, "muh"), sel(p, "cub")
            if cc == BELOW_LADDER and p.algorithm in CUB_OLDER_POLICY:
                # muh's oldest rung (sm_80, equal to CUB's there); CUB's own sm_70 policy is another one
                asserts += f'static_assert(below_{p.algorithm}<{m}, {c}>({cc}, 80), "{name}: below the ladder");\n'
            else:
                asserts += f'static_assert(same<{m}, {c}>({cc}), "{name}");\n'
            off += 1
    assert len(calls) == 86 and off == 3 * len(calls)
    source = (
        "".join(f'#include "muh/cub/tune/{f}.cuh"\n' for f in FAMILIES)
        + "#include <cstdint>\n"
        + f"namespace muh_probe {{\n{structs}}}\n"
        + "template <class M, class C>\nconstexpr bool same(int cc) {\n"
        "  return M{}(::cuda::compute_capability{cc}) == C{}(::cuda::compute_capability{cc});\n}\n"
        + "".join(
            f"template <class M, class C>\nconstexpr bool below_{f}(int cc, int oldest) {{\n"
            "  const auto at = ::cuda::compute_capability{cc};\n"
            "  const auto rung = ::cuda::compute_capability{oldest};\n"
            "  return M{}(rung) == C{}(rung) && M{}(at) != C{}(at) && C{}(at) != C{}(rung)\n"
            f"      && M{{}}(at).{field} == M{{}}(rung).{field} && C{{}}(at).{field} != C{{}}(rung).{field};\n}}\n"
            for f, field in CUB_OLDER_POLICY.items()
        )
        + asserts
        + _calls()
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    # each entry's environment path instantiated CUB 3.5's kernels on muh's selector (read in the kernel stubs'
    # mangled names: `nm -C` leaves a stub's own name mangled), none on CUB's own
    symbols = object_symbols(tmp_path)
    stubs = [line for line in symbols.splitlines() if "__device_stub" in line]
    for family, f in FAMILIES.items():
        mine = f"4tune{len(family)}{family}15policy_selector"
        for kernel in f.kernels:
            assert any(kernel in s and mine in s for s in stubs), (family, kernel)
    sorts = [s for s in stubs if any(k in s for f in FAMILIES.values() for k in f.kernels)]
    assert not [s for s in sorts if "policy_selector_from_types" in s], "a sort kernel ran on CUB's own selector"
    # the one CUB selector left: segmented sort partitions its segments by size with DeviceThreeWayPartition on that
    # algorithm's own tuning (dispatch_segmented_sort.cuh; the segmented sort's key does not reach it)
    cubs = [s for s in stubs if "policy_selector_from_types" in s]
    assert cubs and all("three_way_partition" in s for s in cubs), cubs


# ---- other values: another policy, unset fields CUB's, the equality check fails -----------------------------

_CC90 = "constexpr auto cc = ::cuda::compute_capability{90};\n"


def _head(family: str, t: str = "float", o: str = "unsigned") -> str:
    f = FAMILIES[family]
    return (
        f'#include "muh/cub/tune/{family}.cuh"\n'
        f"using Muh = {f.muh.format(t=t, o=o)};\n"
        f"using Cub = {f.cub.format(t=t, o=o)};\n" + _CC90
    )


#: Per family: an sm_90 float32 policy with values CUB 3.5 does not have there, and the static_asserts that muh's
#: policy holds them, CUB's does not, and the fields the spec leaves unset are CUB's.
OTHER = {
    "radix_sort": (
        "onesweep { threads = 256  items = 12 }",
        "static_assert(Muh{}(cc).onesweep.threads_per_block == 256 && Muh{}(cc).onesweep.items_per_thread == 12);\n"
        "static_assert(Cub{}(cc).onesweep.threads_per_block == 384);\n"
        "static_assert(Muh{}(cc).algorithm == Cub{}(cc).algorithm && Muh{}(cc).histogram == Cub{}(cc).histogram);\n"
        "static_assert(Muh{}(cc).onesweep.rank_algorithm == Cub{}(cc).onesweep.rank_algorithm);\n"
        "static_assert(Muh{}(cc).onesweep.radix_bits == Cub{}(cc).onesweep.radix_bits);\n"
        "static_assert(Muh{}(cc).downsweep == Cub{}(cc).downsweep && Muh{}(cc).single_tile == Cub{}(cc).single_tile);\n"
        "// a pair sort is not radix_sort's call: CUB's own policy\n"
        "static_assert(muh::cub::tune::radix_sort::policy_selector<float, float, unsigned>{}(cc)\n"
        "    == ::cub::detail::radix_sort::policy_selector_from_types<float, float, unsigned>{}(cc));\n",
    ),
    "radix_sort_pairs": (
        "use_onesweep = false  onesweep { threads = 256  items = 12 }",
        "static_assert(Muh{}(cc).algorithm == ::cub::RadixSortAlgorithm::multi_pass);\n"
        "static_assert(Cub{}(cc).algorithm == ::cub::RadixSortAlgorithm::onesweep);\n"
        "static_assert(Muh{}(cc).onesweep.threads_per_block == 256 && Muh{}(cc).onesweep.items_per_thread == 12);\n"
        "static_assert(Muh{}(cc).histogram == Cub{}(cc).histogram && Muh{}(cc).upsweep == Cub{}(cc).upsweep);\n"
        "static_assert(Muh{}(cc).scan == Cub{}(cc).scan && Muh{}(cc).alt_downsweep == Cub{}(cc).alt_downsweep);\n"
        "// a keys-only sort is not radix_sort_pairs' call: CUB's own policy\n"
        "static_assert(muh::cub::tune::radix_sort_pairs::policy_selector<float, ::cub::NullType, unsigned>{}(cc)\n"
        "    == ::cub::detail::radix_sort::policy_selector_from_types<float, ::cub::NullType, unsigned>{}(cc));\n",
    ),
    "segmented_sort": (
        "large { radix_bits = 5 }  small { threads_per_segment = 8  items = 5 }",
        "static_assert(Muh{}(cc).large_segment.radix_bits == 5 && Cub{}(cc).large_segment.radix_bits == 6);\n"
        "static_assert(Muh{}(cc).small_segment.threads_per_warp == 8);\n"
        "static_assert(Muh{}(cc).small_segment.items_per_thread == 5);\n"
        "static_assert(Cub{}(cc).small_segment.threads_per_warp == 2);\n"
        "static_assert(Muh{}(cc).large_segment.threads_per_block == Cub{}(cc).large_segment.threads_per_block);\n"
        "static_assert(Muh{}(cc).small_segment.load_algorithm == Cub{}(cc).small_segment.load_algorithm);\n"
        "static_assert(Muh{}(cc).medium_segment == Cub{}(cc).medium_segment);\n"
        "static_assert(Muh{}(cc).partitioning_threshold == Cub{}(cc).partitioning_threshold);\n",
    ),
    "segmented_radix_sort": (
        "segmented { threads = 256  items = 20 }",
        "static_assert(Muh{}(cc).regular_pass.threads_per_block == 256);\n"
        "static_assert(Muh{}(cc).regular_pass.items_per_thread == 20);\n"
        "static_assert(Cub{}(cc).regular_pass.threads_per_block == 192);\n"
        "static_assert(Muh{}(cc).regular_pass.radix_bits == Cub{}(cc).regular_pass.radix_bits);\n"
        "static_assert(Muh{}(cc).regular_pass.rank_algorithm == Cub{}(cc).regular_pass.rank_algorithm);\n"
        "static_assert(Muh{}(cc).alternate_pass == Cub{}(cc).alternate_pass);\n",
    ),
    "merge_sort": (
        "threads = 128  items = 9",
        "static_assert(Muh{}(cc).threads_per_block == 128 && Muh{}(cc).items_per_thread == 9);\n"
        "static_assert(Cub{}(cc).threads_per_block == 256);\n"
        "static_assert(Muh{}(cc).load_algorithm == Cub{}(cc).load_algorithm);\n"
        "static_assert(Muh{}(cc).store_algorithm == Cub{}(cc).store_algorithm);\n"
        "static_assert(Muh{}(cc).unroll == Cub{}(cc).unroll);\n",
    ),
    "merge": (
        "threads = 256  items = 11",
        "static_assert(Muh{}(cc).threads_per_block == 256 && Muh{}(cc).items_per_thread == 11);\n"
        "static_assert(Cub{}(cc).threads_per_block == 512);\n"
        "static_assert(Muh{}(cc).load_modifier == Cub{}(cc).load_modifier);\n"
        "static_assert(Muh{}(cc).use_bulk_copy_for_keys == Cub{}(cc).use_bulk_copy_for_keys);\n"
        "static_assert(Muh{}(cc).unroll == Cub{}(cc).unroll);\n"
        "// a merge with values is not the keys' merge: CUB's own policy\n"
        "using Pairs = muh::cub::tune::merge::policy_selector<float*, int*, float*, int*, ::cuda::std::int64_t>;\n"
        "using CubPairs =\n"
        "    ::cub::detail::merge::policy_selector_from_types<float*, int*, float*, int*, ::cuda::std::int64_t>;\n"
        "static_assert(Pairs{}(cc) == CubPairs{}(cc));\n",
    ),
}


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
@pytest.mark.parametrize("family", list(OTHER))
def test_sort_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path, family):
    policy, asserts = OTHER[family]
    ctx = ctx_of(other_spec(family, policy), f"other_{family}.muh")
    write(ctx, tmp_path)
    differs = "static_assert(Muh{}(cc) != Cub{}(cc));\n" + asserts
    differs_and_equality_fails(nvcc, cccl35, tmp_path, _head(family), differs, f"{family} sm90 float32")
