"""segmented_reduce: one value per segment [begin[i], end[i]) of one input (CUB DeviceSegmentedReduce
semantics): sum, min, max, argmin, argmax; 32- or 64-bit offsets.

What each segment gives is CUB's: a fold from CUB's initial value (sum 0, min
``numeric_limits<T>::max()``, max ``lowest()``, argmin {1, max()}, argmax {1, lowest()}), so an empty
segment (end <= begin) gives that value; argmin/argmax give cub::KeyValuePair's numbers — the offset in
the segment (as int64, in its own tensor) of the first smallest (largest) value. Sums accumulate as the
reduce family does (float for float16/bfloat16).

Segment-size classes, each from the spec's policy (segmented_reduce.cuh says how): a thread per segment up
to ``small.items`` elements (sub-policy ``small``: its block ``threads`` and ``items``), a warp up to the
warp size × ``warp.items`` (sub-policy ``warp``), a block up to the policy's ``threads`` × ``one_block.items``
(sub-policy ``one_block``: the segment whole, CUB's shape), many blocks beyond (the policy's own tile,
``threads`` × ``items``, CUB's SegmentedReducePolicy = the reduce hub's ReducePolicy, spread over the GPU).
Which launches run depends on the segment count alone (the host never reads the offsets): at most
``threads`` segments (``kFewSegments``) are one launch, a block per segment up to the block bound or the
grid's even share of tiles, runs of that share for a longer one; more segments run the three-launch path
(thread, warp, then the tile list). ``vec`` (reduce's rule, base.load_vec: at most 16-byte loads, scalar
where ``items`` is not a multiple of it) sizes the loads of full tiles of a segment whose start is aligned
to them; other segments, and every partial tile, load one element at a time (a segment may start anywhere).
"""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import cub, reduce
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, load_vec, param, record, warp_checks
from muh.families.reduce import MAX_GRID
from muh.runtime import dtypes as DT

# DeviceSegmentedReduce's policy is the reduce hub's SegmentedReducePolicy (= its ReducePolicy in CCCL 3.0.1,
# cub/device/dispatch/tuning/tuning_reduce.cuh): reduce's members. The sub-policies are muh's own.
CUB = cub.CubTable(
    "DeviceSegmentedReduce::Sum (int offsets; the reduce hub's segmented policy)",
    reduce.CUB.header,
    hub="typename cub::detail::reduce::policy_hub<T, typename std::make_signed<O>::type, Op>::MaxPolicy",
    agent="SegmentedReducePolicy",
    types=cub.SUMS,
    members=reduce.CUB.members,
    takes_op=True,
    takes_offset=True,
    any_type=True,
)
# a thread per segment (block threads, items), a warp per segment (items per lane), a block per segment (items
# per thread of the longest segment one block reduces whole)
SUBS = ("small", "warp", "one_block")

# What the sub-policies give where the spec leaves them out (a policy from CUB's tables has none).
SMALL_ITEMS = 8  # a thread reduces segments up to 8 elements alone (one or two 32-byte sectors)
WARP_ITEMS = 32  # a warp those up to 32 elements per lane (a full tile of a 256-thread block at 4 B/4 items)
# A block those up to 16 elements per thread whatever the share (a 256-thread block: one float32 tile); the
# one-launch path keeps longer segments whole while they fit the grid's even share of tiles and splits them
# beyond (640 kept the LLM logits rows, 151936, a block each: bench/segmented_reduce.py --ab times both).
BLOCK_ITEMS = 16


@dataclass(frozen=True)
class Policy:
    threads: int  # the tile pass's block (CUB's SegmentedReducePolicy)
    items: int  # elements per thread of a tile
    load: str = "ldg"  # ldg | default
    vec: int = 8  # elements per load of an aligned full tile (base.load_vec caps it at 16 bytes)
    small_threads: int = 0  # the first pass's block (0: threads)
    small_items: int = SMALL_ITEMS  # the longest segment a thread reduces alone
    warp_items: int = WARP_ITEMS  # elements per lane of the longest segment a warp reduces
    block_items: int = BLOCK_ITEMS  # elements per thread of the longest segment a block reduces whole
    small_from: str = "policy threads"
    small_items_from: str = "default"
    warp_items_from: str = "default"
    block_items_from: str = "default"


