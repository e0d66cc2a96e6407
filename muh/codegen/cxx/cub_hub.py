"""`include/muh/cub/<family>.cuh`: policy hubs that CUB's own dispatch (CCCL 3.0) takes as its ``PolicyHub``.

Per algorithm family of the spec that CUB tunes (its CUB table, muh/families/cub.py) and whose hub
template exists (``templates/cub/<family>.cuh.j2``), on the spec's NVIDIA hardware: a ``policy_hub`` with
the template parameters of CUB's ``cub::detail::<hub>::policy_hub``, a ``ChainedPolicy`` ladder with one
policy per compute capability of the hardware the family is declared on, and in each CUB's own
``Agent…Policy`` types filled from the generated selector (``include/muh/tuning/tuning_<family>.cuh``:
the resolved values, already scaled, kept exact by ``muh::cub::exact``). A member muh's spec does not
set, and a call the spec cannot name (an element type without a muh element, an operator outside the
catalogue), takes what CUB's own hub selects for the same architecture. ``common.cuh`` holds the shared
vocabulary: C++ type → ``muh::tuning::element``, operator → ``operation``, muh's enumerations →
CUB's and muh's delays → CUB's delay constructors (``muh.families.cub.cub_enums`` / ``DELAYS``, the one
table of that correspondence: validate and the checks read it too), and the chain walk that finds CUB's
own policy for an architecture.

This module decides which hubs exist and what each template is given; the templates spell CUB's types.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files as _files

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import tuning
from muh.codegen.templates import render
from muh.derive.model import DerivedAlgorithm
from muh.families import cub
from muh.schema import catalog

OUT = "include/muh/cub"
#: The CCCL the hubs are written for (its ``policy_hub`` parameters and ``Agent…Policy`` types): a spec
#: whose ``toolchain { cccl }`` names another (``Spec.cccl``, the one owner of the version) gets no hubs.
#: CCCL 3.5 dropped or deprecated the hub types they fill (docs/parity.md); it gets policy selectors
#: (cub_tune.py) instead.
HUB_CCCL = "3.0"


#: Families whose hub is another's template with their own values (the same CUB hub and agent policy).
SHARED = {
    "select_flagged": "select_if",
    "partition": "select_if",
    "unique": "select_if",
    "segmented_reduce": "reduce",
    "radix_sort_pairs": "radix_sort",
    "segmented_radix_sort": "radix_sort",
}


def template(family: str) -> str:
    """The hub template of ``family`` (``templates/cub/<name>.cuh.j2``; the single-agent hubs of ``AGENTS``
    share ``agent.cuh.j2``)."""
    return "cub/agent.cuh.j2" if family in AGENTS else f"cub/{SHARED.get(family, family)}.cuh.j2"


def has_hub(family: str) -> bool:
    """Whether muh renders a CUB policy hub for ``family`` (a CUB table and a hub template)."""
    fam = catalog.FAMILIES.get(family)
    if fam is None or fam.cub is None:
        return False
    return _files("muh.codegen.cxx").joinpath("templates", template(family)).is_file()


@dataclass(frozen=True)
class Rung:
    """One policy of the chain: CUB's version number (SM x 10) and the hardware whose values it holds."""

    cc: int
    hardware: str


def chain(algorithms: list[DerivedAlgorithm]) -> list[Rung]:
    """The family's NVIDIA hardware with a compute capability, oldest first, one per compute capability
    (the first hardware by name where two share one: the selector's ladder reaches it first)."""
    rungs: dict[int, str] = {}
    for a in sorted(algorithms, key=lambda a: a.hardware.name):
        hw = a.hardware
        if hw.vendor == "nvidia" and hw.compute_capability:
            rungs.setdefault(hw.compute_capability * 10, hw.name)
    return [Rung(cc, tuning.ident(name)) for cc, name in sorted(rungs.items())]


def hub_families(ctx: BuildContext) -> list[str]:
    """The spec's families that get a hub: CUB tunes them, a template exists, NVIDIA hardware runs them
    (none where the spec's CCCL is not the hubs' one)."""
    if ctx.spec.cccl != HUB_CCCL:
        return []
    return [
        f
        for f in sorted({a.family for a in ctx.derived.algorithms.values()})
        if has_hub(f) and chain(ctx.derived.of(f))
    ]


