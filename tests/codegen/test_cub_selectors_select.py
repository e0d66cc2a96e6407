"""CCCL 3.5's policy selectors for DeviceSelect and DevicePartition (`include/muh/cub/tune/<family>.cuh` for select_if,
select_flagged, unique, partition, three_way_partition and unique_by_key; muh/codegen/cxx/cub_tune.py): compiled with
nvcc against the CCCL 3.5.0 headers of the nvidia-cuda-cccl wheel, each equals CUB 3.5's own selector on every case of
CUB's case list for its family and at compute capabilities between and beyond the spec's hardware, the look-back
delay included (muh's `delay` as a `cub::LookbackDelayPolicy` value); the convenience entries run CUB's kernels
templated on muh's selectors (DeviceSelect::If, Flagged, Unique, UniqueByKey and DevicePartition::If's environment
paths); a spec with other values gives another policy, whose unset fields are CUB's, and the equality check then
fails.

CUB 3.5 kept CCCL 3.0.1's values (specs/nvidia.muh's) on every case of these families' case list: no case differs.
Below the spec's oldest hardware (sm_75) muh answers sm80's policy and CUB its SM50 default: asserted as a difference
(docs/parity.md, "CCCL 3.5's policy selectors")."""

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
from muh.check.cub_truth import PolicyProbe
from muh.codegen.cxx import cub_hub

FAMILIES = ("select_if", "select_flagged", "unique", "partition", "three_way_partition", "unique_by_key")

#: Per family: muh's selector and CUB 3.5's own for a call of element type ``T`` (a by-key call: keys ``T``, values
#: ``V``), as CUB's case list asks (its 3.0 table: DeviceSelect::If and Unique without flags, Flagged with char flags,
#: DevicePartition::If with one output, 32-bit offsets), and how the two are compared.
ALIASES = """
using Offset = ::cuda::std::int32_t;
template <class T>
using muh_select_if =
  muh::cub::tune::select_if::policy_selector<T*, ::cub::NullType*, T*, Offset, ::cub::SelectImpl::Select>;
template <class T>
using cub_select_if = ::cub::detail::select::policy_selector_from_types<T*, ::cub::NullType*, T*, Offset,
                                                                        ::cub::SelectImpl::Select>;
template <class T>
using muh_select_flagged =
  muh::cub::tune::select_flagged::policy_selector<T*, char*, T*, Offset, ::cub::SelectImpl::Select>;
template <class T>
using cub_select_flagged =
  ::cub::detail::select::policy_selector_from_types<T*, char*, T*, Offset, ::cub::SelectImpl::Select>;
template <class T>
using muh_unique = muh::cub::tune::unique::policy_selector<T*, ::cub::NullType*, T*, Offset, ::cub::SelectImpl::Select>;
template <class T>
using cub_unique = cub_select_if<T>;
template <class T>
using muh_partition = muh::cub::tune::partition::policy_selector<T*, ::cub::NullType*, T*, Offset>;
template <class T>
using cub_partition = ::cub::detail::select::policy_selector_from_types<T*, ::cub::NullType*, T*, Offset,
                                                                        ::cub::SelectImpl::Partition>;
template <class T>
using muh_three_way_partition = muh::cub::tune::three_way_partition::policy_selector<T, Offset>;
template <class T>
using cub_three_way_partition = ::cub::detail::three_way_partition::policy_selector_from_types<T, Offset>;

//! muh's selector at compute capability `cc` equals CUB's own at `cub_cc` (by default the same)
template <class Muh, class Cub>
constexpr bool same(int cc, int cub_cc = 0)
{
  return Muh{}(::cuda::compute_capability{cc}) == Cub{}(::cuda::compute_capability{cub_cc ? cub_cc : cc});
}
// DevicePartition: muh's cub::PartitionPolicy against CUB's default, a cub::SelectPolicy (what
// DevicePartition::__policy_selector_adapter hands the dispatch from either), field by field
template <class Muh, class Cub>
constexpr bool same_partition(int cc, int cub_cc = 0)
{
  const ::cub::PartitionPolicy m = Muh{}(::cuda::compute_capability{cc});
  const ::cub::SelectPolicy c    = Cub{}(::cuda::compute_capability{cub_cc ? cub_cc : cc});
  return m.algorithm == ::cub::PartitionAlgorithm::lookback && c.algorithm == ::cub::SelectAlgorithm::lookback
      && m.lookback.threads_per_block == c.lookback.threads_per_block
      && m.lookback.items_per_thread == c.lookback.items_per_thread
      && m.lookback.load_algorithm == c.lookback.load_algorithm
      && m.lookback.load_modifier == c.lookback.load_modifier
      && m.lookback.scan_algorithm == c.lookback.scan_algorithm
      && m.lookback.lookback_delay == c.lookback.lookback_delay;
}
//! CUB's own selector answers the same at compute capabilities `a` and `b`
template <class Cub>
constexpr bool kept(int a, int b)
{
  return Cub{}(::cuda::compute_capability{a}) == Cub{}(::cuda::compute_capability{b});
}
"""