def _origin(get, dim: str, fallback: str) -> str:
    r = get.origin(dim)
    return r.origin if r is not None else fallback


def read(get) -> Policy:
    small, warp, one = get.sub("small"), get.sub("warp"), get.sub("one_block")
    threads = int(get("threads"))
    return Policy(
        threads,
        int(get("items")),
        "ldg" if get("modifier", "ldg") == "ldg" else "default",
        int(get("vec", 1)),
        int(small("threads", threads)),
        int(small("items", SMALL_ITEMS)),
        int(warp("items", WARP_ITEMS)),
        int(one("items", BLOCK_ITEMS)),
        "policy small.threads" if small("threads", None) is not None else "policy threads (no small.threads)",
        _origin(small, "items", "default"),
        _origin(warp, "items", "default"),
        _origin(one, "items", "default"),
    )


def params(cfg, dtype: str, pol: Policy):
    v, rule = load_vec(dtype, pol.items, pol.vec)
    return [
        param("kThreads", pol.threads, "policy threads (the tile pass)"),
        param("kItems", pol.items, "policy items"),
        param("kVec", v, rule, vec=pol.vec, items=pol.items, element_size=DT.SIZE[dtype]),
        param("kLdg", pol.load == "ldg", "modifier == ldg", modifier=pol.load),
        param("kSmallThreads", pol.small_threads, pol.small_from),
        param(
            "kSmallItems",
            pol.small_items,
            "policy small.items" if pol.small_items_from != "default" else f"default: {SMALL_ITEMS} (no small.items)",
        ),
        param(
            "kWarpItems",
            pol.warp_items,
            "policy warp.items" if pol.warp_items_from != "default" else f"default: {WARP_ITEMS} (no warp.items)",
        ),
        param(
            "kBlockItems",
            pol.block_items,
            "policy one_block.items"
            if pol.block_items_from != "default"
            else f"default: {BLOCK_ITEMS} (no one_block.items)",
        ),
        param(
            "kFewSegments",
            pol.threads,
            "policy threads: every block of the one-launch path reads all offsets, a segment per thread",
        ),
    ]


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    where = f"segmented_reduce.{dtype}"
    errs = warp_checks(cfg, f"{where} (small.threads)", pol.small_threads)
    if pol.small_threads > pol.threads:
        errs.append(
            f"{where}: small.threads={pol.small_threads} is more than threads={pol.threads} "
            "(the warp layer's exchange buffer is sized by the policies' threads)"
        )
    if pol.small_items < 0 or pol.warp_items < 1 or pol.items < 1 or pol.block_items < 1:
        errs.append(f"{where}: items, warp.items, one_block.items must be at least 1 and small.items at least 0")
    if pol.small_items > cfg.warp_size * pol.warp_items:
        errs.append(
            f"{where}: small.items={pol.small_items} is more than a warp's segments "
            f"(warp {cfg.warp_size} × warp.items {pol.warp_items})"
        )
    if cfg.warp_size * pol.warp_items > pol.threads * pol.block_items:
        errs.append(
            f"{where}: a warp's segments (warp {cfg.warp_size} × warp.items {pol.warp_items}) are longer than a "
            f"block's (threads {pol.threads} × one_block.items {pol.block_items})"
        )
    return errs


def globals_(cfg):
    return [
        param(
            "kSegmentedReduceMaxGrid",
            MAX_GRID,
            "tile-pass blocks: as reduce's first pass (the workspace holds two partials each)",
        )
    ]


DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")
# `enum muh_segmented_reduce_op` (MUH_<NAME>: C enumerators share one namespace with reduce's MUH_SUM …),
# and the Python entry point's op names for the same codes
OPERATORS = {"seg_sum": 0, "seg_min": 1, "seg_max": 2, "seg_amin": 3, "seg_amax": 4}
OPS = dict(zip(("sum", "min", "max", "argmin", "argmax"), OPERATORS.values()))  # the Python entry point's names
OFFSETS = ("int32", "int64")  # the offsets' dtypes; the C interface takes their size (dtypes.SIZE)


def segmented_reduce(x, begin, end, op: str = "sum", *, out=None, kernels=None):
    """``op`` over each segment ``x[begin[i]:end[i]]`` (CUB DeviceSegmentedReduce): a tensor of x's dtype,
    one value per segment; argmin / argmax give (values, int64 offsets in the segment). ``begin`` and
    ``end``: 1-D int32 or int64 CUDA tensors of one dtype; an empty segment gives CUB's initial value."""
    torch = T.torch()
    name = T.check_tensor(x, "segmented_reduce", DTYPES)
    if op not in OPS:
        raise ValueError(f"{T.API}.segmented_reduce: unknown op `{op}` (one of {', '.join(OPS)})")
    for what, t in (("begin", begin), ("end", end)):
        T.check_tensor(t, "segmented_reduce", OFFSETS)
        if t.dim() != 1 or t.device != x.device:
            raise ValueError(f"{T.API}.segmented_reduce: {what} offsets must be a 1-D tensor on {x.device}")
    if begin.dtype != end.dtype or begin.numel() != end.numel():
        raise ValueError(
            f"{T.API}.segmented_reduce: begin and end offsets must have one dtype and length "
            f"(got {begin.dtype} × {begin.numel()}, {end.dtype} × {end.numel()})"
        )
    segments = begin.numel()
    k = T.kernels(kernels)
    arg = op.startswith("arg")
    if out is None:
        vals = torch.empty(segments, dtype=x.dtype, device=x.device)
        idx = torch.empty(segments, dtype=torch.int64, device=x.device) if arg else None
    else:
        vals, idx = out if arg else (out, None)
        T.check_out(vals, x, segments, "segmented_reduce")
        if arg and (idx.dtype != torch.int64 or not idx.is_contiguous() or idx.numel() != segments):
            raise ValueError(
                f"{T.API}.segmented_reduce: out offsets must be a contiguous int64 tensor of "
                f"{segments} elements on {x.device}"
            )
    nbytes = int(k.raw("muh_segmented_reduce_workspace_bytes")(segments))
    ws = T.workspace(k, x, "segmented_reduce", nbytes)
    with torch.cuda.device(x.device):
        k.call(
            "muh_segmented_reduce",
            OPS[op],
            DT.CODE[name],
            DT.SIZE[T.dtype_name(begin)],
            x.data_ptr(),
            begin.data_ptr(),
            end.data_ptr(),
            segments,
            vals.data_ptr(),
            idx.data_ptr() if arg else 0,
            ws[0].data_ptr(),
            ws[0].numel(),
            T.stream(x),
        )
    return (vals, idx) if arg else vals


RECORD = record(
    __name__,
    doc="one value per segment: sum, min, max, argmin, argmax (DeviceSegmentedReduce), by segment-size class",
    tunable=("threads", "items"),
    # one C declaration a line (cfuncs): the literals below join into one line each
    api=cfuncs(
        "\n"
        "size_t muh_segmented_reduce_workspace_bytes(long long segments);\n"
        "int muh_segmented_reduce(int op, int dtype, int offset_bytes, const void* in, const void* begin_offsets, "
        "const void* end_offsets, long long segments, void* out, void* out_index, void* workspace, "
        "size_t workspace_bytes, void* stream);\n"
    ),
    static=("segmented_reduce.cuh",),
    size_buckets=False,
    # `muh tune` measures segments of one length (the shape, 4096): at the tune sizes 2^16 and 2^20 few of them
    # (the one-launch path, a block each), at 2^24 and 2^28 many (the three-launch path)
    harness=Harness(shape=(4096,), variables=lambda shape: {"seg_len": shape[0]}),
    python_ops={"segmented_reduce": segmented_reduce},
)
