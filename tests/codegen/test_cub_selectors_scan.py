"""CCCL 3.5's policy selectors of the look-back families (scan, scan_by_key, reduce_by_key, rle_encode,
rle_non_trivial_runs; muh/codegen/cxx/templates/cub/tune/_lookback.cuh.j2): compiled with nvcc against the CCCL 3.5.0
headers of the nvidia-cuda-cccl wheel, muh's selector answers CUB 3.5's own on every case of CUB's case list for the
five families where CUB 3.5 kept CUB 3.0.1's values (specs/nvidia.muh holds 3.0.1's), and differs exactly in the named
fields where 3.5 changed them (``retunes``); scan's look-ahead choice is CUB's. A spec with other values gives another
policy (the check can fail), and the convenience entries run CUB's kernels templated on muh's selectors.

The 3.5 changes the equality finds (cub/device/dispatch/tuning/*.cuh of the wheel against the toolkit's 3.0.1):

- the look-back delay of an untuned user-defined type: CUB 3.5's ``default_delay_constructor_policy``
  (cub/detail/delay_constructor.cuh) gives a trivially copyable type ``fixed_delay`` 350 ns / 450 ns where 3.0.1's
  ``default_delay_constructor_t`` (cub/agent/single_pass_scan_operators.cuh) gave a non-primitive one ``no_delay``
  450 ns: scan's user-defined accumulators, and scan_by_key's and reduce_by_key's untuned values of 12 B or more
  (``default_reduce_by_key_delay_constructor_policy``, the same header);
- reduce_by_key with an operator other than plus, min and max (CUB's ``basic_binary_op_t``): 3.5 answers its
  default policy with ``LOAD_LDG`` on every compute capability (``if (!op_is_primitive)`` in
  tuning_reduce_by_key.cuh), where 3.0.1's sm_80, sm_90 and sm_100 policies took ``DefaultPolicy<LOAD_DEFAULT>``;
- scan: CUB 3.5 picks the look-ahead scan on sm_100 for every call over pointers of CUB's case list; muh's selector
  then answers CUB's whole policy (its scan dimensions describe the look-back scan), and muh's sm_100 values apply
  where CUB runs the look-back scan there (a non-contiguous input: proven with ``cuda::std::reverse_iterator``).
"""

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

GROUP = ("scan", "scan_by_key", "reduce_by_key", "rle_encode", "rle_non_trivial_runs")
#: CUB's basic binary operators (cub/thread/thread_operators.cuh, ``basic_binary_op_t``): reduce_by_key's tunings
#: are for them only.
BASIC_OPS = ("plus", "max", "min")
#: The compute capability whose branch of CUB 3.5's selectors a device off the spec's ladder takes (8.9: its 8.6
#: branch; 12.0: its 10.0 one), as muh's rung does; 7.5 is below the ladder (muh answers its sm80 rung).
BRANCH = {89: 86, 120: 100}

