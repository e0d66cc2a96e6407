"""``tune { … }`` knobs: which exist, which are refused and why, and the rules that derive them.

Table-driven: a knob is accepted (with a type and a derivation), or refused with the reason a
user needs (unsafe, dead, wrong platform). Numbers come from shared/facts/vllm-0.6.3.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from muh.codegen.ops_package import PROVIDER_MODULE
from muh.derive.model import Resolved
from muh.runtime.ops_llm import VLLM_METHODS
from muh.schema.models import Hardware

# Stock values of vLLM 0.6.3 (facts/vllm-0.6.3.md) and the hardware they were chosen on.
STOCK_V1_THRESHOLD = 512        # attention/ops/paged_attn.py:127
STOCK_V1_MAX_SEQ_LEN = 8192     # attention/ops/paged_attn.py:126
STOCK_SM_COUNT = 108            # A100, the card the 512 was tuned on
STOCK_PREFILL_THREADS = 8 * 32  # NUM_WARPS = 8 on 32-lane warps (prefix_prefill.py:713)
TRITON_DEFAULT_WARPS_THREADS = 4 * 32  # Triton's num_warps = 4 when a MoE config gives none
TRITON_DEFAULT_STAGES = 3

REFUSED = {
    "paged_attention.partition_size": (
        "unsafe: `_PARTITION_SIZE` must equal the partition size compiled into the C++ v2 kernel; Python "
        "only sizes buffers with it (larger → out-of-bounds writes, smaller → no effect)"),
    "max_shared_memory": (
        "dead knob: `get_max_shared_memory_bytes` is not called anywhere in vLLM 0.6.3 serving; a patch "
        "of it changes nothing (the tiles that depend on shared memory are derived from the hardware block)"),
    "get_max_shared_memory_bytes": (
        "dead knob: nothing in vLLM 0.6.3 serving calls it; tiles are derived from `smem_per_block` instead"),
    "triton_flash_attention": ("ROCm only: its autotune configs are never used on CUDA-like platforms"),
}


@dataclass(frozen=True)
class Knob:
    kind: str  # int | bool | str | names
    doc: str
    lo: int | None = None
    hi: int | None = None
    pow2: bool = False


KNOBS: dict[str, Knob] = {
    "paged_attention.v1_threshold": Knob("int", "decode uses v1 when num_seqs × num_heads exceeds this", 1, 1 << 16),
    "paged_attention.v1_max_seq_len": Knob("int", "decode uses v1 only up to this context length", 512, 1 << 20),
    "prefix_prefill.block": Knob("int", "Triton tile (BLOCK_M = BLOCK_N) of the prefix-prefill kernel", 16, 256, True),
    "prefix_prefill.num_warps": Knob("int", "warps per program of the prefix-prefill kernel", 1, 32, True),
    "prefix_prefill.head_dim": Knob("int", "the model's attention head size (sizes the tile's shared memory)", 16, 1024),
    "moe.default_config": Knob("bool", "replace vLLM's fallback MoE tile with the derived table"),
    "sampler.top_k_top_p": Knob("str", "import path `pkg.mod:callable` replacing `_apply_top_k_top_p`"),
    "ops": Knob("names", "vLLM ops served by muh's kernels"),
    "ops_module": Knob("str", "module providing muh's op implementations"),
}

# Module-level names the plugin can rebind in vLLM 0.6.3 (all are looked up at call time).
REBIND_TARGETS: dict[str, tuple[str, str]] = {
    "rms_norm": ("vllm._custom_ops", "rms_norm"),
    "fused_add_rms_norm": ("vllm._custom_ops", "fused_add_rms_norm"),
    "silu_and_mul": ("vllm._custom_ops", "silu_and_mul"),
    "gelu_and_mul": ("vllm._custom_ops", "gelu_and_mul"),
    "gelu_tanh_and_mul": ("vllm._custom_ops", "gelu_tanh_and_mul"),
    "rotary_embedding": ("vllm._custom_ops", "rotary_embedding"),
    "moe_align_block_size": ("vllm._custom_ops", "moe_align_block_size"),
    "topk_softmax": ("vllm._custom_ops", "topk_softmax"),
    "top_k_top_p": ("vllm.model_executor.layers.sampler", "_apply_top_k_top_p"),
    "moe_default_config": ("vllm.model_executor.layers.fused_moe.fused_moe", "get_default_config"),
    **{name: (module, attr) for name, (module, attr, _params, _where) in VLLM_METHODS.items()},  # GemmaRMSNorm.forward_cuda
}
DEFAULT_OPS_MODULE = PROVIDER_MODULE  # `muh_kernels.vllm_ops`: the ops package the image ships (codegen/ops_package)


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
    return Resolved(value=value, origin="derived", rule="pow2_nearest(stock_threshold × sm_count / stock_sm_count)",
                    inputs={"stock_threshold": STOCK_V1_THRESHOLD, "sm_count": hw.sm_count, "stock_sm_count": STOCK_SM_COUNT})


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
    return Resolved(value=block, origin="derived",
                    rule="largest power of two B ≤ 128 with (B + 2·B) × head_dim × elem_bytes < Triton's shared memory",
                    inputs={"head_dim": head_dim, "elem_bytes": elem_bytes, "smem_bytes": smem})


def prefill_num_warps(hw: Hardware) -> Resolved:
    value = max(1, STOCK_PREFILL_THREADS // hw.warp_size)
    return Resolved(value=value, origin="derived", rule="stock threads per program (8 warps × 32) / warp_size",
                    inputs={"stock_threads": STOCK_PREFILL_THREADS, "warp_size": hw.warp_size})


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
    return {"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": group,
            "num_warps": warps, "num_stages": stages}


# vLLM's MoE config file name (fused_moe.get_config_file_name): the runtime's device name, spaces → "_".
MOE_FILE_PATTERN = "E={E},N={N},device_name={device}{dtype}.json"


def moe_config_file_name(experts: int, n: int, device: str, dtype: str | None = None) -> str:
    return MOE_FILE_PATTERN.format(E=experts, N=n, device=device.replace(" ", "_"), dtype=f",dtype={dtype}" if dtype else "")


MOE_TILE_RULE = ("vLLM get_default_config shapes (16/32/64/1 when M ≤ E, else 64/64/32/8); num_warps = 128 / warp_size; "
                 "num_stages = min(3, Triton's shared memory / ((BM·BK + BK·BN) × elem_bytes))")

# The batch sizes vLLM's own MoE tuner measures (benchmarks/kernels/benchmark_moe.py, 0.6.3).
TUNER_GRID = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096)


def moe_batch_sizes(max_num_seqs: int, max_tokens: int) -> list[int]:
    """Every decode batch 1..max_num_seqs exactly, the tuner's grid up to ``max_tokens``, and ``max_tokens``."""
    keys = set(range(1, max_num_seqs + 1)) | {m for m in TUNER_GRID if m <= max_tokens} | {max_tokens}
    return sorted(keys)



