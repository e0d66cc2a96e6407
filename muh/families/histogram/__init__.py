"""histogram: counts of samples in evenly spaced bins (CUB DeviceHistogram::HistogramEven, one channel).

``bins`` bins split [lower, upper) evenly; samples outside (and NaN) are not counted. Floating point
samples: bin = int((x - lower) * T(bins / (upper - lower))); integer samples: exact integer
arithmetic (see templates/histogram.cuh). Counters are int32. The kernel counts a grid-stride share
of tiles per block into ``sub_histograms`` interleaved copies of a shared-memory histogram (global
atomics when the bins do not fit); 1-byte samples are counted by value (256 counters, turned into bins
once per block).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from muh.families import cub
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, param, record, vec_of
from muh.runtime import dtypes as DT

COUNTER_BYTES = 4  # int32 counters
BYTE_VALUES = 256  # 1-byte samples are counted by value: one counter per bit pattern

# DeviceHistogram's hub, probed for samples up to 4 bytes (CUB divides the items of wider samples by a
# rule muh lacks); sub_histograms is muh's own.
CUB = cub.CubTable(
    "DeviceHistogram::HistogramEven (one channel, int counters)",
    "tuning_histogram.cuh",
    hub="typename cub::detail::histogram::policy_hub<T, int, 1, 1, true>::MaxPolicy",
    agent="AgentHistogramPolicyT",
    types=("int8", "uint8", "int16", "uint16", "int32", "uint32", "float32"),
    members=cub.members(
        "threads",
        ("pixels_per_thread", "PIXELS_PER_THREAD"),
        ("vec", "VEC_SIZE"),
        "load",
        "modifier",
        ("rle_compress", "IS_RLE_COMPRESS"),
        ("memory", "MEM_PREFERENCE"),
        ("work_stealing", "IS_WORK_STEALING"),
        ("sub_histograms", None),
    ),
)


@dataclass(frozen=True)
class Policy:
    threads: int
    items: int  # samples per thread and tile (CUB's pixels_per_thread)
    vec: int = 4  # samples per vector load (CUB's vec)
    sub_histograms: Optional[int] = None  # copies of a block's counters (None: copies() derives it)


def read(get) -> Policy:
    sub = get("sub_histograms", None)
    return Policy(
        int(get("threads")), int(get("pixels_per_thread")), int(get("vec", 4)), None if sub is None else int(sub)
    )


def copies(cfg, dtype: str, pol: Policy) -> tuple[int, str, dict]:
    """(sub-histograms per block, rule, inputs). Thread t counts in copy t % copies of counters laid
    out interleaved (counter i of copy c at i * copies + c). 1-byte samples make four samples per
    4-byte load and no bin arithmetic, so the shared-memory atomics are their bound: one copy per
    bank puts the lanes of a warp in distinct banks (and words) whatever the values. Other samples:
    one histogram per block, as CUB (their loads, not the atomics, are the bound)."""
    if pol.sub_histograms is not None:
        return pol.sub_histograms, "policy sub_histograms", {}
    if DT.SIZE[dtype] == 1:
        return cfg.smem_banks, "1-byte samples: one copy per shared-memory bank", {"smem_banks": cfg.smem_banks}
    return 1, "one histogram per block (CUB)", {"element_size": DT.SIZE[dtype]}


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    n, _, _ = copies(cfg, dtype, pol)
    if n < 1:
        return [f"histogram.{dtype}: sub_histograms={n} must be at least 1"]
    if DT.SIZE[dtype] == 1 and BYTE_VALUES * n * COUNTER_BYTES > cfg.smem_per_block:
        return [
            f"histogram.{dtype}: {n} sub-histograms of {BYTE_VALUES} counters need "
            f"{BYTE_VALUES * n * COUNTER_BYTES} B of shared memory, the hardware has {cfg.smem_per_block} B per "
            f"block (at most {cfg.smem_per_block // (BYTE_VALUES * COUNTER_BYTES)})"
        ]
    return []


def load_width(dtype: str, pol: Policy) -> tuple[int, str]:
    """(samples per load, rule): the largest power of two <= min(vec, 16 B / sample size) that divides
    the samples per thread (12 one-byte samples at vec 4: 4-byte loads, not scalar ones)."""
    v = 1
    while v * 2 <= min(pol.vec, vec_of(dtype)) and pol.items % (v * 2) == 0:
        v *= 2
    return v, "largest power of two <= min(vec, 16 B / sample size) dividing items"


def params(cfg, dtype: str, pol: Policy):
    vec, rule = load_width(dtype, pol)
    n, why, ins = copies(cfg, dtype, pol)
    return [
        param("kThreads", pol.threads, "policy threads"),
        param("kItems", pol.items, "policy pixels_per_thread"),
        param("kVec", vec, rule, vec=pol.vec, items=pol.items, element_size=DT.SIZE[dtype]),
        param("kCopies", n, why, **ins),
        param(
            "kSmemBins",
            cfg.smem_per_block // COUNTER_BYTES,
            "smem_per_block / 4 B: more bins are counted in global memory",
            smem_per_block=cfg.smem_per_block,
        ),
    ]


DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64")


def histogram_even(x, bins: int, lower: float, upper: float, *, out=None, kernels=None):
    """int32 counts of ``x``'s elements in ``bins`` even bins over [lower, upper) (CUB HistogramEven)."""
    torch = T.torch()
    name = T.check_tensor(x, "histogram", DTYPES)
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"{T.API}.histogram_even: bins={bins!r} must be an int >= 1")
    if not float(lower) < float(upper):
        raise ValueError(f"{T.API}.histogram_even: lower={lower} must be below upper={upper}")
    k = T.kernels(kernels)
    if out is None:
        out = torch.empty(bins, dtype=torch.int32, device=x.device)
    elif out.dtype != torch.int32 or out.device != x.device or not out.is_contiguous() or out.numel() != bins:
        raise ValueError(
            f"{T.API}.histogram_even: out must be a contiguous int32 tensor of {bins} element(s) on {x.device}"
        )
    with torch.cuda.device(x.device):
        k.call(
            "muh_histogram_even",
            DT.CODE[name],
            x.data_ptr(),
            x.numel(),
            bins,
            float(lower),
            float(upper),
            out.data_ptr(),
            T.stream(x),
        )
    return out


RECORD = record(
    __name__,
    doc="counts in evenly spaced bins over [lower, upper) (DeviceHistogram::HistogramEven)",
    tunable=("threads", "pixels_per_thread", "vec", "sub_histograms"),
    api=cfuncs("""
int muh_histogram_even(int dtype, const void* samples, long long n, int bins, double lower, double upper, int* histogram, void* stream);
"""),  # noqa: E501 - one C declaration a line (cfuncs)
    op=None,
    static=("histogram.cuh", "histogram_host.cuh"),
    python_ops={"histogram_even": histogram_even},
    harness=Harness(),
)