def records(ctx: BuildContext) -> list[tuple[str, int, int]]:
    """The spec's own element types (name, size, alignment): a C++ type that is neither arithmetic nor
    half-precision takes the first of its size and alignment."""
    return [
        (tuning.ident(n), int(t.size), int(t.align))
        for n, t in sorted(ctx.spec.types.items())
        if n not in catalog.DTYPES
    ]


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    families = hub_families(ctx)
    if not families:
        return []
    enums = [dict(muh=m, cub=t, pairs=[(tuning.ident(v), c) for v, c in pairs]) for m, t, pairs in cub.cub_enums()]
    out = [
        GeneratedFile(
            f"{OUT}/common.cuh",
            render(
                "muh.codegen.cxx",
                "cub/common.cuh.j2",
                header=ctx.header("//"),
                enums=enums,
                records=records(ctx),
                ops=[tuning.ident(o) for o in catalog.OPS],
                delays=cub.DELAYS,
                cccl=ctx.spec.cccl,
            ),
        )
    ]
    for family in families:
        algs = ctx.derived.of(family)
        fields = {f.name for f in tuning.fields_of(family, algs)}
        subs = {sp.name: {f.name for f in sp.fields} for sp in tuning.subs_of(family, algs)}
        out.append(
            GeneratedFile(
                f"{OUT}/{family}.cuh",
                render(
                    "muh.codegen.cxx",
                    template(family),
                    header=ctx.header("//"),
                    family=tuning.ident(family),
                    doc=catalog.FAMILIES[family].doc,
                    entry=catalog.FAMILIES[family].cub.entry,
                    rungs=chain(algs),
                    fields=fields,
                    subs=subs,
                    sized=["0LL" for _ in tuning.sized(algs)],
                    cccl=ctx.spec.cccl,
                    agent=AGENTS.get(family),
                    agent_args=agent_args(family, fields) if family in AGENTS else [],
                ),
            )
        )
    return out


@dataclass(frozen=True)
class Agent:
    """A hub whose chain policy holds one agent policy (``agent.cuh.j2``): CUB's hub (``cub_ns``, its
    template parameters and their names), how the selector is asked (the key, value and operator
    types, C++ expressions over the parameters), the chain policy's member holding the agent, the agent
    type and the dimensions its template takes, in order (``"@T"``: a type parameter passed as is)."""

    dispatch: tuple[str, ...]  # the CCCL headers it includes (below cub/, or a thrust/ path; CCCL 3.0.1's
    # dispatch_unique_by_key.cuh has no `#pragma once`: it is reached through device_select.cuh, which has, so a
    # user's include does not define it twice)
    cub_ns: str
    params: str
    args: str
    key: str
    member: str
    agent: str
    dims: tuple[str, ...]
    value: str | None = None
    op: str | None = None
    max_name: str = "MaxPolicy"
    entry: str = ""  # the convenience entry (C++ in the family's namespace; "": the hub is passed by hand)