PRELUDE = """\
#include <cstdint>
#include <cuda/std/iterator>
{includes}
namespace muh_probe {{
{structs}template <class K, class V> struct kv {{}};
}}
template <class T> struct kv_traits {{ using key = T; using value = T; }};
template <class K, class V> struct kv_traits<muh_probe::kv<K, V>> {{ using key = K; using value = V; }};
template <class T> using key_of = typename kv_traits<T>::key;
template <class T> using value_of = typename kv_traits<T>::value;

{aliases}
constexpr ::cuda::compute_capability at(int cc) {{ return ::cuda::compute_capability{{cc}}; }}
template <class M, class C>
constexpr bool same(int cc) {{ return M{{}}(at(cc)) == C{{}}(at(cc)); }}
// CUB 3.0.1's value (muh's spec) -> CUB 3.5's, in the look-back member: nothing else differs
constexpr ::cub::LookbackDelayPolicy delay_301{{::cub::LookbackDelayAlgorithm::no_delay, 0, 450}};
constexpr ::cub::LookbackDelayPolicy delay_35{{::cub::LookbackDelayAlgorithm::fixed_delay, 350, 450}};
template <class P>
constexpr bool retuned_policy(P m, const P& c, bool delay, bool ldg)
{{
  if (m == c || m.algorithm != c.algorithm)
  {{
    return false;
  }}
  if (delay)
  {{
    if (!(m.lookback.lookback_delay == delay_301 && c.lookback.lookback_delay == delay_35))
    {{
      return false;
    }}
    m.lookback.lookback_delay = c.lookback.lookback_delay;
  }}
  if (ldg)
  {{
    if (!(m.lookback.load_modifier == ::cub::LOAD_DEFAULT && c.lookback.load_modifier == ::cub::LOAD_LDG))
    {{
      return false;
    }}
    m.lookback.load_modifier = c.lookback.load_modifier;
  }}
  return m == c;
}}
template <class M, class C>
constexpr bool retuned(int cc, bool delay, bool ldg)
{{
  return retuned_policy(M{{}}(at(cc)), C{{}}(at(cc)), delay, ldg);
}}
// below the spec's oldest hardware muh answers its oldest rung (the hubs' ChainedPolicy ladder)
template <class M>
constexpr bool rung_below(int cc, int rung) {{ return M{{}}(at(cc)) == M{{}}(at(rung)); }}
// CUB picks the look-ahead scan: muh answers CUB's whole policy
template <class M, class C>
constexpr bool lookahead(int cc)
{{
  const auto c = C{{}}(at(cc));
  return c.algorithm == ::cub::ScanAlgorithm::lookahead && M{{}}(at(cc)) == c;
}}
// 12.0: CUB 3.5 picks the look-ahead scan only from nvcc 13.4 on (cccl issue 8528, tuning_scan.cuh)
template <class M, class C>
constexpr bool lookahead_or_retuned(int cc, bool delay)
{{
  return C{{}}(at(cc)).algorithm == ::cub::ScanAlgorithm::lookahead ? lookahead<M, C>(cc)
       : delay                                                   ? retuned<M, C>(cc, true, false)
                                                                 : same<M, C>(cc);
}}
"""


#: The selectors compared, per family: muh's and CUB's over a case's types (by-key: ``kv<Key, Value>``).
ALIASES = {
    "scan": (
        "template <class It, class T, class O, class Op>\n"
        "using scan_muh = muh::cub::tune::scan::policy_selector<It, T*, T, O, Op>;\n"
        "template <class It, class T, class O, class Op>\n"
        "using scan_cub = ::cub::detail::scan::policy_selector_from_types<It, T*, T, O, Op>;\n"
    ),
    "scan_by_key": (
        "template <class T, class Op>\n"
        "using scan_by_key_muh =\n"
        "  muh::cub::tune::scan_by_key::policy_selector<key_of<T>, value_of<T>, value_of<T>, Op>;\n"
        "template <class T, class Op>\n"
        "using scan_by_key_cub =\n"
        "  ::cub::detail::scan_by_key::policy_selector_from_types<key_of<T>, value_of<T>, value_of<T>, Op>;\n"
    ),
    "reduce_by_key": (
        "template <class T, class Op>\n"
        "using reduce_by_key_muh = muh::cub::tune::reduce_by_key::policy_selector<Op, value_of<T>, key_of<T>>;\n"
        "template <class T, class Op>\n"
        "using reduce_by_key_cub =\n"
        "  ::cub::detail::reduce_by_key::policy_selector_from_types<Op, value_of<T>, key_of<T>>;\n"
    ),
    "rle_encode": (
        "template <class T>\nusing rle_encode_muh = muh::cub::tune::rle_encode::policy_selector<int, T>;\n"
        "template <class T>\nusing rle_encode_cub = ::cub::detail::rle::encode::policy_selector_from_types<int, T>;\n"
    ),
    "rle_non_trivial_runs": (
        "template <class T>\n"
        "using rle_non_trivial_runs_muh = muh::cub::tune::rle_non_trivial_runs::policy_selector<int, T>;\n"
        "template <class T>\n"
        "using rle_non_trivial_runs_cub = ::cub::detail::rle::non_trivial_runs::policy_selector_from_types<int, T>;\n"
    ),
}


def _record(name: str) -> bool:
    return cub_truth.shape_of(name) is not None


def _size(name: str) -> int | None:
    shape = cub_truth.shape_of(name)
    return shape[0] if shape else None