def _selectors(family: str, t: str, v: str) -> tuple[str, str, str]:
    """muh's ``family`` selector and CUB 3.5's own for element type ``t`` (by key: values ``v``), and the ALIASES
    function comparing them."""
    if family == "unique_by_key":
        return (
            f"muh::cub::tune::unique_by_key::policy_selector<{t}, {v}>",
            f"::cub::detail::unique_by_key::policy_selector_from_types<{t}, {v}>",
            "same",
        )
    return f"muh_{family}<{t}>", f"cub_{family}<{t}>", "same_partition" if family == "partition" else "same"


def _assertion(family: str, t: str, v: str, cc: int, label: str) -> str:
    """``static_assert`` that muh's ``family`` selector equals CUB 3.5's for element type ``t`` (values ``v``) at
    compute capability ``cc`` (major x 10 + minor)."""
    muh, cub, same = _selectors(family, t, v)
    return f'static_assert({same}<{muh}, {cub}>({cc}), "{label}");\n'


def _below_the_ladder(family: str, t: str, v: str, cc: int, oldest: int, label: str) -> str:
    """At a compute capability ``cc`` below the spec's oldest hardware (``oldest``), muh's selector answers with that
    hardware's policy, which is CUB's there; it equals CUB's own answer at ``cc`` exactly where CUB gives ``cc`` the
    policy it gives ``oldest``."""
    muh, cub, same = _selectors(family, t, v)
    return (
        f'static_assert({same}<{muh}, {cub}>({cc}, {oldest}), "{label}: muh answers sm{oldest}\'s policy");\n'
        f'static_assert({same}<{muh}, {cub}>({cc}) == kept<{cub}>({cc}, {oldest}), "{label}");\n'
    )


def _entry_calls() -> str:
    """One call of each family's convenience entry (CUB's environment overloads)."""
    return """
struct below { __device__ bool operator()(float x) const { return x < 0.5f; } };
struct small { __device__ bool operator()(int x) const { return x < 10; } };
struct large { __device__ bool operator()(int x) const { return x > 100; } };
cudaError_t e1(const float* in, float* out, int* n_out, long long n, cudaStream_t s) {
  return muh::cub::tune::select_if::run(in, out, n_out, n, below{}, s);
}
cudaError_t e2(const int* in, const char* flags, int* out, int* n_out, long long n) {
  return muh::cub::tune::select_flagged::run(in, flags, out, n_out, n);
}
cudaError_t e3(const int* in, int* out, int* n_out, long long n) {
  return muh::cub::tune::unique::run(in, out, n_out, n);
}
cudaError_t e4(const float* in, float* out, int* n_out, int n) {
  return muh::cub::tune::partition::run(in, out, n_out, n, below{});
}
cudaError_t e5(const int* in, int* first, int* second, int* rest, int* n_out, int n) {
  return muh::cub::tune::three_way_partition::run(in, first, second, rest, n_out, n, small{}, large{});
}
cudaError_t e6(const int* keys, const float* values, int* keys_out, float* values_out, int* n_out, int n) {
  return muh::cub::tune::unique_by_key::run(keys, values, keys_out, values_out, n_out, n);
}
"""


