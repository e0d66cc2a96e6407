"""The catalogue of CUB-style algorithm families and their tunable dimensions (table-driven).

Names follow CCCL 3.x's tuning headers (cub/device/dispatch/tuning/*.cuh) and the tuning
dimensions listed in CCCL main; values are *nominal 4-byte* values unless a dimension says
otherwise, scaled per element size by the family's scaling rule (muh/derive/scaling.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from muh.families import cub, histogram, radix_sort, reduce, scan, segmented_reduce, transform
from muh.families.cub import CubTable
from muh.runtime import dtypes

# -- element types: name -> bytes, from the one table (muh/runtime/dtypes.py) -----------------------
DTYPES: dict[str, int] = dict(dtypes.SIZE)
DEFAULT_TYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64")
OPS = ("plus", "max", "min", "mul", "bit_and", "bit_or", "bit_xor")

# -- enumerations (CUB's names in lower case) ------------------------------------------------------
LOAD_ALGORITHMS = ("direct", "striped", "vectorize", "transpose", "warp_transpose", "warp_transpose_timesliced")
STORE_ALGORITHMS = LOAD_ALGORITHMS
LOAD_MODIFIERS = ("default", "ca", "cg", "cs", "cv", "ldg", "volatile")
STORE_MODIFIERS = ("default", "wb", "cg", "cs", "wt", "volatile")
BLOCK_REDUCE = ("warp_reductions", "warp_reductions_nondeterministic", "raking", "raking_commutative_only")
BLOCK_SCAN = ("warp_scans", "raking", "raking_memoize")
SCALING = ("mem_bound", "reg_bound", "nominal_4b", "nominal_8b", "none", "combined", "combined_ceil")
TRANSFORM_ALGORITHMS = ("prefetch", "vectorized", "ublkcp", "fallback_for")
# Where a scan tile waits for its look-back (the scan record owns the list: the kernel implements it).
SCAN_STAGES = scan.STAGES
HISTOGRAM_MEMORY = ("smem", "gmem", "blended")
RADIX_RANK = ("basic", "memoize", "match", "match_atomic_or", "match_early_counts_any", "match_early_counts_atomic_or")
# CCCL's look-back delay constructors, in the order of the benchmark's `dcid` ids 0..7, then the
# reduce-by-key constructor (fixed delay on sm_80 only; CCCL's untuned by-key default; no dcid).
DELAY_KINDS = (
    "no_delay",
    "fixed",
    "backoff",
    "backoff_jitter",
    "backoff_jitter_window",
    "backon_jitter_window",
    "backon_jitter",
    "backon",
    "reduce_by_key",
)


@dataclass(frozen=True)
class Dim:
    """A tunable dimension: the one place its kind, choices and bounds are written (the policy model,
    muh/schema/models.py PolicyValues, is made from DIMS)."""

    kind: str  # "int" | "bool" | "enum" | "bytes" | "delay"
    doc: str
    choices: tuple[str, ...] = ()
    lo: int | None = None
    hi: int | None = None
    per_thread_of_warp: bool = False  # threads: multiple of the warp size
    whole_policy: bool = False  # a choice about the whole policy: sub-policies do not inherit it
    unset: str | None = None  # what leaving it unset means (the tuning header's zero stands for it: no warning)


DIMS: dict[str, Dim] = {
    "threads": Dim("int", "threads per block (nominal for 4-byte items)", lo=1, hi=4096, per_thread_of_warp=True),
    "items": Dim("int", "items per thread (nominal for 4-byte items)", lo=1, hi=1024),
    "vec": Dim("int", "items per vectorised load", lo=1, hi=16),
    "load": Dim("enum", "BlockLoad algorithm", LOAD_ALGORITHMS),
    "store": Dim("enum", "BlockStore algorithm", STORE_ALGORITHMS),
    "modifier": Dim("enum", "cache load modifier (ldg = read-only path)", LOAD_MODIFIERS),
    "store_modifier": Dim("enum", "cache store modifier (cs = streaming, evict first)", STORE_MODIFIERS),
    "window": Dim("int", "look-back: predecessors read per poll (unset: one per lane of the warp)", lo=1, hi=1024),
    "stage": Dim(
        "enum",
        "where a scan tile waits for its look-back: registers, or shared memory filled by the "
        "bulk copy engine (ublkcp: sm_90+)",
        SCAN_STAGES,
    ),
    "passes": Dim(
        "int",
        "register passes over a tile staged in shared memory (stage = ublkcp): tile = threads x items x passes",
        lo=1,
        hi=64,
    ),
    "stages": Dim(
        "int",
        "tiles a block of a stage = ublkcp scan holds in shared memory: 1, one tile per "
        "block; 3 or more, a resident grid whose blocks pipeline a ring of that many tiles",
        lo=1,
        hi=16,
    ),
    "stage_from": Dim(
        "bytes",
        "input size from which a stage = ublkcp scan stages its tiles in shared memory "
        "(below: the register kernel of the same threads x items)",
    ),
    "block": Dim("enum", "block-wide reduce or scan algorithm", BLOCK_REDUCE + BLOCK_SCAN[:1] + BLOCK_SCAN[2:]),
    "scaling": Dim("enum", "how nominal 4-byte values scale with the element size", SCALING),
    "delay": Dim("delay", "decoupled look-back delay: kind(ns = …, l2_write_latency = …)"),
    "bytes_in_flight": Dim("bytes", "minimum bytes in flight per SM (transform)"),
    "algorithm": Dim("enum", "transform algorithm", TRANSFORM_ALGORITHMS),
    "radix_bits": Dim("int", "radix bits per pass", lo=1, hi=16),
    "bits_per_pass": Dim("int", "key bits resolved per pass (topk radix select)", lo=1, hi=16),
    "warp_cols": Dim(
        "int",
        "rows of at most this many columns take one warp each, threads / warp rows a block (topk; 0: off)",
        lo=0,
        hi=8192,
        unset="every row takes a block (no small-row path)",
    ),
    "rank": Dim("enum", "radix ranking algorithm", RADIX_RANK),
    "pixels_per_thread": Dim("int", "pixels per thread (histogram)", lo=1, hi=64),
    "rle_compress": Dim("bool", "run-length compress samples before binning (histogram)"),
    "memory": Dim("enum", "where privatised histograms live", HISTOGRAM_MEMORY),
    "sub_histograms": Dim(
        "int",
        "interleaved copies of a block's histogram, thread t counting in copy t mod copies "
        "(muh's; unset: one per shared-memory bank for 1-byte samples, else 1)",
        lo=1,
        hi=64,
        unset="the kernels derive it (a copy per bank for 1-byte samples, else 1)",
    ),
    "work_stealing": Dim("bool", "dynamic tile assignment (histogram)"),
    "prefer_pow2_bits": Dim("bool", "round buffer-size bit fields to powers of two (batch_memcpy)"),
    "buffers_per_thread": Dim("int", "buffers per thread (batch_memcpy)", lo=1, hi=64),
    "bytes_per_thread": Dim("int", "bytes per thread for warp-/thread-level copies (batch_memcpy)", lo=1, hi=1024),
    "block_tile": Dim("bytes", "bytes per block-level tile (batch_memcpy)"),
    "warp_threshold": Dim("bytes", "buffers at least this large are copied by a warp (batch_memcpy)"),
    "block_threshold": Dim("bytes", "buffers at least this large are copied by a block (batch_memcpy)"),
    "threads_per_segment": Dim("int", "threads that sort one small or medium segment (segmented sort)", lo=1, hi=1024),
    "store_time_slicing": Dim("bool", "time-slice warp stores (rle non-trivial runs)"),
    "use_onesweep": Dim(
        "bool",
        "sort with the one-sweep passes, else upsweep / scan / downsweep (radix sort; CUB's ONESWEEP)",
        whole_policy=True,
    ),
}


@dataclass(frozen=True)
class Tuning:
    """An algorithm family's catalogue entry: what a spec's `algorithm <family>` may tune and how its values
    scale. A family CUB tunes takes its dimensions and sub-policies from its CUB table (``cub``)."""

    doc: str
    dims: tuple[str, ...]
    scaling: str = "mem_bound"  # default scaling rule
    stages_tile: bool = False  # the tile (threads × items × size) is staged in shared memory
    subs: tuple[str, ...] = ()  # named sub-policies (blocks inside a policy)
    block_choices: tuple[str, ...] = ()
    uses_warp_shuffles: bool = True
    value_bytes: int | None = None  # by-key scaling: the second input's fixed size (None: the element's)
    key_value: bool = False  # keys and values of (possibly) different types: `values = […]`, `policy <key>.<value>`
    notes: tuple[str, ...] = field(default_factory=tuple)
    cub: CubTable | None = None  # how it corresponds to CUB (CCCL 3.0.1), where CUB tunes it

    @property
    def cub_header(self) -> str | None:
        """The CCCL 3.0 tuning header, where one exists."""
        return self.cub.header if self.cub else None


def _cub(doc: str, table: CubTable, own_subs: tuple[str, ...] = (), **kw) -> Tuning:
    """The entry of a family CUB tunes: dimensions and sub-policies from its table, then muh's own
    sub-policies (``own_subs``: CUB has no member for them, so parity compares none of their values)."""
    return Tuning(doc, table.dims, subs=tuple(s.name for s in table.subs) + tuple(own_subs), cub=table, **kw)


def _select(flags: str, impl: str) -> str:
    """DeviceSelect / DevicePartition's hub (rejects dropped, 32-bit per-partition offsets)."""
    return (
        f"typename cub::detail::select::policy_hub<T, {flags}, std::int32_t, false, cub::SelectImpl::{impl}>::MaxPolicy"
    )


