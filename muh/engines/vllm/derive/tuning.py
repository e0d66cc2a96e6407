"""``tune { … }`` knobs: which exist, which are refused and why; the names the plugin can rebind; the
tuning points and the code path each reaches.

Table-driven: a knob is accepted (with a type), or refused with the reason a user needs (unsafe,
dead, wrong platform). The rules that derive the numbers live in ``muh.engines.vllm.derive``.
"""

from __future__ import annotations

from dataclasses import dataclass

from muh.runtime.llm import VLLM_METHODS
from muh.runtime.package import PROVIDER_MODULE

REFUSED = {
    "paged_attention.partition_size": (
        "unsafe: `_PARTITION_SIZE` must equal the partition size compiled into the C++ v2 kernel; Python "
        "only sizes buffers with it (larger → out-of-bounds writes, smaller → no effect)"
    ),
    "max_shared_memory": (
        "dead knob: `get_max_shared_memory_bytes` is not called anywhere in vLLM 0.6.3 serving; a patch "
        "of it changes nothing (the tiles that depend on shared memory are derived from the hardware block)"
    ),
    "get_max_shared_memory_bytes": (
        "dead knob: nothing in vLLM 0.6.3 serving calls it; tiles are derived from `smem_per_block` instead"
    ),
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
    "prefix_prefill.head_dim": Knob(
        "int", "the model's attention head size (sizes the tile's shared memory)", 16, 1024
    ),
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
    **{
        name: (module, attr) for name, (module, attr, _params, _where) in VLLM_METHODS.items()
    },  # GemmaRMSNorm.forward_cuda
}
PROBE_MARKERS = (  # what the engine probe looks for in every vLLM (site-packages paths); a variant adds its own
    {"path": "vllm/_custom_ops.py", "what": "the ops muh's plugin may rebind"},
    {"path": "vllm/attention/ops/paged_attn.py", "what": "stock PagedAttention dispatch (a muh anchor)"},
)
DEFAULT_OPS_MODULE = PROVIDER_MODULE  # the plugin's provider in that package


# -- tuning points: the code path each reaches, and whether a spec reaches it ------------------------


@dataclass(frozen=True)
class PointDef:
    id: str
    reaches: str
    mechanism: str  # edit | file | rebind | provide


POINTS: dict[str, PointDef] = {
    p.id: p
    for p in (
        PointDef(
            "paged_attention.v1_v2_rule",
            "vllm/attention/ops/paged_attn.py PagedAttention.forward_decode: "
            "use_v1 = max_seq_len <= 8192 and (partitions == 1 or num_seqs * num_heads > 512)",
            "edit",
        ),
        PointDef(
            "prefix_prefill.tile",
            "vllm/attention/ops/prefix_prefill.py context_attention_fwd: BLOCK, NUM_WARPS "
            "(prefix-cached / chunked prefill through the Triton kernel)",
            "edit",
        ),
        PointDef(
            "moe.tiles",
            "vllm/model_executor/layers/fused_moe/fused_moe.py try_get_optimal_moe_config: "
            "configs/E=…,N=…,device_name=….json, else get_default_config (Triton fused_moe)",
            "file",
        ),
        PointDef(
            "ops.rms_norm",
            "vllm/model_executor/layers/layernorm.py RMSNorm.forward_cuda -> _custom_ops.rms_norm",
            "rebind",
        ),
        PointDef(
            "ops.fused_add_rms_norm",
            "layernorm.py RMSNorm.forward_cuda(x, residual) -> _custom_ops.fused_add_rms_norm",
            "rebind",
        ),
        PointDef(
            "ops.silu_and_mul",
            "vllm/model_executor/layers/activation.py SiluAndMul.forward_cuda -> _custom_ops.silu_and_mul",
            "rebind",
        ),
        PointDef("ops.topk_softmax", "fused_moe.py fused_topk -> _custom_ops.topk_softmax (MoE routing)", "rebind"),
        PointDef(
            "vendor.moe_topk_softmax",
            "the variant's _custom_ops.topk_softmax -> <vendor>.vllm_moe_topk_softmax, "
            "looked up by the fork's MoE layer (absent: PyTorch routing fallback)",
            "provide",
        ),
        PointDef(
            "ops.gemma_rms_norm",
            "layernorm.py GemmaRMSNorm.forward_cuda: rms_norm(x)·(1+w), never _custom_ops.rms_norm",
            "rebind",
        ),
        PointDef(
            "ops.head_rms_norm",
            "attention q/k norm over head_dim: GemmaRMSNorm.forward_cuda on [tokens, heads, head_dim] "
            "(Qwen3-Next layout)",
            "rebind",
        ),
        PointDef(
            "sampler.top_k_top_p",
            "vllm/model_executor/layers/sampler.py _apply_top_k_top_p (requests with top_k/top_p)",
            "rebind",
        ),
    )
}
