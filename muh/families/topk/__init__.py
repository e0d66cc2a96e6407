"""topk: the k largest of each row, sorted, by radix select (CCCL's DeviceTopK semantics)."""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import tensors as T
from muh.families.base import MAX_GRID_Y, Harness, cfuncs, param, record, vec_of, xchg_bytes
from muh.runtime import dtypes as DT

MAX_BITS_PER_PASS = 12  # a pass's histogram: 2^12 4-byte bins = 16 KiB of shared memory at most
# The ordered gather counts a tile's greater and equal keys in one 32-bit scan value, 16 bits each
# (topk.cuh: `counts`): a tile (threads x items x vec keys) must stay below 2^16 keys.
MAX_TILE_KEYS = (1 << 16) - 1
# The small-row path holds a row in one warp's registers: at most this many keys per lane (beyond, the
# keys would not stay in registers; the one-block kernel serves such rows).
MAX_WARP_KEYS_PER_LANE = 64
# ... and ranks at most this many survivors per lane (each against all k: k <= 8 x warp size; a larger
# k takes the one-block kernel and its bitonic sort).
MAX_WARP_RANKS_PER_LANE = 8
# An emulated warp (tests: a logical warp of 64 or 128 lanes on 32-lane hardware) takes the small-row path
# only up to this many hardware warps per logical warp. At 4 (warp 128 emulated) topk_warp_kernel faulted
# (illegal address) in the GPU test run after the other variants' kernels, while the same calls passed
# alone and under compute-sanitizer memcheck; the cause is not found (bench/results/topk-small-2026-12-06).
# Warp 64 emulated (the BI-V100's width, 2 hardware warps), 16 and native passed every test.
MAX_EMULATED_PARTS = 2


@dataclass(frozen=True)
class Policy:
    threads: int = 512
    items: int = 4
    bits_per_pass: int = 11
    max_k: int = 1024
    # Long rows: several blocks per row (one register-resident slice each) + a merge kernel.
    # False: always one block per row (the kernel measured before 2026-11-30 evening).
    split: bool = True
    # Short rows: rows of at most warp_cols columns are each selected by one warp (threads / warp
    # rows per block, the row held in registers); 0: every row takes a block.
    warp_cols: int = 0


def read(get) -> Policy:
    return Policy(
        int(get("threads", 512)),
        int(get("items", 4)),
        int(get("bits_per_pass", 11)),
        warp_cols=int(get("warp_cols", 0) or 0),
    )


def warp_cols(cfg, pol: Policy) -> tuple[int, str]:
    """(the longest row the small-row path takes, its rule): the policy's warp_cols, except in an
    emulation build whose logical warp spans more than MAX_EMULATED_PARTS hardware warps (0: off)."""
    parts = cfg.warp_size // cfg.physical
    if pol.warp_cols and parts > MAX_EMULATED_PARTS:
        return 0, (
            f"0: a logical warp of {cfg.warp_size} lanes emulated on {parts} hardware warps (the small-row "
            f"path is verified up to {MAX_EMULATED_PARTS}); policy warp_cols {pol.warp_cols}"
        )
    return pol.warp_cols, "policy warp_cols: rows of at most this many columns take a warp each (0: none)"


