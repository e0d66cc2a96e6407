"""The typed input of the kernel emitter: one hardware profile plus one policy per algorithm and dtype.

Every number the templates print is computed here (templates only loop and print). A config is
built either by hand (tests, presets) or from the core's ``Derived`` (``adapter.from_derived``).

Warp widths: ``warp_size`` is the *logical* warp the kernels are written for (the spec's hardware);
``physical_warp`` is the width of the GPU that runs them. They differ only in an emulation build
(``emulate_warp``): a logical 64-lane warp on a 32-lane H200, or 16 / 128 to shake out assumptions.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

REDUCE_DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")
SCAN_DTYPES = ("float32", "float64", "int32", "int64")
TRANSFORM_DTYPES = ("float32", "float64", "float16", "bfloat16")
TOPK_DTYPES = ("float32", "float16", "bfloat16")
ELEM_SIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8}
DELAY_KINDS = (
    "no_delay", "fixed", "exponential_backoff", "exponential_backoff_jitter",
    "exponential_backoff_jitter_window", "exponential_backon_jitter_window",
    "exponential_backon_jitter", "exponential_backon",
)
MAX_NAMED_BARRIERS = 16  # PTX: barrier ids 0..15; id 0 is __syncthreads


class KernelConfigError(ValueError):
    """A config the kernels cannot be generated for (message says which value and why)."""


@dataclass(frozen=True)
class ReducePolicy:
    threads: int
    items: int
    vec: int = 4
    load: str = "ldg"  # ldg | default


SCAN_LOADS = ("default", "ldg", "cs")  # CUB's cache load modifiers the scan implements
SCAN_STORES = ("default", "cs")  # cache store modifiers the scan implements (cs: streaming, evict-first)
SCAN_MAX_TILE_BYTES_PER_THREAD = 256  # the tile lives in registers: items x element size per thread


@dataclass(frozen=True)
class ScanPolicy:
    threads: int
    items: int
    delay: str = "fixed"
    delay_ns: int = 350
    l2_write_ns: int = 450
    vec: int = 16  # elements per global access, capped at 16 bytes and to a divisor of items
    window: int = 0  # look-back predecessors per poll; 0: one per lane of the warp
    load: str = "default"  # SCAN_LOADS
    store: str = "default"  # SCAN_STORES


# CUB 3.0.1's minimum bytes in flight per SM on sm_90 (cub/device/dispatch/tuning/tuning_transform.cuh):
# the default when a spec's transform policy gives none.
DEFAULT_BYTES_IN_FLIGHT = 48 * 1024


@dataclass(frozen=True)
class TransformPolicy:
    threads: int = 256
    bytes_in_flight: int = DEFAULT_BYTES_IN_FLIGHT  # per SM


@dataclass(frozen=True)
class TopkPolicy:
    threads: int = 512
    items: int = 4
    bits_per_pass: int = 11
    max_k: int = 1024
    # Long rows: several blocks per row (one register-resident slice each) + a merge kernel.
    # False: always one block per row (the kernel measured before 2026-11-30 evening).
    split: bool = True


@dataclass(frozen=True)
class KernelConfig:
    name: str  # spec / hardware label, printed in errors
    warp_size: int  # logical warp of the kernels (the spec's hardware)
    physical_warp: Optional[int] = None  # None: native (== warp_size)
    smem_per_block: int = 48 * 1024
    smem_banks: int = 32
    max_threads_per_sm: int = 2048
    cxx: int = 17
    cuda: str = "13.0"
    has_nanosleep: bool = True
    # PTX memory-model accesses (ld/st.relaxed.gpu, vector forms single-copy in practice, as CUB
    # relies on) and .cs cache hints: NVIDIA sm_70+. Without: volatile accesses, 8-byte scan values
    # published through a flag and a fence.
    has_ptx_memory_model: bool = True
    clock_ghz: float = 1.5  # for the busy-wait delay when there is no __nanosleep
    reduce: dict = field(default_factory=dict)  # dtype -> ReducePolicy
    scan: dict = field(default_factory=dict)  # dtype -> ScanPolicy
    transform: dict = field(default_factory=dict)  # dtype -> TransformPolicy
    topk: dict = field(default_factory=dict)  # dtype -> TopkPolicy
    plant_lane32_bug: bool = False  # negative control only: block reduce assumes 32 lanes

    @property
    def physical(self) -> int:
        return self.physical_warp or self.warp_size

    @property
    def emulate_warp(self) -> Optional[int]:
        return self.warp_size if self.physical_warp and self.physical_warp != self.warp_size else None

    def emulated(self, logical: int, physical: int = 32) -> "KernelConfig":
        """The same kernels (same policies, tiles) with a ``logical``-lane warp on a ``physical``-lane GPU."""
        return replace(self, warp_size=logical, physical_warp=physical,
                       name=f"{self.name}-emu{logical}")

    def digest(self) -> str:
        blob = json.dumps(asdict(self), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def validate(cfg: KernelConfig) -> list[str]:
    """Every reason the kernels cannot be generated for ``cfg`` (empty: fine)."""
    errs: list[str] = []
    w, p = cfg.warp_size, cfg.physical
    if not _pow2(w) or not _pow2(p):
        errs.append(f"warp sizes must be powers of two (logical {w}, physical {p})")
        return errs  # every later rule divides by the warp
    if w > p and w > 8 * p:
        errs.append(f"emulated warp {w} is more than 8 physical warps of {p}")
    if cfg.cxx < 14:
        errs.append("C++14 is the lowest supported language level")
    for alg, table in (("reduce", cfg.reduce), ("scan", cfg.scan), ("topk", cfg.topk)):
        for dtype, pol in sorted(table.items()):
            where = f"{alg}.{dtype}"
            if pol.threads % w:
                errs.append(f"{where}: threads={pol.threads} is not a multiple of the warp size {w}")
            if pol.threads % p:
                errs.append(f"{where}: threads={pol.threads} is not a multiple of the physical warp {p}")
            if w > p and pol.threads // w + 1 > MAX_NAMED_BARRIERS:
                errs.append(f"{where}: {pol.threads // w} logical warps need more than "
                            f"{MAX_NAMED_BARRIERS - 1} named barriers in emulation")
    for dtype, pol in sorted(cfg.scan.items()):
        if pol.delay not in DELAY_KINDS:
            errs.append(f"scan.{dtype}: unknown delay `{pol.delay}` (one of {', '.join(DELAY_KINDS)})")
        if pol.load not in SCAN_LOADS:
            errs.append(f"scan.{dtype}: load modifier `{pol.load}` is not implemented (one of {', '.join(SCAN_LOADS)})")
        if pol.store not in SCAN_STORES:
            errs.append(f"scan.{dtype}: store modifier `{pol.store}` is not implemented (one of {', '.join(SCAN_STORES)})")
        if pol.vec < 1:
            errs.append(f"scan.{dtype}: vec={pol.vec} must be at least 1")
        win = scan_window(cfg, dtype)
        if pol.window < 0 or (win > w and win % w) or (win < w and w % win) or win > 8 * w:
            errs.append(f"scan.{dtype}: window={pol.window} must divide the warp ({w}) or be a multiple of it, "
                        f"at most {8 * w}")
        if pol.items * ELEM_SIZE[dtype] > SCAN_MAX_TILE_BYTES_PER_THREAD:
            errs.append(f"scan.{dtype}: items={pol.items} x {ELEM_SIZE[dtype]} B per thread is over the "
                        f"{SCAN_MAX_TILE_BYTES_PER_THREAD} B the kernel holds in registers")
        if scan_smem(cfg, dtype) > cfg.smem_per_block:
            errs.append(f"scan.{dtype}: tile needs {scan_smem(cfg, dtype)} B of shared memory, "
                        f"the hardware has {cfg.smem_per_block} B per block")
    for dtype, pol in sorted(cfg.topk.items()):
        if not 1 <= pol.bits_per_pass <= 12:
            errs.append(f"topk.{dtype}: bits_per_pass={pol.bits_per_pass} outside 1..12")
        if topk_smem(cfg, dtype) > cfg.smem_per_block:
            errs.append(f"topk.{dtype}: needs {topk_smem(cfg, dtype)} B of shared memory, "
                        f"the hardware has {cfg.smem_per_block} B per block")
    return errs


# ---- derived numbers (printed by the templates) -------------------------------------------------

def xchg_bytes(cfg: KernelConfig) -> int:
    """Shared memory the warp emulation's exchange buffer takes (one 8-byte slot per thread)."""
    if cfg.warp_size <= cfg.physical:
        return 0
    return 8 * max_threads(cfg)