_REDUCE_BY_KEY_RUN = (
    "//! DeviceReduce::ReduceByKey (keys compared with ==) with muh's hub (CUB's dispatch, CUB's kernels).\n"
    """\
template <class KeysIn, class UniqueOut, class ValuesIn, class AggregatesOut, class NumRunsOut, class ReductionOpT,
          class NumItemsT>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_keys_in, UniqueOut d_unique_out,
                ValuesIn d_values_in, AggregatesOut d_aggregates_out, NumRunsOut d_num_runs_out,
                ReductionOpT reduction_op, NumItemsT num_items, cudaStream_t stream = 0)
{
  using OffsetT = ::cub::detail::choose_offset_t<NumItemsT>;
  using ValueT  = ::cub::detail::it_value_t<ValuesIn>;
  using AccumT  = ::cuda::std::__accumulator_t<ReductionOpT, ValueT, ValueT>;
  using KeyT    = ::cub::detail::non_void_value_t<UniqueOut, ::cub::detail::it_value_t<KeysIn>>;
  using EqualT  = ::cuda::std::equal_to<>;
  return ::cub::DispatchReduceByKey<KeysIn, UniqueOut, ValuesIn, AggregatesOut, NumRunsOut, EqualT, ReductionOpT,
                                    OffsetT, AccumT, policy_hub<ReductionOpT, AccumT, KeyT>>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_keys_in, d_unique_out, d_values_in, d_aggregates_out,
             d_num_runs_out, EqualT{}, reduction_op, static_cast<OffsetT>(num_items), stream);
}
"""
)
_UNIQUE_BY_KEY_RUN = (
    "//! DeviceSelect::UniqueByKey (keys compared with ==) with muh's hub (CUB's dispatch, CUB's kernels).\n"
    """\
template <class KeysIn, class ValuesIn, class KeysOut, class ValuesOut, class NumSelectedOut, class NumItemsT>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_keys_in, ValuesIn d_values_in,
                KeysOut d_keys_out, ValuesOut d_values_out, NumSelectedOut d_num_selected_out, NumItemsT num_items,
                cudaStream_t stream = 0)
{
  using OffsetT = ::cub::detail::choose_offset_t<NumItemsT>;
  using EqualT  = ::cuda::std::equal_to<>;
  using Hub     = policy_hub<::cub::detail::it_value_t<KeysIn>, ::cub::detail::it_value_t<ValuesIn>>;
  return ::cub::DispatchUniqueByKey<KeysIn, ValuesIn, KeysOut, ValuesOut, NumSelectedOut, EqualT, OffsetT, Hub>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_keys_in, d_values_in, d_keys_out, d_values_out, d_num_selected_out,
             EqualT{}, static_cast<OffsetT>(num_items), stream);
}
"""
)

_MERGE_SORT_RUN = (
    "//! DeviceMergeSort::SortKeysCopy (a comparator, not in place) with muh's hub (CUB's dispatch, CUB's kernels).\n"
    """\
template <class KeysIn, class KeysOut, class NumItemsT, class CompareOpT>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_keys_in, KeysOut d_keys_out,
                NumItemsT num_items, CompareOpT compare_op, cudaStream_t stream = 0)
{
  using OffsetT = ::cub::detail::choose_offset_t<NumItemsT>;
  return ::cub::DispatchMergeSort<KeysIn, ::cub::NullType*, KeysOut, ::cub::NullType*, OffsetT, CompareOpT,
                                  policy_hub<KeysOut>>::Dispatch(d_temp_storage, temp_storage_bytes, d_keys_in,
                                                                 static_cast<::cub::NullType*>(nullptr), d_keys_out,
                                                                 static_cast<::cub::NullType*>(nullptr),
                                                                 static_cast<OffsetT>(num_items), compare_op, stream);
}
"""
)

_SCAN_BY_KEY_RUN = (
    "//! DeviceScan::InclusiveSumByKey (keys compared with ==) with muh's hub (CUB's dispatch, CUB's kernels).\n"
    """\
template <class KeysIn, class ValuesIn, class ValuesOut, class NumItemsT>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_keys_in, ValuesIn d_values_in,
                ValuesOut d_values_out, NumItemsT num_items, cudaStream_t stream = 0)
{
  using OffsetT = ::cub::detail::choose_offset_t<NumItemsT>;
  using EqualT  = ::cuda::std::equal_to<>;
  using OpT     = ::cuda::std::plus<>;
  using ValueT  = ::cub::detail::it_value_t<ValuesIn>;
  using AccumT  = ::cuda::std::__accumulator_t<OpT, ValueT, ValueT>;
  return ::cub::DispatchScanByKey<KeysIn, ValuesIn, ValuesOut, EqualT, OpT, ::cub::NullType, OffsetT, AccumT,
                                  policy_hub<KeysIn, AccumT, ValueT, OpT>>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_keys_in, d_values_in, d_values_out, EqualT{}, OpT{},
             ::cub::NullType{}, static_cast<OffsetT>(num_items), stream);
}
"""
)