def retunes(family: str, probe: cub_truth.PolicyProbe, cc: int) -> tuple[bool, bool]:
    """(delay, ldg): where CUB 3.5 answers ``probe``'s call at ``cc`` with another look-back delay (``fixed_delay``
    350/450 for 3.0.1's ``no_delay`` 450: an untuned user-defined type) or another load modifier (``LOAD_LDG`` for
    3.0.1's ``LOAD_DEFAULT``: reduce_by_key's non-basic operators) than CUB 3.0.1, whose values muh's spec holds.
    Read from the two versions' headers (see the module docstring); the compiled assertions check each."""
    branch = BRANCH.get(cc, cc)
    value = probe.value or probe.type
    if family == "scan":
        return _record(probe.type), False
    if family == "scan_by_key":  # records are untuned: CUB's default, whose delay 3.5 changed for >= 12 B values
        return _record(value), False
    if family == "reduce_by_key":
        tuned_branch = branch in (80, 90, 100)  # 8.6 answers its default (LOAD_LDG) in both versions
        basic = probe.op in BASIC_OPS
        use_tuning = all(not _record(t) or _size(t) == 16 for t in (probe.type, value))  # tuning_reduce_by_key.cuh
        return _record(value) and not (tuned_branch and basic and use_tuning), tuned_branch and not basic
    return False, False


def _assertion(family: str, probe: cub_truth.PolicyProbe, cc: int, form: str = "") -> tuple[str, str]:
    """(C++ static_assert, kind) for ``probe``'s call at compute capability ``cc`` (scan: ``form`` is the input
    iterator, ``T*`` or a reversed one)."""
    t, o, op = probe.cxx_type, probe.cxx_offset, probe.cxx_op
    args = {
        "scan": f"{form or t + '*'}, {t}, {o}, {op}",
        "scan_by_key": f"{t}, {op}",
        "reduce_by_key": f"{t}, {op}",
        "rle_encode": t,
        "rle_non_trivial_runs": t,
    }[family]
    muh, cub = f"{family}_muh<{args}>", f"{family}_cub<{args}>"
    words = [family, *(w for w in parity.case_name(probe).split()[2:]), f"cc {cc}"] + (["reversed"] if form else [])
    label = " ".join(words)
    oldest = min(cub_truth.ARCHES) // 10  # the spec's oldest hardware (sm80), the ladder's lowest rung
    if cc < oldest:
        return f'static_assert(rung_below<{muh}>({cc}, {oldest}), "{label}: sm{oldest} rung");\n', "below"
    delay, ldg = retunes(family, probe, cc)
    if family == "scan" and not form and cc >= 100:
        if cc == 100:
            return f'static_assert(lookahead<{muh}, {cub}>({cc}), "{label}: look-ahead");\n', "lookahead"
        return f'static_assert(lookahead_or_retuned<{muh}, {cub}>({cc}, {str(delay).lower()}), "{label}");\n', "12.0"
    if delay or ldg:
        named = ("lookback_delay no_delay 0/450 -> fixed_delay 350/450 " if delay else "") + (
            "load_modifier LOAD_DEFAULT -> LOAD_LDG" if ldg else ""
        )
        kind = "+".join(k for k, on in (("delay", delay), ("ldg", ldg)) if on)
        return (
            f"static_assert(retuned<{muh}, {cub}>({cc}, {str(delay).lower()}, {str(ldg).lower()}), "
            f'"{label}: 3.0.1 -> 3.5 {named.strip()}");\n',
            kind,
        )
    return f'static_assert(same<{muh}, {cub}>({cc}), "{label}");\n', "same"


def _cases(ctx, family: str) -> list[cub_truth.PolicyProbe]:
    compared, gaps, _ = parity.coverage(ctx.spec)
    cases = [p for p, _ in compared if p.algorithm == family]
    assert cases and not [p for p, _ in gaps if p.algorithm == family]
    assert sorted({p.cc for p in cases}) == [r.cc for r in cub_hub.chain(ctx.derived.of(family))]
    return cases