def warp_vecs(cfg, dtype: str, pol: Policy) -> int:
    """16-byte vectors per lane of the small-row path: a warp's tile covers the longest row it serves."""
    return -(-warp_cols(cfg, pol)[0] // (cfg.warp_size * vec_of(dtype)))


def warp_max_k(cfg, pol: Policy) -> int:
    """The largest k the small-row path takes: a row of at most warp_cols columns has no more, and each
    lane ranks at most MAX_WARP_RANKS_PER_LANE survivors."""
    return min(pol.max_k, warp_cols(cfg, pol)[0], MAX_WARP_RANKS_PER_LANE * cfg.warp_size)


def warp_smem(cfg, pol: Policy) -> int:
    """The small-row kernel's shared memory: each warp's survivors (4-byte key, 4-byte index), plus
    the emulated warp's exchange buffer."""
    return (pol.threads // cfg.warp_size) * warp_max_k(cfg, pol) * 8 + xchg_bytes(cfg)


def smem(cfg, dtype: str, pol: Policy) -> int:
    return 4 * (1 << pol.bits_per_pass) + 8 * pol.max_k + xchg_bytes(cfg) + 4 * (pol.threads // cfg.warp_size + 8)


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    errs = []
    if not 1 <= pol.bits_per_pass <= MAX_BITS_PER_PASS:
        errs.append(f"topk.{dtype}: bits_per_pass={pol.bits_per_pass} outside 1..{MAX_BITS_PER_PASS}")
    tile = pol.threads * pol.items * vec_of(dtype)
    if tile > MAX_TILE_KEYS:
        errs.append(
            f"topk.{dtype}: a tile of threads x items x vec = {pol.threads} x {pol.items} x {vec_of(dtype)} "
            f"= {tile} keys; the gather counts a tile in 16 bits, at most {MAX_TILE_KEYS} keys: "
            f"lower threads or items"
        )
    if smem(cfg, dtype, pol) > cfg.smem_per_block:
        errs.append(
            f"topk.{dtype}: needs {smem(cfg, dtype, pol)} B of shared memory, "
            f"the hardware has {cfg.smem_per_block} B per block"
        )
    if warp_cols(cfg, pol)[0]:
        keys = warp_vecs(cfg, dtype, pol) * vec_of(dtype)
        if keys > MAX_WARP_KEYS_PER_LANE:
            errs.append(
                f"topk.{dtype}: warp_cols={pol.warp_cols} puts {keys} keys in each of a warp's "
                f"{cfg.warp_size} lanes (rows of up to {pol.warp_cols} columns in {vec_of(dtype)}-element "
                f"vectors); the small-row path holds at most {MAX_WARP_KEYS_PER_LANE} per lane: "
                f"lower warp_cols to {cfg.warp_size * MAX_WARP_KEYS_PER_LANE} or less"
            )
        if warp_smem(cfg, pol) > cfg.smem_per_block:
            errs.append(
                f"topk.{dtype}: the small-row path (warp_cols={pol.warp_cols}) needs {warp_smem(cfg, pol)} B "
                f"of shared memory ({pol.threads // cfg.warp_size} rows x {warp_max_k(cfg, pol)} survivors x 8 B), "
                f"the hardware has {cfg.smem_per_block} B per block: lower warp_cols or threads"
            )
    return errs


def params(cfg, dtype: str, pol: Policy):
    """A long row is split over several blocks: a slice is one block's tile (threads x items x
    16-byte vectors: 8192 float32 / 16384 half columns at 512 x 4), loaded once into registers as
    order-preserving keys. Each slice writes its own top-k to a workspace; one block per row then
    selects from the nblk*k candidates. Split when the row has at least two slices and
    k <= slice / 4 (the merge then reads at most a quarter of the row again).

    A short row (at most the policy's warp_cols columns) is selected by one warp, threads / warp rows
    per block: each lane holds at most kWarpVecs 16-byte vectors of the row in registers."""
    key_bits = 8 * DT.SIZE[dtype]
    vec = vec_of(dtype)
    chunk = pol.threads * pol.items * vec
    return [
        param("kThreads", pol.threads, "policy threads"),
        param("kItems", pol.items, "policy items"),
        param("kVec", vec, "16 B / element size", element_size=DT.SIZE[dtype]),
        param("kBits", pol.bits_per_pass, "policy bits_per_pass"),
        param("kBinsPerThread", -(-(1 << pol.bits_per_pass) // pol.threads), "ceil(2^bits / threads)"),
        param("kMaxK", pol.max_k, "policy max_k"),
        param("kKeyBits", key_bits, "8 x element size"),
        param("kPasses", -(-key_bits // pol.bits_per_pass), "ceil(key bits / bits per pass)"),
        param("kSplit", pol.split, "policy split: long rows in slices of kSplitChunk columns + a merge"),
        param("kSplitChunk", chunk, "threads x items x kVec"),
        param("kSplitMinCols", 2 * chunk, "2 slices"),
        param("kSplitMaxK", min(pol.max_k, chunk // 4), "min(max_k, slice / 4)"),
        param("kSplitMaxRows", MAX_GRID_Y, "CUDA's gridDim.y limit (rows are the grid's y)"),
        param("kWarpCols", *warp_cols(cfg, pol)),
        param(
            "kWarpRows",
            pol.threads // cfg.warp_size,
            "threads / warp size: rows per block of the small-row path",
            warp_size=cfg.warp_size,
        ),
        param(
            "kWarpVecs",
            warp_vecs(cfg, dtype, pol),
            "ceil(warp_cols / (warp size x kVec)): vectors per lane",
            warp_size=cfg.warp_size,
        ),
        param(
            "kWarpMaxK",
            warp_max_k(cfg, pol),
            f"min(max_k, warp_cols, {MAX_WARP_RANKS_PER_LANE} x warp size): "
            f"the largest k of the small-row path (each lane ranks at most {MAX_WARP_RANKS_PER_LANE} survivors)",
            warp_size=cfg.warp_size,
        ),
    ]


TUNE_SHAPE = (65536, 64)  # `muh tune topk`: row length and k unless --topk-shape says


def max_k(cfg) -> int:
    return min([p.max_k for p in cfg.of("topk").values()] or [0])


DTYPES = ("float32", "float16", "bfloat16")


def topk(x, k: int, *, out=None, kernels=None):
    """The ``k`` largest of each row of a 2-D (or 1-D) tensor: (values, int64 indices), sorted
    descending, equal values in ascending index order."""
    torch = T.torch()
    name = T.check_tensor(x, "topk", DTYPES)
    if x.dim() not in (1, 2):
        raise ValueError(f"{T.API}.topk: expected a 1-D or 2-D tensor, got {x.dim()}-D")
    rows, cols = (1, x.shape[0]) if x.dim() == 1 else tuple(x.shape)
    if not 0 <= k <= cols:
        raise ValueError(f"{T.API}.topk: k={k} outside 0..{cols}")
    kern = T.kernels(kernels)
    if out is None:
        vals = torch.empty((rows, k), dtype=x.dtype, device=x.device)
        idx = torch.empty((rows, k), dtype=torch.int64, device=x.device)
    else:
        vals, idx = out
        T.check_out(vals, x, rows * k, "topk")
        if idx.dtype != torch.int64 or not idx.is_contiguous() or idx.numel() != rows * k or idx.device != x.device:
            raise ValueError(
                f"{T.API}.topk: out indices must be a contiguous int64 tensor of {rows * k} elements on {x.device}"
            )
    with torch.cuda.device(x.device):
        kern.call("muh_topk", DT.CODE[name], x.data_ptr(), rows, cols, k, vals.data_ptr(), idx.data_ptr(), T.stream(x))
    if x.dim() == 1:
        return vals[0], idx[0]
    return vals, idx


RECORD = record(
    __name__,
    doc="the k largest of each row, sorted, with int64 indices (DeviceTopK)",
    tunable=("threads", "items", "bits_per_pass"),
    api=cfuncs("""
int muh_topk_max_k(void);
int muh_topk(int dtype, const void* in, int rows, int cols, int k, void* values, long long* indices, void* stream);
"""),
    op=None,
    template_vars=lambda cfg: {"topk_max_k": max_k(cfg)},
    static=("topk.cuh",),
    # The best policy depends on k as much as on the row (H200: 1.9x between k = 50 and k = 1024):
    # a policy's buckets may test `k` (values kept per row) or `elements` (rows x row length).
    bucket_keys=("elements", "k"),
    harness=Harness(
        shape=TUNE_SHAPE,
        shape_keys=("cols", "k"),
        variables=lambda shape: {"topk_cols": shape[0], "topk_k": shape[1]},
        check_sizes=lambda shape: (3 * shape[0], shape[0]),
    ),
    python_ops={"topk": topk},
)