_RLE_ENCODE_RUN = (
    "//! DeviceRunLengthEncode::Encode (keys compared with ==, run lengths counted) with muh's hub (CUB's dispatch,\n"
    "//! CUB's kernels).\n"
    """\
template <class KeysIn, class UniqueOut, class LengthsOut, class NumRunsOut>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_in, UniqueOut d_unique_out,
                LengthsOut d_counts_out, NumRunsOut d_num_runs_out, int num_items, cudaStream_t stream = 0)
{
  using OffsetT  = int;
  using EqualT   = ::cuda::std::equal_to<>;
  using OpT      = ::cuda::std::plus<>;
  using LengthT  = ::cub::detail::non_void_value_t<LengthsOut, OffsetT>;
  using OnesT    = THRUST_NS_QUALIFIER::constant_iterator<LengthT, OffsetT>;
  using AccumT   = ::cuda::std::__accumulator_t<OpT, LengthT, LengthT>;
  using KeyT     = ::cub::detail::non_void_value_t<UniqueOut, ::cub::detail::it_value_t<KeysIn>>;
  return ::cub::DispatchReduceByKey<KeysIn, UniqueOut, OnesT, LengthsOut, NumRunsOut, EqualT, OpT, OffsetT, AccumT,
                                    policy_hub<AccumT, KeyT>>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_in, d_unique_out, OnesT(LengthT(1)), d_counts_out, d_num_runs_out,
             EqualT{}, OpT{}, num_items, stream);
}
"""
)

_RLE_NON_TRIVIAL_RUNS_RUN = (
    "//! DeviceRunLengthEncode::NonTrivialRuns (keys compared with ==) with muh's hub (CUB's dispatch,\n"
    "//! CUB's kernels).\n"
    """\
template <class KeysIn, class OffsetsOut, class LengthsOut, class NumRunsOut>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn d_in, OffsetsOut d_offsets_out,
                LengthsOut d_lengths_out, NumRunsOut d_num_runs_out, int num_items, cudaStream_t stream = 0)
{
  using OffsetT = int;
  using EqualT  = ::cuda::std::equal_to<>;
  using Hub     = policy_hub<::cub::detail::non_void_value_t<LengthsOut, OffsetT>, ::cub::detail::it_value_t<KeysIn>>;
  return ::cub::DeviceRleDispatch<KeysIn, OffsetsOut, LengthsOut, NumRunsOut, EqualT, OffsetT, Hub>::Dispatch(
    d_temp_storage, temp_storage_bytes, d_in, d_offsets_out, d_lengths_out, d_num_runs_out, EqualT{}, num_items,
    stream);
}
"""
)

_THREE_WAY_PARTITION_RUN = (
    "//! DevicePartition::If with two selection operators (three-way) with muh's hub (CUB's dispatch, CUB's kernels).\n"
    """\
template <class InputIt, class FirstOut, class SecondOut, class UnselectedOut, class NumSelectedOut, class NumItemsT,
          class SelectFirstOp, class SelectSecondOp>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_in, FirstOut d_first_part_out,
                SecondOut d_second_part_out, UnselectedOut d_unselected_out, NumSelectedOut d_num_selected_out,
                NumItemsT num_items, SelectFirstOp select_first_part_op, SelectSecondOp select_second_part_op,
                cudaStream_t stream = 0)
{
  using ChooseOffsetT = ::cub::detail::choose_signed_offset<NumItemsT>;
  using OffsetT       = typename ChooseOffsetT::type;
  if (cudaError_t error = ChooseOffsetT::is_exceeding_offset_type(num_items))
  {
    return error;
  }
  using Hub = policy_hub<::cub::detail::it_value_t<InputIt>,
                         ::cub::detail::three_way_partition::per_partition_offset_t>;
  return ::cub::DispatchThreeWayPartitionIf<InputIt, FirstOut, SecondOut, UnselectedOut, NumSelectedOut, SelectFirstOp,
                                            SelectSecondOp, OffsetT, Hub>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_in, d_first_part_out, d_second_part_out, d_unselected_out,
             d_num_selected_out, select_first_part_op, select_second_part_op, static_cast<OffsetT>(num_items), stream);
}
"""
)

