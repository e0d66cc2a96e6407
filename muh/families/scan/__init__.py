"""scan: inclusive / exclusive prefix sum in one pass (decoupled look-back, CUB DeviceScan)."""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import cub
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, param, record, xchg_bytes
from muh.runtime import dtypes as DT

# The kernel config's delay names: CCCL's look-back delay constructors, in the benchmark's dcid order.
DELAY_KINDS = (
    "no_delay",
    "fixed",
    "exponential_backoff",
    "exponential_backoff_jitter",
    "exponential_backoff_jitter_window",
    "exponential_backon_jitter_window",
    "exponential_backon_jitter",
    "exponential_backon",
)
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
# CCCL 3.0.1's fixed_delay_constructor_t<350, 450> (cub/agent/single_pass_scan_operators.cuh): the
# look-back delay when a spec's scan policy names none.
DEFAULT_DELAY_NS, DEFAULT_L2_WRITE_NS = 350, 450
LOADS = ("default", "ldg", "cs")  # CUB's cache load modifiers the scan implements
STORES = ("default", "cs")  # cache store modifiers the scan implements (cs: streaming, evict-first)
MAX_TILE_BYTES_PER_THREAD = 256  # the tile lives in registers: items x element size per thread
# Where a tile waits for its look-back: in registers, or in shared memory filled by the bulk copy engine
# (cp.async.bulk, sm_90+; CCCL's DeviceTransform calls its use of the same engine `ublkcp`).
STAGES = ("registers", "ublkcp")
BULK_CHUNK_BYTES = 4096  # bytes per cp.async.bulk instruction (one per lane of warp 0; lab: 1-32 KiB alike)
STATIC_SMEM_BYTES = 48 * 1024  # CUDA's limit on a block's static shared memory (the staged tile is static)
# A pipelined ring (stages >= 3) looks back for each tile one tile after publishing its aggregate, so
# the next tile's aggregate never waits on a look-back (scan_tile.cuh: kLag; lag 0 is the chain that
# a simple persistent grid suffers: bench/results/scan-h200.md).
RING_LAG = 1
MIN_RING_STAGES = 2 + RING_LAG  # the tile being finished, the one just scanned, one in flight

# DeviceScan's hub: CUB's look-back tile (cub.SCAN), then muh's own dimensions.
CUB = cub.CubTable(
    "DeviceScan::InclusiveSum / ExclusiveSum (and *Scan with an operator)",
    "tuning_scan.cuh",
    hub="typename cub::detail::scan::policy_hub<T, T, T, O, Op>::MaxPolicy",
    agent="ScanPolicyT",
    types=cub.SUMS,
    members=cub.SCAN
    + cub.members(*((d, None) for d in ("vec", "window", "store_modifier", "stage", "passes", "stages", "stage_from"))),
    takes_op=True,
    takes_offset=True,
    any_type=True,
)


@dataclass(frozen=True)
class Policy:
    threads: int
    items: int
    delay: str = "fixed"
    delay_ns: int = DEFAULT_DELAY_NS
    l2_write_ns: int = DEFAULT_L2_WRITE_NS
    vec: int = 16  # elements per global access, capped at 16 bytes and to a divisor of items
    window: int = 0  # look-back predecessors per poll; 0: one per lane of the warp
    load: str = "default"  # LOADS
    store: str = "default"  # STORES
    stage: str = "registers"  # STAGES
    passes: int = 1  # register passes over a shared-memory staged tile (stage ublkcp)
    stages: int = 1  # staged tiles per block: 1 one per block; >= MIN_RING_STAGES a pipelined resident grid
    stage_from: int = 0  # bytes of input from which a ublkcp policy stages (below: the register kernel)


def delay_kind(kind: str) -> str:
    """The spec's delay name (CCCL's constructor) as the kernel config's."""
    return kind if kind in ("no_delay", "fixed") else f"exponential_{kind}"


def read(get) -> Policy:
    """``modifier`` is the load's cache modifier, ``store_modifier`` the store's; ``window`` unset is one
    predecessor per lane of the warp; ``passes``, ``stages`` and ``stage_from`` count only with ``stage = ublkcp``
    (a type whose policy stages in registers ignores the ones it inherits)."""
    delay = get("delay", None)
    kw = {}
    if delay is not None:
        kw = dict(delay=delay_kind(delay.kind), delay_ns=int(delay.ns), l2_write_ns=int(delay.l2_write_latency))
    kw["vec"] = int(get("vec", 16))
    kw["window"] = int(get("window", 0))
    kw["load"] = str(get("modifier", None) or "default")
    kw["store"] = str(get("store_modifier", None) or "default")
    kw["stage"] = str(get("stage", None) or "registers")
    if kw["stage"] == "ublkcp":  # passes and stage_from belong to a staged tile (inherited ones are moot otherwise)
        kw["passes"] = int(get("passes", 1))
        kw["stages"] = int(get("stages", 1))
        kw["stage_from"] = int(get("stage_from", 0))
    return Policy(int(get("threads")), int(get("items")), **kw)


