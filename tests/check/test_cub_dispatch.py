"""`cub_dispatch`: CUB's own dispatch, run on the policy hubs generated from a spec, selects CUB's policies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muh.check import cub_dispatch as cd
from muh.check import parity, tuning_headers
from muh.codegen.base import BuildContext
from muh.codegen.cxx import cub_hub
from muh.derive import derive
from muh.schema import load
from muh.schema.catalog import FAMILIES

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = (ROOT / "specs" / "nvidia.muh").read_text()
MEMCPY_SM90 = "algorithm batch_memcpy on sm90 {"


def ctx_of(text: str, name: str = "specs/nvidia.muh") -> BuildContext:
    spec = load(text, name)
    return BuildContext(spec, derive(spec))


def test_every_family_cub_tunes_has_a_hub():
    """All of CCCL 3.0.1's tuned families (the catalogue's CUB tables) render a hub template."""
    tabled = sorted(f for f, fam in FAMILIES.items() if fam.cub is not None)
    assert tabled and [f for f in tabled if not cub_hub.has_hub(f)] == []


def test_hub_names_cub_s_hub_parameters_and_a_chain_per_compute_capability():
    ctx = ctx_of(NVIDIA)
    files = {f.path: f.content for f in cub_hub.emit(ctx)}
    reduce = re.sub(r"\s+", " ", files["include/muh/cub/reduce.cuh"])
    assert "template <class AccumT, class OffsetT, class ReductionOpT> struct policy_hub {" in reduce
    chain = re.findall(r"::cub::ChainedPolicy<(\d+), Policy(\d+), Policy(\d+)>", reduce)
    assert chain == [("800", "800", "800"), ("860", "860", "800"), ("900", "900", "860"), ("1000", "1000", "900")]
    assert "::cub::AgentReducePolicy<" in reduce and "::muh::cub::exact<p.threads, p.items>" in reduce
    assert {"include/muh/cub/common.cuh"} | {f"include/muh/cub/{f}.cuh" for f in cub_hub.hub_families(ctx)} == set(
        files
    )


def test_a_spec_without_nvidia_hardware_gets_no_hub():
    spec = load((ROOT / "specs" / "baseline.muh").read_text(), "specs/baseline.muh")
    assert cub_hub.emit(BuildContext(spec, derive(spec))) == []


def test_a_member_the_spec_leaves_unset_is_cub_s():
    """h200.muh's scan sets muh's own dimensions and not CUB's store algorithm: the hub reads CUB's member."""
    spec = load((ROOT / "specs" / "h200.muh").read_text(), "specs/h200.muh")
    files = {f.path: f.content for f in cub_hub.emit(BuildContext(spec, derive(spec)))}
    scan = files["include/muh/cub/scan.cuh"]
    fields = {f.name for f in cub_hub.tuning.fields_of("scan", BuildContext(spec, derive(spec)).derived.of("scan"))}
    for dim, member in (("store", "C::STORE_ALGORITHM"), ("block", "C::SCAN_ALGORITHM"), ("load", "C::LOAD_ALGORITHM")):
        assert (member in scan) == (dim not in fields), dim


@pytest.mark.nvcc
@pytest.mark.slow
def test_nvidia_hubs_select_cub_s_policies_for_every_case(nvcc):
    """The whole parity table of specs/nvidia.muh: every unit compiles, the count is the parity check's."""
    ctx = ctx_of(NVIDIA)
    res = cd.check_cub_dispatch(ctx)
    compared, gaps, _ = parity.coverage(ctx.spec)
    assert not gaps
    assert res.status == "pass", "\n".join(res.cases)
    assert f"{len(compared)} CUB cases" in res.detail


@pytest.mark.nvcc
def test_a_value_changed_in_the_spec_is_a_named_failing_case(nvcc):
    """batch_memcpy's small-buffer threads on sm90 changed: the sm90 (and sm100, which runs sm90's)
    cases fail by name, member by member; the unchanged spec's unit compiles."""
    a = NVIDIA.index(MEMCPY_SM90)
    bad_text = NVIDIA[:a] + NVIDIA[a:].replace("      threads = 128\n", "      threads = 160\n", 1)
    good, bad = ctx_of(NVIDIA), ctx_of(bad_text)
    (g_unit,), cases, asserts, _, _ = cd.units(good, {"batch_memcpy"})
    (b_unit,), *_ = cd.units(bad, {"batch_memcpy"})
    assert cases == len([p for p, _ in parity.coverage(good.spec)[0] if p.algorithm == "batch_memcpy"])
    assert asserts == cases * len(cd.members("batch_memcpy"))
    b_unit = tuning_headers.Unit("bad", b_unit.source, b_unit.std, tuple(cd.hub_files(bad)))
    res = tuning_headers.compile_units(cd.hub_files(good), [g_unit, b_unit], use_cache=False)
    assert res[g_unit.name][0], res[g_unit.name][1]
    ok, text = res["bad"]
    assert not ok
    assert "batch_memcpy sm90 uint8: small/threads (AgentSmallBufferPolicyT::BLOCK_THREADS) differs from CUB's" in text
    assert "batch_memcpy sm80 uint8: small/threads" not in text


