"""vLLM 0.6.3 tuning numbers derived from the hardware block: each a ``Resolved`` (rule + inputs) or a
plain number whose rule is named beside it. Stock values from vLLM 0.6.3.post1's source
(https://github.com/vllm-project/vllm/tree/v0.6.3.post1); the deploy resolution
(muh.engines.vllm.derive.build_plan) applies them to a spec's deploy block.
"""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.schema.models import Hardware

# Stock values of vLLM 0.6.3 (its source: https://github.com/vllm-project/vllm/tree/v0.6.3.post1) and the hardware
# they were chosen on.
STOCK_V1_THRESHOLD = 512  # attention/ops/paged_attn.py:127
STOCK_V1_MAX_SEQ_LEN = 8192  # attention/ops/paged_attn.py:126
STOCK_SM_COUNT = 108  # A100, the card the 512 was tuned on
STOCK_PREFILL_THREADS = 8 * 32  # NUM_WARPS = 8 on 32-lane warps (prefix_prefill.py:713)
TRITON_DEFAULT_WARPS_THREADS = 4 * 32  # Triton's num_warps = 4 when a MoE config gives none
TRITON_DEFAULT_STAGES = 3


def pow2_floor(x: float) -> int:
    n = 1
    while n * 2 <= x:
        n *= 2
    return n


def pow2_nearest(x: float) -> int:
    lo = pow2_floor(x)
    return lo * 2 if x - lo > lo * 2 - x else lo


def v1_threshold(hw: Hardware) -> Resolved:
    value = max(1, pow2_nearest(STOCK_V1_THRESHOLD * hw.sm_count / STOCK_SM_COUNT))
    return Resolved(
        value=value,
        origin="derived",
        rule="pow2_nearest(stock_threshold × sm_count / stock_sm_count)",
        inputs={"stock_threshold": STOCK_V1_THRESHOLD, "sm_count": hw.sm_count, "stock_sm_count": STOCK_SM_COUNT},
    )


def v1_max_seq_len_limit(hw: Hardware) -> int:
    """v1 keeps one fp32 logit per context token in shared memory, plus ~1 KiB of reduction scratch."""
    return (int(hw.smem_per_block) - 1024) // 4


def triton_smem(hw: Hardware) -> int:
    """Shared memory a Triton kernel may use: the opt-in maximum when the hardware has one (Triton asks for it)."""
    return int(hw.smem_per_block_optin or hw.smem_per_block)


def prefill_block(hw: Hardware, head_dim: int, elem_bytes: int = 2) -> Resolved:
    """Largest power-of-two tile whose Q + K + V staging, (B + 2B) × head_dim × elem, stays below smem."""
    smem = triton_smem(hw)
    block = 16
    for b in (128, 64, 32, 16):
        if 3 * b * head_dim * elem_bytes < smem:
            block = b
            break
    return Resolved(
        value=block,
        origin="derived",
        rule="largest power of two B ≤ 128 with (B + 2·B) × head_dim × elem_bytes < Triton's shared memory",
        inputs={"head_dim": head_dim, "elem_bytes": elem_bytes, "smem_bytes": smem},
    )


def prefill_num_warps(hw: Hardware) -> Resolved:
    value = max(1, STOCK_PREFILL_THREADS // hw.warp_size)
    return Resolved(
        value=value,
        origin="derived",
        rule="stock threads per program (8 warps × 32) / warp_size",
        inputs={"stock_threads": STOCK_PREFILL_THREADS, "warp_size": hw.warp_size},
    )


def moe_tile(m: int, experts: int, hw: Hardware, elem_bytes: int = 2) -> dict[str, int]:
    """vLLM's fallback tile for batch size ``m`` made explicit for this hardware.

    Shapes follow ``get_default_config`` (small-M shape when m ≤ experts); warps keep Triton's
    default 128 threads per program on this warp size; stages are Triton's default 3, fewer when
    the A and B tiles of that many stages would not fit in shared memory.
    """
    if m <= experts:
        bm, bn, bk, group = 16, 32, 64, 1
    else:
        bm, bn, bk, group = 64, 64, 32, 8
    per_stage = (bm * bk + bk * bn) * elem_bytes
    stages = max(1, min(TRITON_DEFAULT_STAGES, triton_smem(hw) // per_stage))
    warps = max(1, TRITON_DEFAULT_WARPS_THREADS // hw.warp_size)
    return {
        "BLOCK_SIZE_M": bm,
        "BLOCK_SIZE_N": bn,
        "BLOCK_SIZE_K": bk,
        "GROUP_SIZE_M": group,
        "num_warps": warps,
        "num_stages": stages,
    }


# vLLM's MoE config file name (fused_moe.get_config_file_name): the runtime's device name, spaces → "_".
MOE_FILE_PATTERN = "E={E},N={N},device_name={device}{dtype}.json"


def moe_config_file_name(experts: int, n: int, device: str, dtype: str | None = None) -> str:
    return MOE_FILE_PATTERN.format(
        E=experts, N=n, device=device.replace(" ", "_"), dtype=f",dtype={dtype}" if dtype else ""
    )


MOE_TILE_RULE = (
    "vLLM get_default_config shapes (16/32/64/1 when M ≤ E, else 64/64/32/8); num_warps = 128 / warp_size; "
    "num_stages = min(3, Triton's shared memory / ((BM·BK + BK·BN) × elem_bytes))"
)

# The batch sizes vLLM's own MoE tuner measures (benchmarks/kernels/benchmark_moe.py, 0.6.3).
TUNER_GRID = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def moe_batch_sizes(max_num_seqs: int, max_tokens: int) -> list[int]:
    """Every decode batch 1..max_num_seqs exactly, the tuner's grid up to ``max_tokens``, and ``max_tokens``."""
    keys = set(range(1, max_num_seqs + 1)) | {m for m in TUNER_GRID if m <= max_tokens} | {max_tokens}
    return sorted(keys)