#: The kernel CUB 3.5 instantiates on each family's selector through its environment overload (DevicePartition's
#: through ``__policy_selector_adapter<muh's selector>``).
KERNELS = {
    "select_if": "DeviceSelectSweepKernel",
    "select_flagged": "DeviceSelectSweepKernel",
    "unique": "DeviceSelectSweepKernel",
    "partition": "DeviceSelectSweepKernel",
    "three_way_partition": "DeviceThreeWayPartitionKernel",
    "unique_by_key": "DeviceUniqueByKeySweepKernel",
}


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_select_selectors_equal_cub_35_on_every_case_and_the_env_paths_run_them(nvcc, cccl35, tmp_path):
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    compared, gaps, _ = parity.coverage(ctx.spec)
    # the cases come from CUB's case list (parity.coverage), never from the spec
    cases = {f: [p for p, _ in compared if p.algorithm == f] for f in FAMILIES}
    assert not [p for p, _ in gaps if p.algorithm in FAMILIES]
    counts = {f: len(c) for f, c in cases.items()}
    assert counts == {f: 292 if f == "unique_by_key" else 52 for f in FAMILIES}, counts
    for f in FAMILIES:
        assert sorted({p.cc for p in cases[f]}) == [r.cc for r in cub_hub.chain(ctx.derived.of(f))], f
    everything = [p for f in FAMILIES for p in cases[f]]
    structs = "".join(
        f"struct alignas({a}) {n} {{ char bytes[{s}]; }};\n" for n, s, a in cub_truth.struct_shapes(everything)
    )
    asserts = ""
    for p in everything:
        key, value = PolicyProbe._cxx(p.type), PolicyProbe._cxx(p.value or p.type)
        asserts += _assertion(p.algorithm, key, value, p.cc // 10, parity.case_name(p))
    # devices between and beyond the spec's hardware take the rung below, as CUB's own selectors do: sm_89 and sm_120
    # run sm86's and sm100's policies
    between = [cc for cc in OFF_LADDER if cc > 80]
    # below the oldest (sm_75) muh answers its oldest hardware's (sm80's) policy, as its 3.0 hub's ChainedPolicy did;
    # CUB 3.5's own selectors fall back to their SM50 default there (tuning_select_if.cuh's get_lookback_policy,
    # tuning_three_way_partition.cuh's "from SM50", tuning_unique_by_key.cuh's get_default_policy), so the two differ
    # wherever sm80 is tuned: not a 3.5 retuning (3.0.1's Policy500 is the same default), a device muh's spec lacks
    below = [cc for cc in OFF_LADDER if cc < 80]
    assert between == [89, 120] and below == [75]
    off, differs = 0, []
    for f in FAMILIES:
        calls = sorted({(PolicyProbe._cxx(p.type), PolicyProbe._cxx(p.value or p.type)) for p in cases[f]})
        for key, value in calls:
            for cc in between:
                asserts += _assertion(f, key, value, cc, f"{f} cc {cc} {key} {value}")
            for cc in below:
                asserts += _below_the_ladder(f, key, value, cc, 80, f"{f} cc {cc} {key} {value}")
                muh, cub, same = _selectors(f, key, value)
                differs.append(f"!{same}<{muh}, {cub}>({cc})")
            off += len(OFF_LADDER)
    assert off == 3 * (5 * 13 + 73)
    # how many calls differ at sm_75: 112 of 138 (every call CUB tunes on sm_80; records and 1-byte three-way
    # partitions run CUB's default on sm_80 too)
    asserts += "constexpr int below_the_ladder_differs = 0\n  + " + "\n  + ".join(differs) + ";\n"
    asserts += "static_assert(below_the_ladder_differs == 112, \"sm_75: muh's sm80 policy differs from CUB's SM50\");\n"
    # 64-bit partition offsets: specs/nvidia.muh keys no partition policy by `.offset64` (CUB's case list asks 32-bit
    # offsets only), so muh answers its 32-bit policy where CUB 3.5 tunes 64-bit offsets apart on sm_100
    wide = "std::int8_t*, ::cub::NullType*, std::int8_t*, std::int64_t"
    asserts += (
        f"static_assert(same_partition<muh::cub::tune::partition::policy_selector<{wide}>, cub_partition<std::int8_t>>"
        '(100), "partition sm100 int8 offset64: muh answers its offset32 policy");\n'
        f"static_assert(!same_partition<muh::cub::tune::partition::policy_selector<{wide}>,\n"
        f"    ::cub::detail::select::policy_selector_from_types<{wide}, ::cub::SelectImpl::Partition>>(100),"
        ' "partition sm100 int8 offset64: CUB tunes it apart");\n'
    )
    source = (
        "".join(f'#include "muh/cub/tune/{f}.cuh"\n' for f in FAMILIES)
        + "#include <cstdint>\n"
        + f"namespace muh_probe {{\n{structs}}}\n"
        + ALIASES
        + asserts
        + _entry_calls()
    )
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    # the environment paths instantiated CUB 3.5's kernels on muh's selectors, none on CUB's own
    symbols = object_symbols(tmp_path)
    stubs = [line.replace(" >", ">") for line in symbols.splitlines() if "__device_stub" in line]
    for family, kernel in KERNELS.items():
        mine = f"muh::cub::tune::{family}::policy_selector<"
        assert any(kernel in s and mine in s for s in stubs), (family, kernel)
    assert any("__policy_selector_adapter<muh::cub::tune::partition::policy_selector<" in s for s in stubs)
    assert "policy_selector_from_types" not in "".join(stubs), "a kernel ran on CUB's own selector"


# ---- other values: another policy, unset fields CUB's, and the equality check fails -------------------------------

_HEAD = '#include "muh/cub/tune/{family}.cuh"\nconstexpr auto cc = ::cuda::compute_capability{{90}};\n'


def _head(family: str, muh: str, cub: str) -> str:
    return _HEAD.format(family=family) + f"using Muh = {muh};\nusing Cub = {cub};\n"


_SELECT = "{ns}::policy_selector<float*, {flags}*, float*, ::cuda::std::int64_t, ::cub::SelectImpl::{impl}>"
_CUB_SELECT = (
    "::cub::detail::select::policy_selector_from_types<float*, {flags}*, float*, ::cuda::std::int64_t, "
    "::cub::SelectImpl::{impl}>"
)


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_select_if_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte elements: CUB's 384 threads x 17 items, a fixed delay of 76 ns (1150 ns L2 write latency)
    ctx = ctx_of(
        other_spec("select_if", "threads = 128  items = 8  delay = backon(ns = 100 ns, l2_write_latency = 200 ns)"),
        "other_select_if.muh",
    )
    write(ctx, tmp_path)
    ns = "muh::cub::tune::select_if"
    head = _head(
        "select_if",
        _SELECT.format(ns=ns, flags="::cub::NullType", impl="Select"),
        _CUB_SELECT.format(flags="::cub::NullType", impl="Select"),
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).lookback.threads_per_block == 128 && Muh{}(cc).lookback.items_per_thread == 8);\n"
        "static_assert(Muh{}(cc).lookback.lookback_delay\n"
        "    == ::cub::LookbackDelayPolicy{::cub::LookbackDelayAlgorithm::exponential_backon, 100, 200});\n"
        "static_assert(Cub{}(cc).lookback.threads_per_block == 384);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).algorithm == Cub{}(cc).algorithm);\n"
        "static_assert(Muh{}(cc).lookback.load_algorithm == Cub{}(cc).lookback.load_algorithm);\n"
        "static_assert(Muh{}(cc).lookback.load_modifier == Cub{}(cc).lookback.load_modifier);\n"
        "static_assert(Muh{}(cc).lookback.scan_algorithm == Cub{}(cc).lookback.scan_algorithm);\n"
        "static_assert(Muh{}(cc).lookback._load_prefetch == Cub{}(cc).lookback._load_prefetch);\n"
        "// calls muh's select_if does not tune are CUB's: in place, and with flags\n"
        + "".join(
            f"static_assert({_SELECT.format(ns=ns, flags=flags, impl=impl)}{{}}(cc)\n"
            f"    == {_CUB_SELECT.format(flags=flags, impl=impl)}{{}}(cc));\n"
            for flags, impl in (("::cub::NullType", "SelectPotentiallyInPlace"), ("char", "Select"))
        )
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "select_if sm90 float32")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_select_flagged_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte elements, flags: CUB's 384 threads x 15 items
    ctx = ctx_of(other_spec("select_flagged", "threads = 256  items = 4"), "other_select_flagged.muh")
    write(ctx, tmp_path)
    ns = "muh::cub::tune::select_flagged"
    head = _head(
        "select_flagged",
        _SELECT.format(ns=ns, flags="char", impl="Select"),
        _CUB_SELECT.format(flags="char", impl="Select"),
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).lookback.threads_per_block == 256 && Muh{}(cc).lookback.items_per_thread == 4);\n"
        "static_assert(Cub{}(cc).lookback.threads_per_block == 384);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).lookback.lookback_delay == Cub{}(cc).lookback.lookback_delay);\n"
        "static_assert(Muh{}(cc).lookback.load_algorithm == Cub{}(cc).lookback.load_algorithm);\n"
        "// calls muh's select_flagged does not tune are CUB's: without flags, and in place\n"
        + "".join(
            f"static_assert({_SELECT.format(ns=ns, flags=flags, impl=impl)}{{}}(cc)\n"
            f"    == {_CUB_SELECT.format(flags=flags, impl=impl)}{{}}(cc));\n"
            for flags, impl in (("::cub::NullType", "Select"), ("char", "SelectPotentiallyInPlace"))
        )
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "select_flagged sm90 float32")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_unique_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte elements: CUB's 384 threads x 17 items, warp-transposed loads
    ctx = ctx_of(other_spec("unique", "threads = 160  items = 6  load = direct"), "other_unique.muh")
    write(ctx, tmp_path)
    head = _head(
        "unique",
        _SELECT.format(ns="muh::cub::tune::unique", flags="::cub::NullType", impl="Select"),
        _CUB_SELECT.format(flags="::cub::NullType", impl="Select"),
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).lookback.threads_per_block == 160 && Muh{}(cc).lookback.items_per_thread == 6);\n"
        "static_assert(Muh{}(cc).lookback.load_algorithm == ::cub::BLOCK_LOAD_DIRECT);\n"
        "static_assert(Cub{}(cc).lookback.load_algorithm == ::cub::BLOCK_LOAD_WARP_TRANSPOSE);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).lookback.lookback_delay == Cub{}(cc).lookback.lookback_delay);\n"
        "static_assert(Muh{}(cc).lookback.load_modifier == Cub{}(cc).lookback.load_modifier);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "unique sm90 float32")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_partition_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte elements, rejects kept: CUB's 256 threads x 14 items, LOAD_DEFAULT
    ctx = ctx_of(other_spec("partition", "threads = 128  items = 8  modifier = ldg"), "other_partition.muh")
    write(ctx, tmp_path)
    sel = "muh::cub::tune::partition::policy_selector<float*, {flags}*, {out}, ::cuda::std::int32_t>"
    cub = (
        "::cub::detail::select::policy_selector_from_types<float*, {flags}*, {out}, ::cuda::std::int32_t, "
        "::cub::SelectImpl::Partition>"
    )
    # muh's PartitionPolicy and CUB's SelectPolicy compared as DevicePartition's dispatch gets either: through
    # DevicePartition::__policy_selector_adapter, a cub::SelectPolicy
    head = (
        _HEAD.format(family="partition")
        + f"using MuhPartition = {sel.format(flags='::cub::NullType', out='float*')};\n"
        + f"using CubSelect = {cub.format(flags='::cub::NullType', out='float*')};\n"
        + "template <class S>\nusing Adapted = ::cub::DevicePartition::__policy_selector_adapter<S>;\n"
        + "using Muh = Adapted<MuhPartition>;\nusing Cub = Adapted<CubSelect>;\n"
    )
    distinct = "::cub::detail::select::partition_distinct_output_t<float*, float*>"
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(MuhPartition{}(cc).lookback.threads_per_block == 128\n"
        "    && MuhPartition{}(cc).lookback.items_per_thread == 8);\n"
        "static_assert(MuhPartition{}(cc).lookback.load_modifier == ::cub::LOAD_LDG);\n"
        "static_assert(CubSelect{}(cc).lookback.threads_per_block == 256\n"
        "    && CubSelect{}(cc).lookback.load_modifier == ::cub::LOAD_DEFAULT);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(MuhPartition{}(cc).lookback.lookback_delay == CubSelect{}(cc).lookback.lookback_delay);\n"
        "static_assert(MuhPartition{}(cc).lookback.load_algorithm == CubSelect{}(cc).lookback.load_algorithm);\n"
        "// calls muh's partition does not tune are CUB's: Flagged, and distinct outputs\n"
        + "".join(
            f"static_assert(Adapted<{sel.format(flags=flags, out=out)}>{{}}(cc)\n"
            f"    == Adapted<{cub.format(flags=flags, out=out)}>{{}}(cc));\n"
            for flags, out in (("char", "float*"), ("::cub::NullType", distinct))
        )
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "partition sm90 float32")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_three_way_partition_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte elements: CUB's 320 threads x 12 items, warp scans
    ctx = ctx_of(other_spec("three_way_partition", "threads = 128  items = 4  block = raking"), "other_3way.muh")
    write(ctx, tmp_path)
    head = _head(
        "three_way_partition",
        "muh::cub::tune::three_way_partition::policy_selector<float, ::cuda::std::int32_t>",
        "::cub::detail::three_way_partition::policy_selector_from_types<float, ::cuda::std::int32_t>",
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).lookback.threads_per_block == 128 && Muh{}(cc).lookback.items_per_thread == 4);\n"
        "static_assert(Muh{}(cc).lookback.scan_algorithm == ::cub::BLOCK_SCAN_RAKING);\n"
        "static_assert(Cub{}(cc).lookback.threads_per_block == 320 && Cub{}(cc).lookback.scan_algorithm == "
        "::cub::BLOCK_SCAN_WARP_SCANS);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).algorithm == Cub{}(cc).algorithm);\n"
        "static_assert(Muh{}(cc).lookback.lookback_delay == Cub{}(cc).lookback.lookback_delay);\n"
        "static_assert(Muh{}(cc).lookback.load_algorithm == Cub{}(cc).lookback.load_algorithm);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "three_way_partition sm90 float32")


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_unique_by_key_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    # sm_90, 4-byte keys and values: CUB's own policy, without an exponential back-off
    ctx = ctx_of(
        other_spec("unique_by_key", "threads = 128  items = 8  delay = backoff(ns = 64 ns, l2_write_latency = 300 ns)"),
        "other_unique_by_key.muh",
    )
    write(ctx, tmp_path)
    head = _head(
        "unique_by_key",
        "muh::cub::tune::unique_by_key::policy_selector<float, float>",
        "::cub::detail::unique_by_key::policy_selector_from_types<float, float>",
    )
    differs = (
        "static_assert(Muh{}(cc) != Cub{}(cc));\n"
        "static_assert(Muh{}(cc).threads_per_block == 128 && Muh{}(cc).items_per_thread == 8);\n"
        "static_assert(Muh{}(cc).lookback_delay\n"
        "    == ::cub::LookbackDelayPolicy{::cub::LookbackDelayAlgorithm::exponential_backoff, 64, 300});\n"
        "static_assert(Cub{}(cc).lookback_delay.kind != ::cub::LookbackDelayAlgorithm::exponential_backoff);\n"
        "// fields the spec leaves unset are CUB's\n"
        "static_assert(Muh{}(cc).load_algorithm == Cub{}(cc).load_algorithm);\n"
        "static_assert(Muh{}(cc).load_modifier == Cub{}(cc).load_modifier);\n"
        "static_assert(Muh{}(cc).scan_algorithm == Cub{}(cc).scan_algorithm);\n"
    )
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, "unique_by_key sm90 float32")