def max_threads(cfg: KernelConfig) -> int:
    ts = [p.threads for t in (cfg.reduce, cfg.scan, cfg.topk, cfg.transform) for p in t.values()]
    return max(ts or [cfg.physical])


def reduce_vec(cfg: KernelConfig, dtype: str) -> int:
    """Vector width in elements, capped at 16-byte loads; 1 when items is not a multiple of it
    (CUB likewise loads without vectors then: AgentReduce's ATTEMPT_VECTORIZATION)."""
    pol = cfg.reduce[dtype]
    vec = max(1, min(pol.vec, 16 // ELEM_SIZE[dtype]))
    return vec if pol.items % vec == 0 else 1


def scan_smem(cfg: KernelConfig, dtype: str) -> int:
    """The scan's shared memory: warp totals and the block prefix (the tile stays in registers)."""
    pol = cfg.scan[dtype]
    return ELEM_SIZE[dtype] * (pol.threads // cfg.warp_size + 1) + xchg_bytes(cfg)


def scan_vec(cfg: KernelConfig, dtype: str) -> int:
    """Elements per global access: the policy's vec capped at 16 bytes (and a power of two), then halved until it divides
    items (a tile row of vectors must cover the items exactly)."""
    pol = cfg.scan[dtype]
    vec = max(1, min(pol.vec, 16 // ELEM_SIZE[dtype]))
    vec = 1 << (vec.bit_length() - 1)  # a power of two (16-, 8-, 4-byte accesses)
    while pol.items % vec:
        vec //= 2
    return vec


def scan_window(cfg: KernelConfig, dtype: str) -> int:
    """Look-back predecessors per poll (0 in the policy: one per lane of the logical warp)."""
    return cfg.scan[dtype].window or cfg.warp_size


def topk_smem(cfg: KernelConfig, dtype: str) -> int:
    pol = cfg.topk[dtype]
    return 4 * (1 << pol.bits_per_pass) + 8 * pol.max_k + xchg_bytes(cfg) + 4 * (pol.threads // cfg.warp_size + 8)


def topk_split(cfg: KernelConfig, dtype: str) -> dict:
    """When a row is split over several blocks (printed into params.cuh; the launcher only compares).

    A slice is one block's tile (threads x items x 16-byte vectors: 8192 float32 / 16384 half
    columns at 512 x 4), loaded once into registers as order-preserving keys (canonicalised once,
    not per radix pass). Each slice writes its own top-k (index order) to a workspace; one block
    per row then selects from the nblk*k candidates. Blocks per row = ceil(cols / slice): 19 for a
    152064-column row, so 1 row fills 19 SMs instead of 1 and 8 rows 152 blocks (>= sm_count).
    Split when the row has at least ``min_chunks`` slices (fewer: one block is as fast) and
    k <= slice / 4 (the merge then reads at most a quarter of the row again).
    """
    pol = cfg.topk[dtype]
    vec = 16 // ELEM_SIZE[dtype]
    chunk = pol.threads * pol.items * vec
    return {"on": int(pol.split), "chunk": chunk, "min_cols": 2 * chunk,
            "max_k": min(pol.max_k, chunk // 4), "max_rows": 65535}


def transform_items(cfg: KernelConfig, dtype: str) -> tuple[int, int]:
    """(items per thread, vector width): enough bytes in flight per SM for the policy.

    bytes_in_flight is per SM (CUB's meaning); resident threads per SM are assumed to be
    ``max_threads_per_sm`` (full occupancy, which these register-light kernels reach).
    """
    pol = cfg.transform[dtype]
    size = ELEM_SIZE[dtype]
    vec = 16 // size
    per_thread = -(-pol.bytes_in_flight // (cfg.max_threads_per_sm * size))
    items = max(vec, -(-per_thread // vec) * vec)
    return items, vec


DELAY_TABLE = {
    # kind: (mode, jitter) — mode 0 none, 1 constant, 2 grow (backoff), 3 shrink (backon);
    # jitter 0 none, 1 uniform in [0, d), 2 window [d/2, d)
    "no_delay": (0, 0),
    "fixed": (1, 0),
    "exponential_backoff": (2, 0),
    "exponential_backoff_jitter": (2, 1),
    "exponential_backoff_jitter_window": (2, 2),
    "exponential_backon_jitter_window": (3, 2),
    "exponential_backon_jitter": (3, 1),
    "exponential_backon": (3, 0),
}


def scan_delay(cfg: KernelConfig, dtype: str) -> dict:
    pol = cfg.scan[dtype]
    mode, jitter = DELAY_TABLE[pol.delay]
    ns = max(0, pol.delay_ns)
    # backoff starts small and doubles up to ns; backon starts at ns and halves down to a floor.
    start = {0: 0, 1: ns, 2: max(1, ns // 16), 3: ns}[mode]
    floor = max(1, ns // 16)
    return {"mode": mode, "jitter": jitter, "start_ns": start, "max_ns": max(ns, 1), "min_ns": floor,
            "l2w_ns": max(0, pol.l2_write_ns),
            "spin_cycles_per_ns_x16": int(round(cfg.clock_ghz * 16))}