def test_check_counts_gaps_and_families_without_a_hub(monkeypatch):
    """A family whose hub template is missing is named and fails the check (nothing compiled for it)."""
    ctx = ctx_of(NVIDIA)
    monkeypatch.setattr(cub_hub, "has_hub", lambda f: f != "merge" and FAMILIES[f].cub is not None)
    _, _, _, gaps, no_hub = cd.units(ctx)
    assert no_hub == ["merge"] and gaps == []


def test_every_cub_enumerator_is_spelled_as_a_catalogue_choice():
    """muh/families/cub.py's CUB side (CCCL's enumerators) names only values muh's catalogue has, and the
    generated hub's conversion covers exactly them (a value outside is validate's E-ENUM)."""
    from muh.codegen.cxx.tuning import ENUMS
    from muh.families import cub

    choices = {name: set(c) for name, _, c in ENUMS}
    for muh_enum, cub_type, pairs in cub.cub_enums():
        assert {v for v, _ in pairs} <= choices[muh_enum], (muh_enum, cub_type)
    assert cub.cub_choices("reduce", "block", "block_reduce_algorithm") == (
        "raking_commutative_only",
        "raking",
        "warp_reductions",
    )  # no warp_reductions_nondeterministic in CUB 3.0


@pytest.mark.nvcc
def test_a_call_the_spec_cannot_name_runs_cub_s_own_policy(nvcc, tmp_path):
    """An operator outside the catalogue and an element type with no muh element (a 16-byte type aligned
    to 16: specs/nvidia.muh declares none) take CUB's own policy; a known call takes the selector's."""
    a = NVIDIA.index("algorithm select_if on sm80 {")  # its default (records take it) gets 96 threads
    ctx = ctx_of(
        NVIDIA[:a] + NVIDIA[a:].replace("    threads = 128\n    items = 10\n", "    threads = 96\n    items = 10\n", 1)
    )
    for f in cd.hub_files(ctx):
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
    (tmp_path / "t.cu").write_text(
        """#include "muh/cub/reduce.cuh"
#include "muh/cub/select_if.cuh"
struct MyOp { __host__ __device__ int operator()(int a, int b) const { return a ^ b; } };
struct alignas(16) Wide { long long a, b; };
template <class H, class C> constexpr bool same_reduce() {
  using A = typename H::ReducePolicy; using B = typename C::ReducePolicy;
  return A::BLOCK_THREADS == B::BLOCK_THREADS && A::ITEMS_PER_THREAD == B::ITEMS_PER_THREAD
      && A::VECTOR_LOAD_LENGTH == B::VECTOR_LOAD_LENGTH;
}
using MH = muh::cub::chain_pick<muh::cub::reduce::policy_hub<int, unsigned, MyOp>::MaxPolicy, 900>;
using MC = muh::cub::chain_pick<cub::detail::reduce::policy_hub<int, unsigned, MyOp>::MaxPolicy, 900>;
static_assert(!muh::cub::known_v<int, MyOp> && same_reduce<MH, MC>(), "unknown operator: CUB's policy");
using SH = muh::cub::chain_pick<muh::cub::select_if::policy_hub<Wide, cub::NullType, int, false,
                                                                cub::SelectImpl::Select>::MaxPolicy, 900>;
using SC = muh::cub::chain_pick<cub::detail::select::policy_hub<Wide, cub::NullType, int, false,
                                                                cub::SelectImpl::Select>::MaxPolicy, 900>;
static_assert(!muh::cub::known_v<Wide> && SH::SelectIfPolicyT::BLOCK_THREADS == SC::SelectIfPolicyT::BLOCK_THREADS,
              "no muh element: CUB's policy");
// a known call takes the spec's value (select_if's default on sm80, which a 12-byte record takes: 96 threads)
using KH = muh::cub::chain_pick<muh::cub::select_if::policy_hub<muh_check_record, cub::NullType, int, false,
                                                                cub::SelectImpl::Select>::MaxPolicy, 800>;
static_assert(KH::SelectIfPolicyT::BLOCK_THREADS == 96, "a known call: the spec's value");
int main() {}
""".replace("muh_check_record", "Rec12")
    )
    src = (
        (tmp_path / "t.cu")
        .read_text()
        .replace(
            '#include "muh/cub/select_if.cuh"\n',
            '#include "muh/cub/select_if.cuh"\nstruct alignas(4) Rec12 { char b[12]; };\n',
        )
    )
    (tmp_path / "t.cu").write_text(src)
    import subprocess

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
            "-I",
            str(tmp_path / "include"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.nvcc
def test_every_hub_compiles_beside_cub_s_public_headers(nvcc, tmp_path):
    """All of specs/nvidia.muh's hubs in one translation unit after <cub/cub.cuh> (CCCL 3.0.1's
    dispatch_unique_by_key.cuh has no `#pragma once`: a hub that included it directly broke this)."""
    import subprocess

    ctx = ctx_of(NVIDIA)
    for f in cd.hub_files(ctx):
        path = tmp_path / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content)
    hubs = sorted(p.name for p in (tmp_path / "include" / "muh" / "cub").glob("*.cuh"))
    assert len(hubs) == len(cub_hub.hub_families(ctx)) + 1
    (tmp_path / "t.cu").write_text(
        "#include <cub/cub.cuh>\n" + "".join(f'#include "muh/cub/{h}"\n' for h in hubs) + "int main() {}\n"
    )
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
            "-I",
            str(tmp_path / "include"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
