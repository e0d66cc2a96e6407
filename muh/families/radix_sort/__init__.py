"""radix_sort: stable LSD radix sort of keys, or of keys and values (CUB DeviceRadixSort::SortKeys/SortPairs).

Onesweep (Adinets & Merrill 2022, CUB's algorithm since 1.15): one histogram pass counts every digit pass's
digits, an exclusive sum turns them into starts, then one kernel per digit pass ranks each tile's keys and
finds its global offsets by a decoupled look-back over per-tile digit counts (the scan's look-back words,
muh/families/scan/scan_tile.cuh). Problems of at most one single-tile block sort in one block. Keys of 1, 2,
4 and 8 bytes: unsigned, signed (sign bit flipped) and floating point (order-preserving bit transform; -0.0
and +0.0 equal, NaNs by their bits, as CUB); bits [begin_bit, end_bit); ascending or descending; values of
1, 2, 4 or 8 bytes. Policies are CUB's sub-policies (``onesweep``, ``histogram``, ``exclusive_sum``,
``single_tile``; ``upsweep`` / ``downsweep`` are described for parity, the kernels always run onesweep).
"""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import cub
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, param, record, warp_checks, xchg_bytes
from muh.runtime import dtypes as DT

# CUB's radix hub: one agent policy per pass kind (CCCL 3.0.1 cub/device/dispatch/tuning/tuning_radix_sort.cuh).
SUBS = (
    cub.sub("onesweep", "OnesweepPolicy", "threads", "items", "radix_bits", "rank"),
    cub.sub("histogram", "HistogramPolicy", "threads", "items", "radix_bits"),
    cub.sub("exclusive_sum", "ExclusiveSumPolicy", "threads", "radix_bits"),
    cub.sub("downsweep", "DownsweepPolicy", "threads", "items", "radix_bits", "rank", "load", "modifier"),
    cub.sub("upsweep", "UpsweepPolicy", "threads", "items", "radix_bits", "modifier"),
    cub.sub("single_tile", "SingleTilePolicy", "threads", "items", "radix_bits", "rank", "load", "modifier"),
)
MEMBERS = cub.SORT + cub.members(("use_onesweep", "ONESWEEP"))
CUB = cub.CubTable(
    "DeviceRadixSort::SortKeys (the chain policy holds one agent policy per pass)",
    "tuning_radix_sort.cuh",
    hub="typename cub::detail::radix::policy_hub<T, cub::NullType, O>::MaxPolicy",
    agent=None,
    types=cub.PROBED,
    members=MEMBERS,
    subs=SUBS,
    takes_offset=True,
)

MIN_BITS, MAX_BITS = 4, 8  # radix bits per onesweep pass: 64-bit keys in at most 16 passes; 256 digits at most
MAX_PASSES = 16  # radix_sort.cuh kMaxPasses
HEAD_BYTES = 512  # radix_sort.cuh kHeadBytes
KINDS = {"uint": 0, "int": 1, "float": 2}  # radix_sort.cuh kUnsigned, kSigned, kFloat
VALUE_BYTES = (1, 2, 4, 8)  # the value sizes a pair sort moves (as raw bits)
MAX_VALUE_BYTES = max(VALUE_BYTES)
# Keys-only onesweep blocks per SM the kernel's registers are bounded for (__launch_bounds__ minimum blocks): CUB's
# sm_90 onesweep kernel reaches 2 blocks of 384 threads (74 registers, ptxas -v); muh's, unbounded, took 90
# registers and ran one block per SM, idle through each tile's ranking barriers and look-back
# (bench/results/radix-sort-static-2026-12-06.md). Two blocks where a thread keeps at least ONESWEEP_MIN_REGS of
# the SM's REGS_PER_SM registers (NVIDIA sm_50 onwards: 64 K 32-bit registers per SM): at 80, no keys-only
# kernel of the H200 build spills; at 64 (512 threads) the 16-bit float keys' did. Pair sorts of keys of at most 4
# bytes with 4-byte values are bounded alike (radix_sort.cuh OnesweepBlocks: the values exchanged beside the keys
# before the look-back, the scatter moving both; unbounded they took 90 registers, one block per SM, 0.59x CUB's
# pair sort at 2^28 on an H100: bench/results/radix-sort-h100-2026-12-06/run3); other pairs keep one.
ONESWEEP_BLOCKS, ONESWEEP_MIN_REGS, REGS_PER_SM = 2, 80, 65536
# The histogram kernel's registers a thread, bounded (__launch_bounds__ minimum blocks, kHistMinBlocks): its tile's
# keys (items x 32-bit words a key) plus HIST_BASE_REGS for the rest — CUB's sm_90 histogram kernel at 16 items
# takes 40 registers for 4-byte keys and 56 for 8-byte ones (ptxas -v, bench/radix_static.py); muh's, unbounded,
# took 48 and 66: 10 and 7 blocks per SM where CUB runs 12 and 9, 612 us vs 456 us at 2^28 uint32 keys (H100).
HIST_BASE_REGS = 26