def _source(ctx, families: tuple[str, ...], calls: str) -> tuple[str, dict[str, dict[str, int]]]:
    """The unit: every case of CUB's case list for ``families`` at its rung's compute capability and, per distinct
    call, at the compute capabilities off the ladder; and the count of each kind of assertion per family."""
    asserts, counts, probes = [], {}, []
    for family in families:
        cases = _cases(ctx, family)
        probes += cases
        kinds: dict[str, int] = {}
        forms = ("", "::cuda::std::reverse_iterator<{t}*>") if family == "scan" else ("",)
        calls_seen = {}
        for p in cases:
            calls_seen.setdefault((p.type, p.value, p.op, p.offset), p)
        for form in forms:
            for p in cases:
                line, kind = _assertion(family, p, p.cc // 10, form.format(t=p.cxx_type))
                asserts.append(line)
                kinds[kind] = kinds.get(kind, 0) + 1
            for p in calls_seen.values():
                for cc in OFF_LADDER:
                    line, kind = _assertion(family, p, cc, form.format(t=p.cxx_type))
                    asserts.append(line)
                    kinds[f"off {kind}"] = kinds.get(f"off {kind}", 0) + 1
        counts[family] = kinds
    structs = "".join(
        f"struct alignas({a}) {n} {{ char bytes[{s}];\n"
        f"  __host__ __device__ friend bool operator<(const {n}&, const {n}&) {{ return false; }} }};\n"
        for n, s, a in cub_truth.struct_shapes(probes)
    )
    includes = "".join(f'#include "muh/cub/tune/{f}.cuh"\n' for f in families)
    aliases = "".join(ALIASES[f] for f in families)
    return PRELUDE.format(includes=includes, structs=structs, aliases=aliases) + "".join(asserts) + calls, counts


_CALLS = {
    "scan": (
        "cudaError_t s32(const float* in, float* out, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::inclusive_sum(in, out, n, s);\n}\n"
        "cudaError_t s64(const double* in, double* out, long long n) {\n"
        "  return muh::cub::tune::scan::inclusive_sum(in, out, n);\n}\n"
    ),
    "scan_by_key": (
        "cudaError_t k(const int* keys, const double* v, double* out, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::inclusive_sum_by_key(keys, v, out, n, s);\n}\n"
    ),
    "reduce_by_key": (
        "cudaError_t r(const int* k, int* uk, const float* v, float* agg, int* runs, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::reduce_values_by_key(k, uk, v, agg, runs, ::cuda::maximum<>{}, n, s);\n}\n"
    ),
    "rle_encode": (
        "cudaError_t e(const short* in, short* u, int* counts, int* runs, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::run_length_encode(in, u, counts, runs, n, s);\n}\n"
    ),
    "rle_non_trivial_runs": (
        "cudaError_t t(const double* in, int* offsets, int* lengths, int* runs, int n, cudaStream_t s) {\n"
        "  return muh::cub::tune::non_trivial_runs(in, offsets, lengths, runs, n, s);\n}\n"
    ),
}
#: Per family: the kernels its entries above instantiate on muh's selector (texts of the selector in the demangled
#: symbol; rle_encode's is wrapped in DeviceRunLengthEncode's adapter to reduce by key's policy).
_KERNELS = {
    "scan": (
        ("DeviceScanKernel", "muh::cub::tune::scan::policy_selector<float const*, float*, float, unsigned int, "),
        ("DeviceScanInitKernel", "muh::cub::tune::scan::policy_selector<float const*, float*, float, unsigned int, "),
        ("DeviceScanKernel", "muh::cub::tune::scan::policy_selector<double const*, double*, double, unsigned long"),
    ),
    "scan_by_key": (
        ("DeviceScanByKeyKernel", "muh::cub::tune::scan_by_key::policy_selector<int, double, double, cuda::std::"),
    ),
    "reduce_by_key": (
        (
            "DeviceReduceByKeyKernel",
            "muh::cub::tune::reduce_by_key::policy_selector<cuda::",
            "maximum<void>, float, int>",
        ),
    ),
    "rle_encode": (
        (
            "DeviceReduceByKeyKernel",
            "DeviceRunLengthEncode::__policy_selector_adapter<muh::cub::tune::rle_encode::policy_selector<int, short>>",
        ),
    ),
    "rle_non_trivial_runs": (
        ("DeviceRleSweepKernel", "muh::cub::tune::rle_non_trivial_runs::policy_selector<int, double>"),
    ),
}


def _equal_and_entries(nvcc, cccl35, tmp_path, families: tuple[str, ...]) -> dict[str, dict[str, int]]:
    ctx = ctx_of(nvidia35(), "nvidia35.muh")
    write(ctx, tmp_path)
    source, counts = _source(ctx, families, "".join(_CALLS[f] for f in families))
    proc = compile_unit(nvcc, cccl35, tmp_path, source)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    symbols = object_symbols(tmp_path)
    stubs = [line.replace(" >", ">") for line in symbols.splitlines() if "__device_stub" in line]
    for family in families:
        for kernel, *mine in _KERNELS[family]:
            assert any(kernel in s and all(m.replace(" >", ">") in s for m in mine) for s in stubs), (family, kernel)
    assert "policy_selector_from_types" not in "".join(stubs), "a kernel ran on CUB's own selector"
    return counts


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_scan_selector_equals_cub_35_where_it_kept_301_and_the_env_path_runs_it(nvcc, cccl35, tmp_path):
    counts = _equal_and_entries(nvcc, cccl35, tmp_path, ("scan",))
    # 384 cases (96 calls x 4 rungs), each over pointers and over a reversed input; 96 calls x 2 forms x 3 off the
    # ladder. Over pointers sm_100 runs CUB's look-ahead scan for all 96; the 24 user-defined-accumulator calls
    # (3 records x 4 operators x 2 offset widths) carry 3.5's record delay wherever CUB runs the look-back scan.
    assert counts["scan"] == {
        "same": 2 * 216 + 72,
        "delay": 2 * 72 + 24,
        "lookahead": 96,
        "off same": 2 * 72 + 72,
        "off delay": 2 * 24 + 24,
        "off 12.0": 96,
        "off below": 2 * 96,
    }, counts


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_by_key_selectors_equal_cub_35_where_it_kept_301_and_the_env_paths_run_them(nvcc, cccl35, tmp_path):
    counts = _equal_and_entries(nvcc, cccl35, tmp_path, ("scan_by_key", "reduce_by_key"))
    # 768 cases each (192 calls x 4 rungs). scan_by_key: 44 calls of a user-defined value (CUB's untuned default)
    # at every rung. reduce_by_key: on sm_80, sm_90 and sm_100 the 93 calls of a non-basic operator (mul, bitwise)
    # load with LOAD_LDG (11 of them also carry the record delay), 12 calls of a basic operator and an untuned
    # record key the record delay; on sm_86 (CUB's default in both versions) the 44 user-defined values the delay.
    assert counts["scan_by_key"] == {
        "same": 4 * 148,
        "delay": 4 * 44,
        "off same": 2 * 148,
        "off delay": 2 * 44,
        "off below": 192,
    }, counts
    assert counts["reduce_by_key"] == {
        "same": 3 * 87 + 148,
        "ldg": 3 * 82,
        "delay": 3 * 12 + 44,
        "delay+ldg": 3 * 11,
        "off same": 87 + 148,
        "off ldg": 82,
        "off delay": 12 + 44,
        "off delay+ldg": 11,
        "off below": 192,
    }, counts


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_rle_selectors_equal_cub_35_on_every_case_and_the_env_paths_run_them(nvcc, cccl35, tmp_path):
    counts = _equal_and_entries(nvcc, cccl35, tmp_path, ("rle_encode", "rle_non_trivial_runs"))
    # 52 cases each (13 key types x 4 rungs), all CUB 3.5's own answer; 13 calls x 2 off the ladder too
    for family in ("rle_encode", "rle_non_trivial_runs"):
        assert counts[family] == {"same": 52, "off same": 26, "off below": 13}, counts


# ---- other values: another policy, unset fields CUB's, and the equality check can fail --------------------------

_DELAY = "delay = backoff(ns = 500 ns, l2_write_latency = 700 ns)"


def _head(family: str, muh: str, cub: str) -> str:
    return (
        f'#include <cuda/std/iterator>\n#include "muh/cub/tune/{family}.cuh"\n'
        f"using Muh = {muh};\nusing Cub = {cub};\nconstexpr auto cc = ::cuda::compute_capability{{90}};\n"
    )


def _other_values(nvcc, cccl35, tmp_path, family: str, policy: str, head: str, differs: str) -> None:
    ctx = ctx_of(other_spec(family, policy), f"other_{family}.muh")
    write(ctx, tmp_path)
    differs_and_equality_fails(nvcc, cccl35, tmp_path, head, differs, f"{family} sm90 float32")


_LOOKBACK_DIFFERS = (
    "static_assert(Muh{}(cc) != Cub{}(cc) && Muh{}(cc).algorithm == Cub{}(cc).algorithm);\n"
    "static_assert(Muh{}(cc).lookback.threads_per_block == 352 && Muh{}(cc).lookback.items_per_thread == 5);\n"
    "static_assert(Muh{}(cc).lookback.lookback_delay.kind == ::cub::LookbackDelayAlgorithm::exponential_backoff);\n"
    "static_assert(Muh{}(cc).lookback.lookback_delay.delay == 500);\n"
    "static_assert(Muh{}(cc).lookback.lookback_delay.l2_write_latency == 700);\n"
    "static_assert(Cub{}(cc).lookback.threads_per_block != 352);\n"
    "// fields the spec leaves unset are CUB's\n"
    "static_assert(Muh{}(cc).lookback.load_algorithm == Cub{}(cc).lookback.load_algorithm);\n"
    "static_assert(Muh{}(cc).lookback.load_modifier == Cub{}(cc).lookback.load_modifier);\n"
    "static_assert(Muh{}(cc).lookback.scan_algorithm == Cub{}(cc).lookback.scan_algorithm);\n"
)


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_scan_other_values_give_another_policy_and_look_ahead_stays_cubs(nvcc, cccl35, tmp_path):
    head = _head(
        "scan",
        "muh::cub::tune::scan::policy_selector<float*, float*, float, unsigned, ::cuda::std::plus<>>",
        "::cub::detail::scan::policy_selector_from_types<float*, float*, float, unsigned, ::cuda::std::plus<>>",
    )
    differs = _LOOKBACK_DIFFERS + (
        "static_assert(Muh{}(cc).lookback.store_algorithm == Cub{}(cc).lookback.store_algorithm);\n"
        "static_assert(Muh{}(cc).lookahead == Cub{}(cc).lookahead);\n"
        "// sm_100 (the spec's sm90 rung): CUB runs the look-ahead scan over pointers, muh answers CUB's policy ...\n"
        "constexpr auto b = ::cuda::compute_capability{100};\n"
        "static_assert(Cub{}(b).algorithm == ::cub::ScanAlgorithm::lookahead && Muh{}(b) == Cub{}(b));\n"
        "// ... and its look-back scan over a reversed input, with muh's values\n"
        "using It = ::cuda::std::reverse_iterator<float*>;\n"
        "using MuhR = muh::cub::tune::scan::policy_selector<It, float*, float, unsigned, ::cuda::std::plus<>>;\n"
        "using CubR = ::cub::detail::scan::policy_selector_from_types<It, float*, float, unsigned, "
        "::cuda::std::plus<>>;\n"
        "static_assert(CubR{}(b).algorithm == ::cub::ScanAlgorithm::lookback && MuhR{}(b) != CubR{}(b));\n"
        "static_assert(MuhR{}(b).lookback == Muh{}(cc).lookback);\n"
    )
    _other_values(nvcc, cccl35, tmp_path, "scan", f"threads = 352  items = 5  {_DELAY}", head, differs)


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_scan_by_key_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    head = _head(
        "scan_by_key",
        "muh::cub::tune::scan_by_key::policy_selector<float, float, float, ::cuda::std::plus<>>",
        "::cub::detail::scan_by_key::policy_selector_from_types<float, float, float, ::cuda::std::plus<>>",
    )
    differs = _LOOKBACK_DIFFERS + (
        "static_assert(Muh{}(cc).lookback.store_algorithm == Cub{}(cc).lookback.store_algorithm);\n"
    )
    _other_values(nvcc, cccl35, tmp_path, "scan_by_key", f"threads = 352  items = 5  {_DELAY}", head, differs)


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_reduce_by_key_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    head = _head(
        "reduce_by_key",
        "muh::cub::tune::reduce_by_key::policy_selector<::cuda::std::plus<>, float, float>",
        "::cub::detail::reduce_by_key::policy_selector_from_types<::cuda::std::plus<>, float, float>",
    )
    _other_values(
        nvcc, cccl35, tmp_path, "reduce_by_key", f"threads = 352  items = 5  {_DELAY}", head, _LOOKBACK_DIFFERS
    )


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_rle_encode_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    head = _head(
        "rle_encode",
        "muh::cub::tune::rle_encode::policy_selector<int, float>",
        "::cub::detail::rle::encode::policy_selector_from_types<int, float>",
    )
    _other_values(nvcc, cccl35, tmp_path, "rle_encode", f"threads = 352  items = 5  {_DELAY}", head, _LOOKBACK_DIFFERS)


@pytest.mark.nvcc
@pytest.mark.cccl35
@pytest.mark.slow
def test_rle_non_trivial_runs_other_values_give_another_policy_and_the_equality_check_fails(nvcc, cccl35, tmp_path):
    head = _head(
        "rle_non_trivial_runs",
        "muh::cub::tune::rle_non_trivial_runs::policy_selector<int, float>",
        "::cub::detail::rle::non_trivial_runs::policy_selector_from_types<int, float>",
    )
    differs = _LOOKBACK_DIFFERS + (
        "static_assert(Muh{}(cc).lookback.store_with_time_slicing == Cub{}(cc).lookback.store_with_time_slicing);\n"
    )
    _other_values(nvcc, cccl35, tmp_path, "rle_non_trivial_runs", f"threads = 352  items = 5  {_DELAY}", head, differs)