_MERGE_RUN = (
    "//! DeviceMerge::MergeKeys (two sorted key sequences, a comparator) with muh's hub (CUB's dispatch,\n"
    "//! CUB's kernels).\n"
    """\
template <class KeysIn1, class KeysIn2, class KeysOut, class CompareOp = ::cuda::std::less<>>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, KeysIn1 d_keys_in1, ::cuda::std::int64_t num_keys1,
                KeysIn2 d_keys_in2, ::cuda::std::int64_t num_keys2, KeysOut d_keys_out, CompareOp compare_op = {},
                cudaStream_t stream = 0)
{
  using OffsetT = ::cuda::std::int64_t;
  using NoValue = ::cub::NullType*;
  using Hub     = policy_hub<::cub::detail::it_value_t<KeysIn1>, ::cub::NullType>;
  using Dispatch = ::cub::detail::merge::dispatch_t<KeysIn1, NoValue, KeysIn2, NoValue, KeysOut, NoValue, OffsetT,
                                                   CompareOp, Hub>;
  return Dispatch::
    dispatch(d_temp_storage, temp_storage_bytes, d_keys_in1, nullptr, num_keys1, d_keys_in2, nullptr, num_keys2,
             d_keys_out, nullptr, compare_op, stream);
}
"""
)

_ADJACENT_DIFFERENCE_RUN = (
    "//! DeviceAdjacentDifference::SubtractLeftCopy (no aliasing, each item minus its left neighbour) with muh's hub\n"
    "//! (CUB's dispatch, CUB's kernels).\n"
    """\
template <class InputIt, class OutputIt, class NumItemsT, class DifferenceOpT = ::cuda::std::minus<>>
cudaError_t run(void* d_temp_storage, size_t& temp_storage_bytes, InputIt d_input, OutputIt d_output,
                NumItemsT num_items, DifferenceOpT difference_op = {}, cudaStream_t stream = 0)
{
  using OffsetT = ::cub::detail::choose_offset_t<NumItemsT>;
  return ::cub::DispatchAdjacentDifference<InputIt, OutputIt, DifferenceOpT, OffsetT, ::cub::MayAlias::No,
                                           ::cub::ReadOption::Left, policy_hub<InputIt, false>>::
    Dispatch(d_temp_storage, temp_storage_bytes, d_input, d_output, static_cast<OffsetT>(num_items), difference_op,
             stream);
}
"""
)


