"""histogram: counts of samples in evenly spaced bins (CUB DeviceHistogram::HistogramEven, one channel).

``bins`` bins split [lower, upper) evenly; samples outside (and NaN) are not counted. Floating point
samples: bin = int((x - lower) * T(bins / (upper - lower))); integer samples: exact integer
arithmetic (see templates/histogram.cuh). Counters are int32. The kernel counts a grid-stride share
of tiles per block into a shared-memory histogram (global atomics when the bins do not fit).
"""
from __future__ import annotations

from dataclasses import dataclass

from muh.runtime import dtypes as DT
from muh.families.base import cfuncs, Family, param, vec_of

COUNTER_BYTES = 4  # int32 counters


@dataclass(frozen=True)
class Policy:
    threads: int
    items: int  # samples per thread and tile (CUB's pixels_per_thread)
    vec: int = 4  # samples per vector load (CUB's vec)


def read(get) -> Policy:
    return Policy(int(get("threads")), int(get("pixels_per_thread")), int(get("vec", 4)))


def load_width(dtype: str, pol: Policy) -> tuple[int, str]:
    """(samples per load, rule): the largest power of two <= min(vec, 16 B / sample size) that divides
    the samples per thread (12 one-byte samples at vec 4: 4-byte loads, not scalar ones)."""
    v = 1
    while v * 2 <= min(pol.vec, vec_of(dtype)) and pol.items % (v * 2) == 0:
        v *= 2
    return v, "largest power of two <= min(vec, 16 B / sample size) dividing items"


def params(cfg, dtype: str, pol: Policy):
    vec, rule = load_width(dtype, pol)
    return [
        param("kThreads", pol.threads, "policy threads"),
        param("kItems", pol.items, "policy pixels_per_thread"),
        param("kVec", vec, rule, vec=pol.vec, items=pol.items, element_size=DT.SIZE[dtype]),
        param("kSmemBins", cfg.smem_per_block // COUNTER_BYTES,
              "smem_per_block / 4 B: more bins are counted in global memory", smem_per_block=cfg.smem_per_block),
    ]


def histogram_even(x, bins: int, lower: float, upper: float, *, out=None, kernels=None):
    """int32 counts of ``x``'s elements in ``bins`` even bins over [lower, upper) (CUB HistogramEven)."""
    from muh.runtime import ops

    torch = ops._torch()
    name = ops.check_tensor(x, "histogram")
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"muh.runtime.ops.histogram_even: bins={bins!r} must be an int >= 1")
    if not float(lower) < float(upper):
        raise ValueError(f"muh.runtime.ops.histogram_even: lower={lower} must be below upper={upper}")
    k = ops._kernels(kernels)
    if out is None:
        out = torch.empty(bins, dtype=torch.int32, device=x.device)
    elif out.dtype != torch.int32 or out.device != x.device or not out.is_contiguous() or out.numel() != bins:
        raise ValueError(f"muh.runtime.ops.histogram_even: out must be a contiguous int32 tensor of {bins} "
                         f"element(s) on {x.device}")
    with torch.cuda.device(x.device):
        k.call("muh_histogram_even", DT.CODE[name], x.data_ptr(), x.numel(), bins, float(lower), float(upper),
               out.data_ptr(), ops._stream(x))
    return out


RECORD = Family(
    name="histogram",
    doc="counts in evenly spaced bins over [lower, upper) (DeviceHistogram::HistogramEven)",
    dtypes=("int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64"),
    policy=Policy,
    tunable=(),  # `muh tune` has no harness for it yet
    api=cfuncs("""
int muh_histogram_even(int dtype, const void* samples, long long n, int bins, double lower, double upper, int* histogram, void* stream);
"""),
    read=read,
    params=params,
    op=None,
    static=("histogram.cuh",),
    python_ops={"histogram_even": histogram_even},
)
