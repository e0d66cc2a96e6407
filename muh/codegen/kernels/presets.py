"""Hand-built kernel configs for the two known targets (used by tests and the bench).

Values: the H200 ones are CUB 3.0.1's sm_90 policies (shared/facts/cccl.md); the BI-V100 ones are
specs/baseline.muh's. Scaling per element size follows CUB's mem-bound rule with the hardware's
warp size and shared-memory budget as parameters (shared/facts/cccl.md, "Scaling rules").
``adapter.from_derived`` builds the same thing from a real spec.
"""
from __future__ import annotations

from muh.codegen.kernels.config import (
    ELEM_SIZE, REDUCE_DTYPES, SCAN_DTYPES, TOPK_DTYPES, TRANSFORM_DTYPES, KernelConfig, ReducePolicy,
    ScanPolicy, TopkPolicy, TransformPolicy,
)


def mem_bound(threads: int, items: int, size: int, warp: int, smem: int) -> tuple[int, int]:
    it = max(1, min(4 * items // size, 2 * items))
    th = min(threads, -(-(smem // (size * it)) // warp) * warp)
    return max(th, warp), it


def _scaled_reduce(t4: int, i4: int, vec: int, warp: int, smem: int) -> dict:
    out = {}
    for d in REDUCE_DTYPES:
        th, it = mem_bound(t4, i4, ELEM_SIZE[d], warp, smem)
        v = max(1, min(vec, 16 // ELEM_SIZE[d]))
        it = max(v, it // v * v)
        out[d] = ReducePolicy(threads=th, items=it, vec=v, load="ldg")
    return out


def h200() -> KernelConfig:
    scan = {
        "float32": ScanPolicy(128, 24, "fixed", 688, 1140),
        "int32": ScanPolicy(128, 24, "fixed", 688, 1140),
        "float64": ScanPolicy(224, 12, "fixed", 576, 1215),
        "int64": ScanPolicy(224, 12, "fixed", 576, 1215),
    }
    return KernelConfig(
        name="h200", warp_size=32, smem_per_block=48 * 1024, cxx=17, cuda="13.0",
        reduce=_scaled_reduce(256, 16, 4, 32, 48 * 1024),
        scan=scan,
        transform={d: TransformPolicy(256, 48 * 1024) for d in TRANSFORM_DTYPES},
        topk={d: TopkPolicy(512, 4, 11, 1024) for d in TOPK_DTYPES},
    )


def bi100() -> KernelConfig:
    red = _scaled_reduce(256, 16, 4, 64, 48 * 1024)
    red["float32"] = ReducePolicy(512, 24, 2, "ldg")  # baseline.muh: float32.plus
    scan = {}
    for d in SCAN_DTYPES:
        th, it = mem_bound(384, 22, ELEM_SIZE[d], 64, 48 * 1024)
        scan[d] = ScanPolicy(th, it, "exponential_backon_jitter", 952, 415)
    return KernelConfig(
        name="bi100", warp_size=64, smem_per_block=48 * 1024, cxx=14, cuda="10.2", has_nanosleep=False,
        max_threads_per_sm=2048, clock_ghz=1.5,
        reduce=red,
        scan=scan,
        transform={d: TransformPolicy(256, 64 * 1024) for d in TRANSFORM_DTYPES},
        topk={d: TopkPolicy(512, 4, 11, 1024) for d in TOPK_DTYPES},
    )


PRESETS = {"h200": h200, "bi100": bi100}