@dataclass(frozen=True)
class Policy:
    threads: int  # onesweep block
    items: int  # onesweep keys per thread
    radix_bits: int  # onesweep (and histogram) digit bits
    hist_threads: int
    hist_items: int
    scan_threads: int  # exclusive sum block
    single_threads: int
    single_items: int
    single_bits: int


def read(get) -> Policy:
    """The policy from CUB's sub-policies (``get.sub``: muh.derive.kernels.PolicyReader)."""
    one, hist, ex, single = (get.sub(s) for s in ("onesweep", "histogram", "exclusive_sum", "single_tile"))
    return Policy(
        int(one("threads")),
        int(one("items")),
        int(one("radix_bits")),
        int(hist("threads")),
        int(hist("items")),
        int(ex("threads")),
        int(single("threads")),
        int(single("items")),
        int(single("radix_bits")),
    )


def _rank_bytes(threads: int, bits: int, warp: int) -> int:
    """radix_sort.cuh Rank::Smem: per warp and digit an int, per warp a scan word."""
    warps = threads // warp
    return warps * (1 << bits) * 4 + warps * 4


def values_beside(dtype: str, value_bytes: int) -> bool:
    """radix_sort.cuh OnesweepLayout::kBeside: a pair sort's values kept beside its keys in shared memory (keys of at
    most 4 bytes with 4-byte values), else over them."""
    return value_bytes == 4 and DT.SIZE[dtype] <= 4


def onesweep_smem(cfg, dtype: str, pol: Policy, value_bytes: int | None = None) -> int:
    """radix_sort.cuh OnesweepSmem::kBytes plus the emulation's exchange: the ranking's counts overlaid by the tile's
    keys, its values beside them or over them (values_beside), the slot and digit offsets. ``value_bytes`` None: the
    most any value size needs."""
    if value_bytes is None:
        return max(onesweep_smem(cfg, dtype, pol, vb) for vb in (0, *VALUE_BYTES))
    tile = pol.threads * pol.items
    up = lambda b: (b + 15) // 16 * 16  # noqa: E731
    beside = values_beside(dtype, value_bytes)
    over = tile * (DT.SIZE[dtype] if beside else max(DT.SIZE[dtype], value_bytes))
    union = max(over, _rank_bytes(pol.threads, pol.radix_bits, cfg.warp_size))
    return up(union) + (up(tile * value_bytes) if beside else 0) + 16 + (1 << pol.radix_bits) * 4 + xchg_bytes(cfg)


def single_smem(cfg, dtype: str, pol: Policy, value_bytes: int = MAX_VALUE_BYTES) -> int:
    """radix_sort.cuh SingleSmem::kBytes plus the emulation's exchange."""
    tile = pol.single_threads * pol.single_items
    up = lambda b: (b + 15) // 16 * 16  # noqa: E731
    return (
        up(tile * DT.SIZE[dtype])
        + up(tile * value_bytes)
        + _rank_bytes(pol.single_threads, pol.single_bits, cfg.warp_size)
        + xchg_bytes(cfg)
    )


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    where = f"radix_sort.{dtype}"
    errs = []
    if not MIN_BITS <= pol.radix_bits <= MAX_BITS:
        errs.append(
            f"{where}: onesweep radix_bits={pol.radix_bits} must be {MIN_BITS}..{MAX_BITS} "
            f"(64-bit keys in at most {MAX_PASSES} passes, at most 256 digits)"
        )
    if not 1 <= pol.single_bits <= MAX_BITS:
        errs.append(f"{where}: single_tile radix_bits={pol.single_bits} must be 1..{MAX_BITS}")
    for name, t in (
        ("histogram", pol.hist_threads),
        ("exclusive_sum", pol.scan_threads),
        ("single_tile", pol.single_threads),
    ):
        errs += [e.replace(f"{where} ", f"{where}.{name} ") for e in warp_checks(cfg, f"{where}.{name}", t)]
    for name, items in (("onesweep", pol.items), ("histogram", pol.hist_items), ("single_tile", pol.single_items)):
        if items < 1:
            errs.append(f"{where}.{name}: items={items} must be at least 1")
    budget = cfg.smem_per_block_optin or cfg.smem_per_block
    for name, need in (("onesweep", onesweep_smem(cfg, dtype, pol)), ("single_tile", single_smem(cfg, dtype, pol))):
        if need > budget:
            errs.append(
                f"{where}.{name}: the tile needs {need} B of shared memory (keys and values of up to "
                f"{MAX_VALUE_BYTES} bytes), the hardware allows {budget} B per block: fewer threads or items"
            )
    return errs