_LOOKBACK = dict(stages_tile=True, block_choices=BLOCK_SCAN)
_SELECTS = dict(stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN)
_BY_KEY_SUMS = ("int32", "int64", "struct16a8")  # values that are summed: types that accumulate in themselves
_PAIR_VALUES = ("uint8", "uint16", "uint32", "uint64", "struct16a8")  # a value type per size class, and a record
_RADIX_SUBS = radix_sort.SUBS  # the family's (muh/families/radix_sort/): one agent policy per pass kind
_RADIX_MEMBERS = radix_sort.MEMBERS
_SM = "SmallAndMediumSegmentedSortPolicyT"
_MERGE = cub.TILE + cub.members(("scaling", None))


def _table(entry: str, header: str, hub: str, agent: str | None, members, types=cub.PROBED, **kw) -> CubTable:
    return CubTable(entry, header, hub, agent, types, members, **kw)


FAMILIES: dict[str, Tuning] = {
    "reduce": _cub("DeviceReduce", reduce.CUB, block_choices=BLOCK_REDUCE),
    "segmented_reduce": _cub(
        "DeviceSegmentedReduce", segmented_reduce.CUB, block_choices=BLOCK_REDUCE, own_subs=segmented_reduce.SUBS
    ),
    "scan": _cub("DeviceScan (decoupled look-back)", scan.CUB, stages_tile=True, block_choices=BLOCK_SCAN),
    "scan_by_key": _cub(
        "DeviceScan::*ByKey",
        _table(
            "DeviceScan::InclusiveSumByKey / ExclusiveSumByKey (keys T*, values and accumulator of the value type)",
            "tuning_scan_by_key.cuh",
            "typename cub::detail::scan_by_key::policy_hub<key_of<T>*, value_of<T>, value_of<T>, Op>::MaxPolicy",
            "ScanByKeyPolicyT",
            cub.SCAN,
            cub.SUMS,
            takes_op=True,
            any_type=True,
            values=_BY_KEY_SUMS,
        ),
        stages_tile=True,
        block_choices=BLOCK_SCAN,
        key_value=True,
    ),
    "segmented_scan": Tuning(
        "DeviceSegmentedScan (newer CCCL)",
        ("threads", "items", "load", "store", "modifier", "block", "scaling"),
        stages_tile=True,
        block_choices=BLOCK_SCAN,
    ),
    "reduce_by_key": _cub(
        "DeviceReduce::ReduceByKey",
        _table(
            "DeviceReduce::ReduceByKey (the hub takes the accumulator, then the key type)",
            "tuning_reduce_by_key.cuh",
            "typename cub::detail::reduce_by_key::policy_hub<Op, value_of<T>, key_of<T>>::MaxPolicy",
            "ReduceByKeyPolicyT",
            cub.LOOKBACK,
            cub.SUMS,
            takes_op=True,
            any_type=True,
            values=_BY_KEY_SUMS,
        ),
        **_LOOKBACK,
        key_value=True,
    ),
    "rle_encode": _cub(
        "DeviceRunLengthEncode::Encode",
        _table(
            "DeviceRunLengthEncode::Encode (int lengths)",
            "tuning_run_length_encode.cuh",
            "typename cub::detail::rle::encode::policy_hub<int, T>::MaxPolicy",
            "ReduceByKeyPolicyT",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_LOOKBACK,
        value_bytes=4,
    ),  # int run lengths
    "rle_non_trivial_runs": _cub(
        "DeviceRunLengthEncode::NonTrivialRuns",
        _table(
            "DeviceRunLengthEncode::NonTrivialRuns (int offsets and lengths)",
            "tuning_run_length_encode.cuh",
            "typename cub::detail::rle::non_trivial_runs::policy_hub<int, T>::MaxPolicy",
            "RleSweepPolicyT",
            cub.LOOKBACK + cub.members(("store_time_slicing", "STORE_WARP_TIME_SLICING")),
            any_type=True,
        ),
        **_LOOKBACK,
    ),
    "select_if": _cub(
        "DeviceSelect::If",
        _table(
            "DeviceSelect::If (no flags)",
            "tuning_select_if.cuh",
            _select("cub::NullType", "Select"),
            "SelectIfPolicyT",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_SELECTS,
    ),
    "select_flagged": _cub(
        "DeviceSelect::Flagged",
        _table(
            "DeviceSelect::Flagged (char flags)",
            "tuning_select_if.cuh",
            _select("char", "Select"),
            "SelectIfPolicyT",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_SELECTS,
    ),
    "partition": _cub(
        "DevicePartition::If / Flagged",
        _table(
            "DevicePartition::If with one output (rejects kept)",
            "tuning_select_if.cuh",
            _select("cub::NullType", "Partition"),
            "SelectIfPolicyT",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_SELECTS,
    ),
    "three_way_partition": _cub(
        "DevicePartition::If (three-way)",
        _table(
            "DevicePartition::If with two selection operators (int32 per-partition offsets)",
            "tuning_three_way_partition.cuh",
            "typename cub::detail::three_way_partition::policy_hub<T, std::int32_t>::MaxPolicy",
            "ThreeWayPartitionPolicy",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_SELECTS,
    ),
    "unique": _cub(
        "DeviceSelect::Unique",
        _table(
            "DeviceSelect::Unique (the equality operator is not part of the hub)",
            "tuning_select_if.cuh",
            _select("cub::NullType", "Select"),
            "SelectIfPolicyT",
            cub.LOOKBACK,
            any_type=True,
        ),
        **_SELECTS,
    ),
    "unique_by_key": _cub(
        "DeviceSelect::UniqueByKey",
        _table(
            "DeviceSelect::UniqueByKey",
            "tuning_unique_by_key.cuh",
            "typename cub::detail::unique_by_key::policy_hub<key_of<T>, value_of<T>>::MaxPolicy",
            "UniqueByKeyPolicyT",
            cub.LOOKBACK,
            any_type=True,
            values=_PAIR_VALUES,
        ),
        **_SELECTS,
        key_value=True,
    ),
    "radix_sort": _cub("DeviceRadixSort", radix_sort.CUB, scaling="reg_bound", stages_tile=True),
    "radix_sort_pairs": _cub(
        "DeviceRadixSort::SortPairs (values of the key's type)",
        _table(
            "DeviceRadixSort::SortPairs",
            "tuning_radix_sort.cuh",
            "typename cub::detail::radix::policy_hub<key_of<T>, value_of<T>, O>::MaxPolicy",
            None,
            _RADIX_MEMBERS,
            subs=_RADIX_SUBS,
            takes_offset=True,
            values=_PAIR_VALUES,
        ),
        scaling="reg_bound",
        stages_tile=True,
        key_value=True,
    ),
    "segmented_radix_sort": _cub(
        "DeviceSegmentedRadixSort",
        _table(
            "DeviceSegmentedRadixSort::SortKeys (int offsets: the radix hub's segmented passes)",
            "tuning_radix_sort.cuh",
            "typename cub::detail::radix::policy_hub<T, cub::NullType, int>::MaxPolicy",
            None,
            cub.SORT,
            subs=tuple(
                cub.sub(s, t, "threads", "items", "radix_bits", "rank", "load", "modifier")
                for s, t in (("segmented", "SegmentedPolicy"), ("alt_segmented", "AltSegmentedPolicy"))
            ),
        ),
        scaling="reg_bound",
        stages_tile=True,
    ),
    "segmented_sort": _cub(
        "DeviceSegmentedSort",
        _table(
            "DeviceSegmentedSort::SortKeys (keys only; the chain policy holds the sub-policies)",
            "tuning_segmented_sort.cuh",
            "typename cub::detail::segmented_sort::policy_hub<T, cub::NullType>::MaxPolicy",
            None,
            cub.SORT + cub.members(("block", None), ("threads_per_segment", None)),
            subs=(
                cub.sub(
                    "large", "LargeSegmentPolicy", "threads", "items", "radix_bits", "rank", "load", "modifier", "block"
                ),
            )
            + tuple(
                cub.sub(
                    s,
                    f"{_SM}::{t}",
                    ("threads", f"{_SM}::BLOCK_THREADS"),
                    "threads_per_segment",
                    "items",
                    "load",
                    "modifier",
                )
                for s, t in (("small", "SmallPolicyT"), ("medium", "MediumPolicyT"))
            ),
        ),
        scaling="reg_bound",
        stages_tile=True,
        block_choices=BLOCK_SCAN,
    ),
    "merge_sort": _cub(
        "DeviceMergeSort",
        _table(
            "DeviceMergeSort::SortKeys on T*",
            "tuning_merge_sort.cuh",
            "typename cub::detail::merge_sort::policy_hub<T*>::MaxPolicy",
            "MergeSortPolicy",
            _MERGE,
            any_type=True,
        ),
        stages_tile=True,
    ),
    "merge": _cub(
        "DeviceMerge",
        _table(
            "DeviceMerge::MergeKeys (no values)",
            "tuning_merge.cuh",
            "typename cub::detail::merge::policy_hub<T, cub::NullType>::max_policy",
            "merge_policy",
            _MERGE,
            any_type=True,
        ),
        stages_tile=True,
    ),
    "histogram": _cub("DeviceHistogram", histogram.CUB, scaling="none"),
    "transform": _cub("DeviceTransform", transform.CUB, scaling="none"),
    "for_each": _cub(
        "DeviceFor::ForEach (256 threads × 2 items in CCCL)",
        _table(
            "DeviceFor::ForEach (one hub for every type)",
            "tuning_for.cuh",
            "cub::detail::for_each::policy_hub_t::MaxPolicy",
            "for_policy_t",
            cub.members(("threads", "block_threads"), ("items", "items_per_thread")),
            any_type=True,
        ),
        scaling="none",
    ),
    "for_each_in_extents": Tuning("DeviceFor::ForEachInExtents", ("threads", "items"), scaling="none"),
    "batch_memcpy": _cub(
        "DeviceMemcpy::Batched / DeviceCopy::Batched",
        _table(
            "DeviceMemcpy::Batched (uint32 buffer and block offsets; one hub for every type: probed once)",
            "tuning_batch_memcpy.cuh",
            "typename cub::detail::batch_memcpy::policy_hub<std::uint32_t, std::uint32_t>::MaxPolicy",
            None,
            cub.members(
                *(
                    (d, None)
                    for d in (
                        "threads",
                        "buffers_per_thread",
                        "bytes_per_thread",
                        "prefer_pow2_bits",
                        "block_tile",
                        "warp_threshold",
                        "block_threshold",
                    )
                )
            ),
            types=("uint8",),
            subs=(
                cub.sub(
                    "small",
                    "AgentSmallBufferPolicyT",
                    "threads",
                    "buffers_per_thread",
                    ("bytes_per_thread", "AgentSmallBufferPolicyT::TLEV_BYTES_PER_THREAD"),
                    "prefer_pow2_bits",
                    "block_tile",
                    "warp_threshold",
                    "block_threshold",
                ),
                cub.sub(
                    "large",
                    "AgentLargeBufferPolicyT",
                    "threads",
                    ("bytes_per_thread", "AgentLargeBufferPolicyT::BYTES_PER_THREAD"),
                ),
            ),
        ),
        scaling="none",
    ),
    "adjacent_difference": _cub(
        "DeviceAdjacentDifference",
        _table(
            "DeviceAdjacentDifference::SubtractLeftCopy (input and output do not alias)",
            "tuning_adjacent_difference.cuh",
            "typename cub::detail::adjacent_difference::policy_hub<T*, false>::MaxPolicy",
            "AdjacentDifferencePolicy",
            _MERGE,
            any_type=True,
        ),
        scaling="nominal_8b",
        stages_tile=True,
    ),
    "find": Tuning("DeviceFind (newer CCCL)", ("threads", "items", "vec", "modifier"), scaling="none"),
    "topk": Tuning(
        "DeviceTopK (newer CCCL): per-row top-k by radix select",
        ("threads", "items", "load", "block", "bits_per_pass", "warp_cols"),
        scaling="none",
        block_choices=BLOCK_SCAN,
    ),
    # The LLM ops' own policies (muh's, no CCCL counterpart; records muh/families/rms_norm/ and
    # silu_and_mul/): values are literal (no scaling); buckets are by rows x hidden.
    "rms_norm": Tuning(
        "LLM row ops, one block per row: rms_norm, fused_add_rms_norm, GemmaRMSNorm, head-wise "
        "and gated norms, softmax (threads: the row block's upper bound; items: vectors per "
        "thread before a warp is added; vec: elements per vector load)",
        ("threads", "items", "vec"),
        scaling="none",
        uses_warp_shuffles=True,
    ),
    "silu_and_mul": Tuning(
        "LLM element-wise gate ops: silu_and_mul, the sigmoid-gated combine (gate_add) "
        "(threads: block; items: vectors per thread; vec: elements per vector load)",
        ("threads", "items", "vec"),
        scaling="none",
        uses_warp_shuffles=False,
    ),
}


def enum_choices(family: str, dim: str) -> tuple[str, ...]:
    fam = FAMILIES[family]
    if dim == "block" and fam.block_choices:
        return fam.block_choices
    return DIMS[dim].choices
