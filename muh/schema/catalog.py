"""The catalogue of CUB-style algorithm families and their tunable dimensions (table-driven).

Names follow CCCL 3.x's tuning headers (cub/device/dispatch/tuning/*.cuh) and the tuning
dimensions listed in CCCL main; values are *nominal 4-byte* values unless a dimension says
otherwise, scaled per element size by the family's scaling rule (muh/derive/scaling.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
from muh.families.scan import STAGES as SCAN_STAGES  # noqa: E402
HISTOGRAM_MEMORY = ("smem", "gmem", "blended")
RADIX_RANK = ("basic", "memoize", "match", "match_atomic_or", "match_early_counts_any", "match_early_counts_atomic_or")
# CCCL's look-back delay constructors, in the order of the benchmark's `dcid` ids 0..7, then the
# reduce-by-key constructor (fixed delay on sm_80 only; CCCL's untuned by-key default; no dcid).
DELAY_KINDS = ("no_delay", "fixed", "backoff", "backoff_jitter", "backoff_jitter_window",
               "backon_jitter_window", "backon_jitter", "backon", "reduce_by_key")


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
    "stage": Dim("enum", "where a scan tile waits for its look-back: registers, or shared memory filled by the "
                 "bulk copy engine (ublkcp: sm_90+)", SCAN_STAGES),
    "passes": Dim("int", "register passes over a tile staged in shared memory (stage = ublkcp): "
                  "tile = threads x items x passes", lo=1, hi=64),
    "stages": Dim("int", "tiles a block of a stage = ublkcp scan holds in shared memory: 1, one tile per "
                  "block; 3 or more, a resident grid whose blocks pipeline a ring of that many tiles", lo=1, hi=16),
    "stage_from": Dim("bytes", "input size from which a stage = ublkcp scan stages its tiles in shared memory "
                      "(below: the register kernel of the same threads x items)"),
    "block": Dim("enum", "block-wide reduce or scan algorithm", BLOCK_REDUCE + BLOCK_SCAN[:1] + BLOCK_SCAN[2:]),
    "scaling": Dim("enum", "how nominal 4-byte values scale with the element size", SCALING),
    "delay": Dim("delay", "decoupled look-back delay: kind(ns = …, l2_write_latency = …)"),
    "bytes_in_flight": Dim("bytes", "minimum bytes in flight per SM (transform)"),
    "algorithm": Dim("enum", "transform algorithm", TRANSFORM_ALGORITHMS),
    "radix_bits": Dim("int", "radix bits per pass", lo=1, hi=16),
    "bits_per_pass": Dim("int", "key bits resolved per pass (topk radix select)", lo=1, hi=16),
    "rank": Dim("enum", "radix ranking algorithm", RADIX_RANK),
    "pixels_per_thread": Dim("int", "pixels per thread (histogram)", lo=1, hi=64),
    "rle_compress": Dim("bool", "run-length compress samples before binning (histogram)"),
    "memory": Dim("enum", "where privatised histograms live", HISTOGRAM_MEMORY),
    "sub_histograms": Dim("int", "interleaved copies of a block's histogram, thread t counting in copy t mod copies "
                                 "(muh's; unset: one per shared-memory bank for 1-byte samples, else 1)", lo=1, hi=64,
                          unset="the kernels derive it (a copy per bank for 1-byte samples, else 1)"),
    "work_stealing": Dim("bool", "dynamic tile assignment (histogram)"),
    "prefer_pow2_bits": Dim("bool", "round buffer-size bit fields to powers of two (batch_memcpy)"),
    "buffers_per_thread": Dim("int", "buffers per thread (batch_memcpy)", lo=1, hi=64),
    "bytes_per_thread": Dim("int", "bytes per thread for warp-/thread-level copies (batch_memcpy)", lo=1, hi=1024),
    "block_tile": Dim("bytes", "bytes per block-level tile (batch_memcpy)"),
    "warp_threshold": Dim("bytes", "buffers at least this large are copied by a warp (batch_memcpy)"),
    "block_threshold": Dim("bytes", "buffers at least this large are copied by a block (batch_memcpy)"),
    "threads_per_segment": Dim("int", "threads that sort one small or medium segment (segmented sort)", lo=1, hi=1024),
    "store_time_slicing": Dim("bool", "time-slice warp stores (rle non-trivial runs)"),
    "use_onesweep": Dim("bool", "sort with the one-sweep passes, else upsweep / scan / downsweep (radix sort; CUB's ONESWEEP)",
                        whole_policy=True),
}


@dataclass(frozen=True)
class Family:
    doc: str
    dims: tuple[str, ...]
    scaling: str = "mem_bound"  # default scaling rule
    stages_tile: bool = False  # the tile (threads × items × size) is staged in shared memory
    subs: tuple[str, ...] = ()  # named sub-policies (blocks inside a policy)
    block_choices: tuple[str, ...] = ()
    cub_header: str | None = None  # the CCCL 3.0 tuning header, where one exists
    uses_warp_shuffles: bool = True
    value_bytes: int | None = None  # by-key scaling: the second input's fixed size (None: the element's)
    key_value: bool = False  # keys and values of (possibly) different types: `values = […]`, `policy <key>.<value>`
    notes: tuple[str, ...] = field(default_factory=tuple)


_RED = ("threads", "items", "vec", "block", "modifier", "scaling")
_SCAN = ("threads", "items", "load", "store", "modifier", "block", "delay", "scaling")
_LOOKBACK = ("threads", "items", "load", "modifier", "block", "delay", "scaling")
_SORT = ("threads", "items", "radix_bits", "rank", "load", "modifier", "scaling")
_MERGE = ("threads", "items", "load", "store", "modifier", "scaling")

FAMILIES: dict[str, Family] = {
    "reduce": Family("DeviceReduce", _RED, block_choices=BLOCK_REDUCE, cub_header="tuning_reduce.cuh"),
    "segmented_reduce": Family("DeviceSegmentedReduce", _RED, block_choices=BLOCK_REDUCE, cub_header="tuning_reduce.cuh"),
    "scan": Family("DeviceScan (decoupled look-back)", _SCAN + ("vec", "window", "store_modifier", "stage", "passes", "stages", "stage_from"), stages_tile=True,
                   block_choices=BLOCK_SCAN, cub_header="tuning_scan.cuh"),
    "scan_by_key": Family("DeviceScan::*ByKey", _SCAN, stages_tile=True, block_choices=BLOCK_SCAN, cub_header="tuning_scan_by_key.cuh", key_value=True),
    "segmented_scan": Family("DeviceSegmentedScan (newer CCCL)", _SCAN[:-2] + ("scaling",), stages_tile=True, block_choices=BLOCK_SCAN),
    "reduce_by_key": Family("DeviceReduce::ReduceByKey", _LOOKBACK, stages_tile=True, block_choices=BLOCK_SCAN, cub_header="tuning_reduce_by_key.cuh", key_value=True),
    "rle_encode": Family("DeviceRunLengthEncode::Encode", _LOOKBACK, stages_tile=True, block_choices=BLOCK_SCAN, cub_header="tuning_run_length_encode.cuh",
                         value_bytes=4),  # int run lengths
    "rle_non_trivial_runs": Family("DeviceRunLengthEncode::NonTrivialRuns", _LOOKBACK + ("store_time_slicing",), stages_tile=True, block_choices=BLOCK_SCAN, cub_header="tuning_run_length_encode.cuh"),
    "select_if": Family("DeviceSelect::If", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_select_if.cuh"),
    "select_flagged": Family("DeviceSelect::Flagged", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_select_if.cuh"),
    "partition": Family("DevicePartition::If / Flagged", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_select_if.cuh"),
    "three_way_partition": Family("DevicePartition::If (three-way)", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_three_way_partition.cuh"),
    "unique": Family("DeviceSelect::Unique", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_select_if.cuh"),
    "unique_by_key": Family("DeviceSelect::UniqueByKey", _LOOKBACK, stages_tile=True, scaling="nominal_4b", block_choices=BLOCK_SCAN, cub_header="tuning_unique_by_key.cuh", key_value=True),
    "radix_sort": Family("DeviceRadixSort", _SORT + ("use_onesweep",), scaling="reg_bound", stages_tile=True,
                         subs=("onesweep", "histogram", "exclusive_sum", "downsweep", "upsweep", "single_tile"), cub_header="tuning_radix_sort.cuh"),
    "radix_sort_pairs": Family("DeviceRadixSort::SortPairs (values of the key's type)", _SORT + ("use_onesweep",), scaling="reg_bound", stages_tile=True,
                               subs=("onesweep", "histogram", "exclusive_sum", "downsweep", "upsweep", "single_tile"), cub_header="tuning_radix_sort.cuh", key_value=True),
    "segmented_radix_sort": Family("DeviceSegmentedRadixSort", _SORT, scaling="reg_bound", stages_tile=True,
                                   subs=("segmented", "alt_segmented"), cub_header="tuning_radix_sort.cuh"),
    "segmented_sort": Family("DeviceSegmentedSort", _SORT + ("block", "threads_per_segment"), scaling="reg_bound", stages_tile=True,
                             subs=("large", "small", "medium"), block_choices=BLOCK_SCAN, cub_header="tuning_segmented_sort.cuh"),
    "merge_sort": Family("DeviceMergeSort", _MERGE, stages_tile=True, cub_header="tuning_merge_sort.cuh"),
    "merge": Family("DeviceMerge", _MERGE, stages_tile=True, cub_header="tuning_merge.cuh"),
    "histogram": Family("DeviceHistogram", ("threads", "pixels_per_thread", "vec", "load", "modifier", "rle_compress", "memory", "work_stealing",
                                                "sub_histograms"),
                        scaling="none", cub_header="tuning_histogram.cuh"),
    "transform": Family("DeviceTransform", ("threads", "items", "vec", "bytes_in_flight", "algorithm"), scaling="none", cub_header="tuning_transform.cuh"),
    "for_each": Family("DeviceFor::ForEach (256 threads × 2 items in CCCL)", ("threads", "items"), scaling="none", cub_header="tuning_for.cuh"),
    "for_each_in_extents": Family("DeviceFor::ForEachInExtents", ("threads", "items"), scaling="none"),
    "batch_memcpy": Family("DeviceMemcpy::Batched / DeviceCopy::Batched",
                           ("threads", "buffers_per_thread", "bytes_per_thread", "prefer_pow2_bits", "block_tile", "warp_threshold",
                            "block_threshold"),
                           scaling="none", subs=("small", "large"), cub_header="tuning_batch_memcpy.cuh"),
    "adjacent_difference": Family("DeviceAdjacentDifference", _MERGE, scaling="nominal_8b", stages_tile=True,
                                  cub_header="tuning_adjacent_difference.cuh"),
    "find": Family("DeviceFind (newer CCCL)", ("threads", "items", "vec", "modifier"), scaling="none"),
    "topk": Family("DeviceTopK (newer CCCL): per-row top-k by radix select", ("threads", "items", "load", "block", "bits_per_pass"),
                   scaling="none", block_choices=BLOCK_SCAN),
    # The LLM ops' own policies (muh's, no CCCL counterpart; records muh/families/rms_norm/ and
    # silu_and_mul/): values are literal (no scaling); buckets are by rows x hidden.
    "rms_norm": Family("LLM row ops, one block per row: rms_norm, fused_add_rms_norm, GemmaRMSNorm, head-wise "
                       "and gated norms, softmax (threads: the row block's upper bound; items: vectors per "
                       "thread before a warp is added; vec: elements per vector load)",
                       ("threads", "items", "vec"), scaling="none", uses_warp_shuffles=True),
    "silu_and_mul": Family("LLM element-wise gate ops: silu_and_mul, the sigmoid-gated combine (gate_add) "
                           "(threads: block; items: vectors per thread; vec: elements per vector load)",
                           ("threads", "items", "vec"), scaling="none", uses_warp_shuffles=False),
}


def enum_choices(family: str, dim: str) -> tuple[str, ...]:
    fam = FAMILIES[family]
    if dim == "block" and fam.block_choices:
        return fam.block_choices
    return DIMS[dim].choices