def onesweep_min_blocks(cfg, pol: Policy) -> int:
    """The onesweep kernel's __launch_bounds__ minimum blocks per SM (see ONESWEEP_BLOCKS)."""
    fit = min(cfg.max_threads_per_sm // pol.threads, REGS_PER_SM // (pol.threads * ONESWEEP_MIN_REGS))
    return max(1, min(ONESWEEP_BLOCKS, fit))


def _key_words(dtype: str) -> int:
    """32-bit registers a key of dtype takes."""
    return -(-DT.SIZE[dtype] // 4)


def hist_min_blocks(cfg, dtype: str, pol: Policy) -> int:
    """The histogram kernel's __launch_bounds__ minimum blocks per SM (see HIST_BASE_REGS)."""
    regs = pol.hist_items * _key_words(dtype) + HIST_BASE_REGS
    fit = min(cfg.max_threads_per_sm // pol.hist_threads, REGS_PER_SM // (pol.hist_threads * regs))
    return max(1, fit)


def params(cfg, dtype: str, pol: Policy):
    kind = DT.TABLE[dtype].kind
    return [
        param(
            "kKeyKind",
            KINDS[kind],
            f"{kind} keys: {'sign-magnitude bits' if kind == 'float' else kind + ' bits'}",
            dtype=dtype,
        ),
        param("kBits", pol.radix_bits, "policy onesweep.radix_bits"),
        param("kThreads", pol.threads, "policy onesweep.threads"),
        param("kItems", pol.items, "policy onesweep.items"),
        param(
            "kMinBlocks",
            onesweep_min_blocks(cfg, pol),
            f"onesweep blocks per SM its registers are bounded for (keys, and keys of at most 4 bytes with 4-byte "
            f"values): at most {ONESWEEP_BLOCKS} (CUB's sm_90 occupancy), as many as fit the resident threads with "
            f"{ONESWEEP_MIN_REGS} registers a thread",
            threads=pol.threads,
            max_threads_per_sm=cfg.max_threads_per_sm,
            regs_per_sm=REGS_PER_SM,
        ),
        param("kHistThreads", pol.hist_threads, "policy histogram.threads"),
        param(
            "kHistMinBlocks",
            hist_min_blocks(cfg, dtype, pol),
            f"histogram blocks per SM its registers are bounded for: the SM's registers over threads x (items x "
            f"key words + {HIST_BASE_REGS}), at most the resident threads",
            threads=pol.hist_threads,
            items=pol.hist_items,
            key_words=_key_words(dtype),
            regs_per_sm=REGS_PER_SM,
            max_threads_per_sm=cfg.max_threads_per_sm,
        ),
        param("kHistItems", pol.hist_items, "policy histogram.items"),
        param(
            "kHistBlocksPerSm",
            max(1, cfg.max_threads_per_sm // pol.hist_threads),
            "histogram grid per SM: resident threads per SM / histogram threads (grid-stride over the tiles)",
            max_threads_per_sm=cfg.max_threads_per_sm,
            threads=pol.hist_threads,
        ),
        param("kScanThreads", pol.scan_threads, "policy exclusive_sum.threads"),
        param("kSingleThreads", pol.single_threads, "policy single_tile.threads"),
        param("kSingleItems", pol.single_items, "policy single_tile.items"),
        param("kSingleBits", pol.single_bits, "policy single_tile.radix_bits"),
    ]


DTYPES = DT.ORDER  # every element type muh knows: radix sort serves them all (muh/runtime/dtypes.py owns the list)


def _bits(name: str) -> int:
    return 8 * DT.SIZE[name]


def _check_values(values, keys, op: str) -> str:
    name = T.check_tensor(values, op, tuple(n for n in DT.ORDER if DT.SIZE[n] in VALUE_BYTES))
    if values.device != keys.device or values.numel() != keys.numel():
        raise ValueError(
            f"{T.API}.{op}: values must be on {keys.device} with {keys.numel()} element(s), "
            f"got {values.numel()} on {values.device}"
        )
    return name


def radix_sort(
    keys,
    values=None,
    *,
    descending: bool = False,
    begin_bit: int = 0,
    end_bit: int | None = None,
    out=None,
    values_out=None,
    kernels=None,
):
    """Stable radix sort of ``keys`` (any contiguous CUDA tensor, sorted as one flat sequence) over bits
    [begin_bit, end_bit), ascending unless ``descending``; with ``values`` (same length, 1/2/4/8-byte elements)
    they move with their keys. Returns the sorted keys, or (keys, values). CUB DeviceRadixSort semantics."""
    torch = T.torch()
    name = T.check_tensor(keys, "radix_sort", DTYPES)
    bits = _bits(name)
    end_bit = bits if end_bit is None else end_bit
    if not (isinstance(begin_bit, int) and isinstance(end_bit, int) and 0 <= begin_bit <= end_bit <= bits):
        raise ValueError(
            f"{T.API}.radix_sort: bits [{begin_bit}, {end_bit}) must lie in [0, {bits}] for "
            f"{keys.dtype} keys (0 <= begin_bit <= end_bit <= {bits})"
        )
    n = keys.numel()
    if n > 0xFFFFFFFF:
        raise ValueError(f"{T.API}.radix_sort: {n} keys; at most 2^32 - 1 per call (sort in parts and merge)")
    if values is not None:
        _check_values(values, keys, "radix_sort")
    k = T.kernels(kernels)
    out = torch.empty_like(keys) if out is None else out
    T.check_out(out, keys, n, "radix_sort")
    if values is not None:
        values_out = torch.empty_like(values) if values_out is None else values_out
        T.check_out(values_out, values, n, "radix_sort")
    if n == 0:
        return out if values is None else (out, values_out)
    vb = 0 if values is None else values.element_size()
    ws_bytes = int(k.raw("muh_radix_sort_workspace")(DT.CODE[name], n))
    ws = T.workspace(k, keys, "radix_sort", ws_bytes)[0]
    alt = torch.empty_like(keys)
    valt = None if values is None else torch.empty_like(values)
    with torch.cuda.device(keys.device):
        k.call(
            "muh_radix_sort",
            DT.CODE[name],
            vb,
            keys.data_ptr(),
            out.data_ptr(),
            alt.data_ptr(),
            0 if values is None else values.data_ptr(),
            0 if values is None else values_out.data_ptr(),
            0 if valt is None else valt.data_ptr(),
            n,
            begin_bit,
            end_bit,
            int(bool(descending)),
            ws.data_ptr(),
            ws.numel(),
            0,
            T.stream(keys),
        )
    return out if values is None else (out, values_out)


def sort_rows(x, *, descending: bool = False, kernels=None):
    """Each row of a 2-D ``x`` sorted on its own (stable): (values, int64 column indices), as
    ``torch.sort(x, dim=-1, stable=True)``. One sort of (key, column) pairs whose tiles never straddle two rows,
    each row with its own digit counts and look-back: ``muh_argsort_rows``, whose first pass makes the columns and
    whose last writes them as int64 (one row: ``muh_radix_sort_rows`` with int32 columns, then widened)."""
    torch = T.torch()
    name = T.check_tensor(x, "sort_rows", DTYPES)
    if x.dim() != 2:
        raise ValueError(f"{T.API}.sort_rows: expected a 2-D tensor (rows x cols), got {x.dim()} dimension(s)")
    rows, cols = x.shape
    n = rows * cols
    if n > 0xFFFFFFFF or cols >= 1 << 31:
        raise ValueError(
            f"{T.API}.sort_rows: {rows} x {cols} elements; at most 2^32 - 1 per call and 2^31 - 1 a row "
            "(int32 column positions)"
        )
    if n == 0:
        return x.clone(), torch.empty_like(x, dtype=torch.int64)
    k = T.kernels(kernels)
    keys = x.contiguous()
    out, alt = torch.empty_like(keys), torch.empty_like(keys)
    ws_bytes = int(k.raw("muh_radix_sort_rows_workspace")(DT.CODE[name], rows, cols))
    # a workspace per row count: the look-back words' place depends on it (radix_sort_host.cuh sort())
    ws = T.workspace(k, keys, f"sort_rows:{rows}", ws_bytes)[0]
    idx_alt = torch.empty(n, dtype=torch.int32, device=x.device)
    # both entries end alike: the shape, the bits, the direction, the workspace and the stream
    tail = (rows, cols, 0, _bits(name), int(bool(descending)), ws.data_ptr(), ws.numel(), T.stream(keys))
    if rows > 1:  # the columns made by the sort's first pass, written as int64 by its last
        idx_out = torch.empty(n, dtype=torch.int64, device=x.device)
        head = ("muh_argsort_rows", DT.CODE[name], keys.data_ptr(), out.data_ptr(), alt.data_ptr())
        with torch.cuda.device(keys.device):
            k.call(*head, idx_out.data_ptr(), idx_alt.data_ptr(), *tail)
        return out, idx_out.view(rows, cols)
    # one row: the flat sort, its int32 columns given and widened after
    cols_idx = torch.arange(cols, dtype=torch.int32, device=x.device)
    idx_out = torch.empty_like(cols_idx)
    head = ("muh_radix_sort_rows", DT.CODE[name], 4, keys.data_ptr(), out.data_ptr(), alt.data_ptr())
    with torch.cuda.device(keys.device):
        k.call(*head, cols_idx.data_ptr(), idx_out.data_ptr(), idx_alt.data_ptr(), *tail)
    return out, idx_out.view(rows, cols).long()


def argsort(x, *, descending: bool = False, kernels=None):
    """Stable argsort: int64 indices that sort ``x`` (1-D: the whole tensor; 2-D: each row), as
    ``torch.argsort(x, dim=-1, stable=True)``."""
    torch = T.torch()
    T.check_tensor(x, "argsort", DTYPES)
    if x.dim() == 2:
        return sort_rows(x, descending=descending, kernels=kernels)[1]
    if x.dim() != 1:
        raise ValueError(f"{T.API}.argsort: expected a 1-D or 2-D tensor, got {x.dim()} dimensions")
    idx = torch.arange(x.numel(), dtype=torch.int64, device=x.device)
    return radix_sort(x, idx, descending=descending, kernels=kernels)[1]


RECORD = record(
    __name__,
    doc="stable LSD radix sort of keys or key-value pairs, Onesweep (DeviceRadixSort::SortKeys / SortPairs)",
    # sub-policy dimensions (muh/schema/models.py sub_dim): what the kernels read of each (the histogram's digits are
    # the onesweep's radix_bits; the exclusive sum's block is its threads)
    tunable=(
        "onesweep.threads",
        "onesweep.items",
        "onesweep.radix_bits",
        "histogram.threads",
        "histogram.items",
        "exclusive_sum.threads",
        "single_tile.threads",
        "single_tile.items",
        "single_tile.radix_bits",
    ),
    harness=Harness(),
    # one C declaration a line (cfuncs): the literals below join into one line each
    api=cfuncs(
        "\n"
        "size_t muh_radix_sort_workspace(int key_dtype, long long n);  // bytes (zero-filled before the first sort)\n"
        "int muh_radix_sort(int key_dtype, int value_bytes, const void* keys_in, void* keys_out, void* keys_alt, "
        "const void* values_in, void* values_out, void* values_alt, long long n, int begin_bit, int end_bit, "
        "int descending, void* workspace, size_t workspace_bytes, int* selector, void* stream);  "
        "// selector 0: out of place\n"
        "size_t muh_radix_sort_rows_workspace(int key_dtype, long long rows, long long cols);  // bytes (zero-filled)\n"
        "int muh_radix_sort_rows(int key_dtype, int value_bytes, const void* keys_in, void* keys_out, void* keys_alt, "
        "const void* values_in, void* values_out, void* values_alt, long long rows, long long cols, int begin_bit, "
        "int end_bit, int descending, void* workspace, size_t workspace_bytes, void* stream);  "
        "// each row on its own, out of place\n"
        "int muh_argsort_rows(int key_dtype, const void* keys_in, void* keys_out, void* keys_alt, "
        "long long* indices_out, void* indices_alt, long long rows, long long cols, int begin_bit, int end_bit, "
        "int descending, void* workspace, size_t workspace_bytes, void* stream);  "
        "// rows >= 2: each row sorted, its columns as int64 indices\n"
    ),
    op=None,
    size_buckets=False,
    static=("radix_sort.cuh", "radix_sort_host.cuh"),
    python_ops={"radix_sort": radix_sort, "argsort": argsort, "sort_rows": sort_rows},
)