# -- tuning points: the code path each reaches, and whether a spec reaches it ------------------------

@dataclass(frozen=True)
class PointDef:
    id: str
    reaches: str
    mechanism: str  # edit | file | rebind | provide


POINTS: dict[str, PointDef] = {p.id: p for p in (
    PointDef("paged_attention.v1_v2_rule", "vllm/attention/ops/paged_attn.py PagedAttention.forward_decode: "
             "use_v1 = max_seq_len <= 8192 and (partitions == 1 or num_seqs * num_heads > 512)", "edit"),
    PointDef("prefix_prefill.tile", "vllm/attention/ops/prefix_prefill.py context_attention_fwd: BLOCK, NUM_WARPS "
             "(prefix-cached / chunked prefill through the Triton kernel)", "edit"),
    PointDef("moe.tiles", "vllm/model_executor/layers/fused_moe/fused_moe.py try_get_optimal_moe_config: "
             "configs/E=…,N=…,device_name=….json, else get_default_config (Triton fused_moe)", "file"),
    PointDef("ops.rms_norm", "vllm/model_executor/layers/layernorm.py RMSNorm.forward_cuda -> _custom_ops.rms_norm", "rebind"),
    PointDef("ops.fused_add_rms_norm", "layernorm.py RMSNorm.forward_cuda(x, residual) -> _custom_ops.fused_add_rms_norm", "rebind"),
    PointDef("ops.silu_and_mul", "vllm/model_executor/layers/activation.py SiluAndMul.forward_cuda -> _custom_ops.silu_and_mul",
             "rebind"),
    PointDef("ops.topk_softmax", "fused_moe.py fused_topk -> _custom_ops.topk_softmax (MoE routing)", "rebind"),
    PointDef("vendor.moe_topk_softmax", "the variant's _custom_ops.topk_softmax -> <vendor>.vllm_moe_topk_softmax, "
             "looked up by the fork's MoE layer (absent: PyTorch routing fallback)", "provide"),
    PointDef("ops.gemma_rms_norm", "layernorm.py GemmaRMSNorm.forward_cuda: rms_norm(x)·(1+w), never _custom_ops.rms_norm",
             "rebind"),
    PointDef("ops.head_rms_norm", "attention q/k norm over head_dim: GemmaRMSNorm.forward_cuda on [tokens, heads, head_dim] "
             "(Qwen3-Next layout)", "rebind"),
    PointDef("sampler.top_k_top_p", "vllm/model_executor/layers/sampler.py _apply_top_k_top_p (requests with top_k/top_p)",
             "rebind"),
)}