#: The single-agent hubs (families listed here use ``agent.cuh.j2``).
AGENTS = {
    "reduce_by_key": Agent(
        ("device/dispatch/dispatch_reduce_by_key.cuh",),
        "reduce_by_key",
        "class ReductionOpT, class AccumT, class KeyT",
        "ReductionOpT, AccumT, KeyT",
        "KeyT",
        "ReduceByKeyPolicyT",
        "::cub::AgentReduceByKeyPolicy",
        ("threads", "items", "load", "modifier", "block", "delay"),
        value="AccumT",
        op="ReductionOpT",
        entry=_REDUCE_BY_KEY_RUN,
    ),
    "scan_by_key": Agent(
        ("device/dispatch/dispatch_scan_by_key.cuh",),
        "scan_by_key",
        "class KeysInputIteratorT, class AccumT, class ValueT, class ScanOpT",
        "KeysInputIteratorT, AccumT, ValueT, ScanOpT",
        "::cub::detail::it_value_t<KeysInputIteratorT>",
        "ScanByKeyPolicyT",
        "::cub::AgentScanByKeyPolicy",
        ("threads", "items", "load", "modifier", "block", "store", "delay"),
        value="AccumT",
        op="ScanOpT",
        entry=_SCAN_BY_KEY_RUN,
    ),
    "rle_encode": Agent(
        (
            "device/dispatch/dispatch_reduce_by_key.cuh",
            "device/dispatch/tuning/tuning_run_length_encode.cuh",
            "thrust/iterator/constant_iterator.h",  # the run lengths' input (a constant 1), as CUB's Encode
        ),
        "rle::encode",
        "class LengthT, class KeyT",
        "LengthT, KeyT",
        "KeyT",
        "ReduceByKeyPolicyT",
        "::cub::AgentReduceByKeyPolicy",
        ("threads", "items", "load", "modifier", "block", "delay"),
        entry=_RLE_ENCODE_RUN,
    ),
    "rle_non_trivial_runs": Agent(
        ("device/dispatch/dispatch_rle.cuh",),
        "rle::non_trivial_runs",
        "class LengthT, class KeyT",
        "LengthT, KeyT",
        "KeyT",
        "RleSweepPolicyT",
        "::cub::AgentRlePolicy",
        ("threads", "items", "load", "modifier", "store_time_slicing", "block", "delay"),
        entry=_RLE_NON_TRIVIAL_RUNS_RUN,
    ),
    "three_way_partition": Agent(
        ("device/dispatch/dispatch_three_way_partition.cuh",),
        "three_way_partition",
        "class InputT, class OffsetT",
        "InputT, OffsetT",
        "InputT",
        "ThreeWayPartitionPolicy",
        "::cub::AgentThreeWayPartitionPolicy",
        ("threads", "items", "load", "modifier", "block", "delay"),
        entry=_THREE_WAY_PARTITION_RUN,
    ),
    "unique_by_key": Agent(
        ("device/device_select.cuh",),
        "unique_by_key",
        "class KeyT, class ValueT",
        "KeyT, ValueT",
        "KeyT",
        "UniqueByKeyPolicyT",
        "::cub::AgentUniqueByKeyPolicy",
        ("threads", "items", "load", "modifier", "block", "delay"),
        value="ValueT",
        entry=_UNIQUE_BY_KEY_RUN,
    ),
    "merge_sort": Agent(
        ("device/dispatch/dispatch_merge_sort.cuh",),
        "merge_sort",
        "class KeyIteratorT",
        "KeyIteratorT",
        "::cub::detail::it_value_t<KeyIteratorT>",
        "MergeSortPolicy",
        "::cub::AgentMergeSortPolicy",
        ("threads", "items", "load", "modifier", "store"),
        entry=_MERGE_SORT_RUN,
    ),
    "merge": Agent(
        ("device/dispatch/dispatch_merge.cuh",),
        "merge",
        "class KeyT, class ValueT",
        "KeyT, ValueT",
        "KeyT",
        "merge_policy",
        "::cub::detail::merge::agent_policy_t",
        ("threads", "items", "load", "modifier", "store"),
        max_name="max_policy",
        entry=_MERGE_RUN,
    ),
    "adjacent_difference": Agent(
        ("device/dispatch/dispatch_adjacent_difference.cuh",),
        "adjacent_difference",
        "class InputIteratorT, bool MayAlias",
        "InputIteratorT, MayAlias",
        "::cub::detail::it_value_t<InputIteratorT>",
        "AdjacentDifferencePolicy",
        "::cub::AgentAdjacentDifferencePolicy",
        ("threads", "items", "load", "modifier", "store"),
        entry=_ADJACENT_DIFFERENCE_RUN,
    ),
}


def agent_args(family: str, fields: set[str]) -> list[str]:
    """The agent's template arguments: muh's value where the spec sets the dimension (``p.<dim>``, an
    enumeration converted to CUB's type, a delay to CUB's constructor), else CUB's own member (``C::…``,
    the member the family's CUB table names)."""
    table = catalog.FAMILIES[family].cub
    held = {m.dim: m.cub for m in table.cub_members}
    block = (
        "cub::BlockReduceAlgorithm"
        if catalog.FAMILIES[family].block_choices == catalog.BLOCK_REDUCE
        else "cub::BlockScanAlgorithm"
    )
    out = []
    for dim in AGENTS[family].dims:
        mine = dim in fields
        if catalog.DIMS[dim].kind == "delay":
            out.append(
                "::muh::cub::delay_t<p.delay.kind, p.delay.ns, p.delay.l2_write_latency>"
                if mine
                else f"typename C::{held[dim]}"
            )
        elif dim in cub.HUB_ENUM:
            cub_type = block if dim == "block" else cub.HUB_ENUM[dim]
            out.append(f"::muh::cub::to<::{cub_type}>::from(p.{dim})" if mine else f"C::{held[dim]}")
        else:
            out.append(f"p.{dim}" if mine else f"C::{held[dim]}")
    return out