def smem(cfg, dtype: str, pol: Policy) -> int:
    """Registers: warp totals and the block prefix. ublkcp: `stages` tiles (threads x items x passes),
    the warp totals of every pass of each, the block prefix, each stage's tile number and mbarrier."""
    size, warps = DT.SIZE[dtype], pol.threads // cfg.warp_size
    if pol.stage == "ublkcp":
        per_stage = size * pol.threads * pol.items * pol.passes + size * pol.passes * warps + 16
        return pol.stages * per_stage + size + xchg_bytes(cfg)
    return size * (warps + 1) + xchg_bytes(cfg)


def vec(dtype: str, pol: Policy) -> int:
    """Elements per global access: the policy's vec capped at 16 bytes (and a power of two), then
    halved until it divides items (a tile row of vectors must cover the items exactly)."""
    v = max(1, min(pol.vec, 16 // DT.SIZE[dtype]))
    v = 1 << (v.bit_length() - 1)
    while pol.items % v:
        v //= 2
    return v


def window(cfg, pol: Policy) -> int:
    """Look-back predecessors per poll (0 in the policy: one per lane of the logical warp)."""
    return pol.window or cfg.warp_size


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    errs = []
    if pol.delay not in DELAY_KINDS:
        errs.append(f"scan.{dtype}: unknown delay `{pol.delay}` (one of {', '.join(DELAY_KINDS)})")
    w = cfg.warp_size
    if pol.load not in LOADS:
        errs.append(f"scan.{dtype}: load modifier `{pol.load}` is not implemented (one of {', '.join(LOADS)})")
    if pol.store not in STORES:
        errs.append(f"scan.{dtype}: store modifier `{pol.store}` is not implemented (one of {', '.join(STORES)})")
    if pol.vec < 1:
        errs.append(f"scan.{dtype}: vec={pol.vec} must be at least 1")
    win = window(cfg, pol)
    if pol.window < 0 or (win > w and win % w) or (win < w and w % win) or win > 8 * w:
        errs.append(
            f"scan.{dtype}: window={pol.window} must divide the warp ({w}) or be a multiple of it, at most {8 * w}"
        )
    if pol.stage not in STAGES:
        errs.append(f"scan.{dtype}: stage `{pol.stage}` is not implemented (one of {', '.join(STAGES)})")
    elif pol.stage == "ublkcp" and not cfg.has_bulk_copy:
        errs.append(
            f"scan.{dtype}: stage = ublkcp needs the bulk copy engine (NVIDIA compute capability 9.0+), "
            f"which `{cfg.name}` lacks; use stage = registers"
        )
    if pol.passes < 1 or (pol.passes > 1 and pol.stage != "ublkcp"):
        errs.append(f"scan.{dtype}: passes={pol.passes} needs stage = ublkcp (a register-staged tile is one pass)")
    if pol.stages < 1 or (pol.stages > 1 and pol.stage != "ublkcp") or 1 < pol.stages < MIN_RING_STAGES:
        errs.append(
            f"scan.{dtype}: stages={pol.stages} must be 1 (one staged tile per block) or, with "
            f"stage = ublkcp, at least {MIN_RING_STAGES} (a pipelined ring)"
        )
    if pol.stage_from and pol.stage != "ublkcp":
        errs.append(f"scan.{dtype}: stage_from={pol.stage_from} needs stage = ublkcp")
    if not 0 <= pol.stage_from < 1 << 31:
        errs.append(f"scan.{dtype}: stage_from={pol.stage_from} B must be under 2 GiB")
    tile_bytes = pol.threads * pol.items * pol.passes * DT.SIZE[dtype]
    if pol.stage == "ublkcp" and tile_bytes > BULK_CHUNK_BYTES and tile_bytes % BULK_CHUNK_BYTES:
        errs.append(
            f"scan.{dtype}: a staged tile of {tile_bytes} B is not a multiple of the bulk copy's "
            f"{BULK_CHUNK_BYTES} B chunks; change threads, items or passes"
        )
    if pol.items * DT.SIZE[dtype] > MAX_TILE_BYTES_PER_THREAD:
        errs.append(
            f"scan.{dtype}: items={pol.items} x {DT.SIZE[dtype]} B per thread is over the "
            f"{MAX_TILE_BYTES_PER_THREAD} B the kernel holds in registers"
        )
    need = smem(cfg, dtype, pol)
    if pol.stages > 1:  # the ring's tiles are dynamic shared memory: up to the opt-in limit
        limit = cfg.smem_per_block_optin or cfg.smem_per_block
        if need > limit:
            errs.append(
                f"scan.{dtype}: a ring of {pol.stages} staged tiles needs {need} B of shared memory, "
                f"the hardware has {limit} B per block (opt-in); lower stages, items or passes"
            )
    elif need > cfg.smem_per_block:
        errs.append(
            f"scan.{dtype}: tile needs {need} B of shared memory, the hardware has {cfg.smem_per_block} B per block"
        )
    elif pol.stage == "ublkcp" and need > STATIC_SMEM_BYTES:
        errs.append(
            f"scan.{dtype}: the staged tile needs {need} B of static shared memory, over CUDA's "
            f"{STATIC_SMEM_BYTES} B per block; lower items or passes"
        )
    return errs


def params(cfg, dtype: str, pol: Policy):
    mode, jitter = DELAY_TABLE[pol.delay]
    ns = max(0, pol.delay_ns)
    # backoff starts small and doubles up to ns; backon starts at ns and halves down to a floor.
    floor = max(1, ns // 16)
    start = {0: 0, 1: ns, 2: floor, 3: ns}[mode]
    x16 = int(round(cfg.clock_ghz * 16))
    return [
        param("kThreads", pol.threads, "policy threads"),
        param("kItems", pol.items, "policy items"),
        param(
            "kVec",
            vec(dtype, pol),
            "min(vec, 16 B / element size), a power of two dividing items",
            vec=pol.vec,
            items=pol.items,
            element_size=DT.SIZE[dtype],
        ),
        param("kWindow", window(cfg, pol), "policy window (unset: the warp)", window=pol.window),
        param("kLoad", LOADS.index(pol.load), "load modifier " + pol.load + " (" + ", ".join(LOADS) + ")"),
        param("kStore", STORES.index(pol.store), "store modifier " + pol.store + " (" + ", ".join(STORES) + ")"),
        param("kStage", STAGES.index(pol.stage), "stage " + pol.stage + " (" + ", ".join(STAGES) + ")"),
        param("kPasses", pol.passes, "policy passes (stage registers: 1)"),
        param("kStages", pol.stages, "policy stages (1: one tile per block; more: a pipelined ring)"),
        param("kLag", RING_LAG, "look-back one tile after the aggregate (muh/families/scan: RING_LAG)"),
        param("kBulkChunk", BULK_CHUNK_BYTES, "bytes per bulk copy instruction (muh/families/scan)"),
        param("kStageFromBytes", pol.stage_from, "policy stage_from (below: the register kernel of threads x items)"),
        param("kDelayMode", mode, "delay kind: 0 none, 1 constant, 2 backoff, 3 backon", kind=pol.delay),
        param("kDelayJitter", jitter, "delay kind: 0 none, 1 uniform, 2 window", kind=pol.delay),
        param("kDelayStartNs", start, "fixed/backon: ns; backoff: ns / 16", ns=ns),
        param("kDelayMinNs", floor, "max(1, ns / 16)", ns=ns),
        param("kDelayMaxNs", max(ns, 1), "max(ns, 1)", ns=ns),
        param("kL2WriteNs", max(0, pol.l2_write_ns), "policy delay l2_write_latency"),
        param(
            "kSpinCyclesPerNsX16",
            x16,
            "round(clock GHz x 16): busy-wait without __nanosleep",
            clock_ghz=cfg.clock_ghz,
            clock_from=cfg.clock_from,
        ),
    ]


DTYPES = ("float32", "float64", "int32", "int64")


def scan(x, exclusive: bool = False, *, out=None, kernels=None):
    """Inclusive (or exclusive) prefix sum over the elements of ``x`` in memory order; x's shape."""
    torch = T.torch()
    name = T.check_tensor(x, "scan", DTYPES)
    k = T.kernels(kernels)
    out = torch.empty_like(x) if out is None else out
    T.check_out(out, x, x.numel(), "scan")
    nbytes = int(k.raw("muh_scan_workspace_bytes")(DT.CODE[name], x.numel()))
    ws = T.workspace(k, x, f"scan{x.element_size()}", nbytes)
    ws[1] = ws[1] % T.EPOCH_LIMIT + 1
    with torch.cuda.device(x.device):
        k.call(
            "muh_scan",
            int(bool(exclusive)),
            DT.CODE[name],
            x.data_ptr(),
            out.data_ptr(),
            x.numel(),
            ws[0].data_ptr(),
            ws[0].numel(),
            ws[1],
            T.stream(x),
        )
    return out


RECORD = record(
    __name__,
    doc="inclusive / exclusive prefix sum in one pass (DeviceScan, decoupled look-back)",
    tunable=(
        "threads",
        "items",
        "vec",
        "window",
        "modifier",
        "store_modifier",
        "stage",
        "passes",
        "stages",
        "stage_from",
    ),
    api=cfuncs("""
size_t muh_scan_workspace_bytes(int dtype, long long n);
int muh_scan(int exclusive, int dtype, const void* in, void* out, long long n, void* workspace, size_t workspace_bytes, unsigned epoch, void* stream);
"""),  # noqa: E501 - one C declaration a line (cfuncs)
    headers=("scan_tile.cuh",),
    harness=Harness(),
    python_ops={"scan": scan},
)
