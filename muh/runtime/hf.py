"""A real client of ``torch.ops.muh``: a transformers Qwen3-Next / Qwen3.5-MoE / Qwen3-MoE model whose
every norm, gated norm, SiLU·mul, MoE router and shared-expert combine runs on muh's operators.

    from muh.runtime import hf, operators
    operators.load("generated/h200")              # registers torch.ops.muh.* (docs/ops.md)
    report = hf.patch_model(model)                # in place; returns what was replaced
    hf.unpatch_model(model)                       # back to the stock forwards

The model keeps its modules, parameters, ``state_dict`` keys and hooks: each module gets an
instance ``forward`` (``unpatch_model`` deletes it again). ``RULES`` is the one table of the
transformers classes served (verified against transformers 5.17's modeling files) and the op each
maps to; the semantics of every op are the classes' own (docs/ops.md), so logits agree with the
stock model to the rounding of the element type (docs/client.md).

A call the ops cannot serve — CPU tensors, a dtype other than float32 / float16 / bfloat16, a weight
of another dtype than its input, more experts than the routing kernel holds, an activation other
than SiLU — runs the stock forward of that module; ``Report.skipped`` names the modules refused at
patch time with the reason.

``fuse_residual=True`` also replaces each decoder layer's ``residual + h; post_attention_layernorm``
by ``gemma_fused_add_rms_norm`` (one launch instead of two). That operator writes the residual in
place, i.e. the tensor the layer was given: only use it when nothing else holds the layers' inputs
(no ``output_hidden_states``, no caller-owned ``inputs_embeds``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

from . import llm
from .errors import MuhRuntimeError

# transformers class -> what muh serves it with. "gemma": (1 + w) RMSNorm, float all through, one
# rounding; "rms": vLLM/Llama RMSNorm T(w · T(x · inv)); "gated": Gated-DeltaNet RMSNormGated;
# "mlp": gate_proj/up_proj/down_proj MLP (gate and up merged into one GEMM + silu_and_mul);
# "experts": 3-D expert weights [gate; up] (silu_and_mul as the gate of every experts
# implementation); "router": softmax top-k router (renormalised when `norm_topk_prob`, or always
# where the class has no such attribute); "moe_block": the sparse MoE block with a sigmoid-gated
# shared expert (shared_expert_combine); "layer": the decoder layer (fuse_residual only).
RULES = {
    "Qwen3NextRMSNorm": "gemma",
    "Qwen3_5MoeRMSNorm": "gemma",
    "Qwen3MoeRMSNorm": "rms",
    "Qwen3NextRMSNormGated": "gated",
    "Qwen3_5MoeRMSNormGated": "gated",
    "Qwen3NextMLP": "mlp",
    "Qwen3_5MoeMLP": "mlp",
    "Qwen3MoeMLP": "mlp",
    "Qwen3NextExperts": "experts",
    "Qwen3_5MoeExperts": "experts",
    "Qwen3MoeExperts": "experts",
    "Qwen3NextTopKRouter": "router",
    "Qwen3_5MoeTopKRouter": "router",
    "Qwen3MoeTopKRouter": "router",
    "Qwen3NextSparseMoeBlock": "moe_block",
    "Qwen3_5MoeSparseMoeBlock": "moe_block",
    "Qwen3NextDecoderLayer": "layer",
    "Qwen3_5MoeDecoderLayer": "layer",
}
KINDS = ("gemma", "rms", "gated", "mlp", "experts", "router", "moe_block", "layer")
_FLOATS = tuple(llm._DTYPE_CODE)  # the ops' element types (the runtime's one table of them)


@dataclass
class Report:
    """What ``patch_model`` replaced: module names per kind, and modules it left stock (with why)."""

    patched: dict = field(default_factory=lambda: {k: [] for k in KINDS})
    skipped: dict = field(default_factory=dict)  # module name -> reason

    def counts(self) -> dict:
        return {k: len(v) for k, v in self.patched.items() if v}

    def __str__(self) -> str:
        c = ", ".join(f"{k} {n}" for k, n in self.counts().items()) or "nothing"
        s = f"muh patched: {c}"
        if self.skipped:
            s += "; left stock: " + "; ".join(f"{n} ({r})" for n, r in self.skipped.items())
        return s


def _ops():
    import torch

    from . import operators

    if operators.loaded() is None:
        raise MuhRuntimeError(
            "muh hf: torch.ops.muh is not registered: call "
            "muh.runtime.operators.load(<generated dir>) before patch_model"
        )
    return torch.ops.muh


def _served(x, *weights) -> bool:
    """Whether the ops take this call: a CUDA tensor of an ops dtype, weights of the same dtype."""
    if not x.is_cuda or str(x.dtype).removeprefix("torch.") not in _FLOATS:
        return False
    return all(w.dtype == x.dtype and w.device == x.device for w in weights)


def _is_silu(act) -> bool:
    import torch

    return isinstance(act, torch.nn.SiLU) or type(act).__name__ == "SiLUActivation"


# ---- forwards (bound to the instance; `type(self).forward` is the stock one) ------------------------


def _gemma_forward(self, x):
    if not _served(x, self.weight):
        return type(self).forward(self, x)
    return self._muh_ops.gemma_rms_norm(x, self.weight, float(self.eps))


def _rms_forward(self, x):
    if not _served(x, self.weight):
        return type(self).forward(self, x)
    out = x.new_empty(x.shape)
    self._muh_ops.rms_norm(out, x, self.weight, float(self.variance_epsilon))
    return out


def _gated_forward(self, x, gate):
    if not _served(x, self.weight, gate):
        return type(self).forward(self, x, gate)
    return self._muh_ops.gated_rms_norm(x, gate, self.weight, float(self.variance_epsilon))


def _silu_and_mul(ops, gate_up):
    d = gate_up.shape[-1] // 2
    out = gate_up.new_empty(gate_up.shape[:-1] + (d,))
    ops.silu_and_mul(out, gate_up)
    return out


def _merge_gate_up(mlp):
    """One [2I, H] weight whose halves are gate_proj's and up_proj's parameters (views: no copy kept)."""
    import torch

    g, u = mlp.gate_proj.weight, mlp.up_proj.weight
    with torch.no_grad():
        w = torch.cat([g.detach(), u.detach()], 0)
    n = g.shape[0]
    mlp.gate_proj.weight = torch.nn.Parameter(w[:n], requires_grad=g.requires_grad)
    mlp.up_proj.weight = torch.nn.Parameter(w[n:], requires_grad=u.requires_grad)
    mlp._muh_gate_up = w


def _mlp_forward(self, x):
    g, u = self.gate_proj.weight, self.up_proj.weight
    if not _served(x, g, u):
        return type(self).forward(self, x)
    w = self._muh_gate_up
    if g.data_ptr() != w.data_ptr() or u.data_ptr() != w[g.shape[0] :].data_ptr() or w.dtype != g.dtype:
        _merge_gate_up(self)  # the parameters were replaced since (model.to(...), load_state_dict)
        w = self._muh_gate_up
    import torch.nn.functional as F

    return self.down_proj(_silu_and_mul(self._muh_ops, F.linear(x, w)))


def _experts_gate(self, gate_up):
    """The experts implementations' gate hook (transformers' `_apply_gate`): act(gate) * up."""
    if not _served(gate_up):
        gate, up = gate_up.chunk(2, dim=-1)
        return self.act_fn(gate) * up
    return _silu_and_mul(self._muh_ops, gate_up)


def _experts_forward(self, hidden_states, top_k_index, top_k_weights):
    impl = getattr(getattr(self, "config", None), "_experts_implementation", None)
    if impl not in (None, "eager"):  # batched_mm, grouped_mm, ...: they call self._apply_gate
        return type(self).forward(self, hidden_states, top_k_index, top_k_weights)
    import torch
    import torch.nn.functional as F

    out = torch.zeros_like(hidden_states)
    for e in top_k_index.unique().tolist():  # ascending, like the stock loop; one host sync
        if e >= self.num_experts:
            continue
        tok, slot = torch.where(top_k_index == e)
        h = F.linear(self._apply_gate(F.linear(hidden_states[tok], self.gate_up_proj[e])), self.down_proj[e])
        out.index_add_(0, tok, (h * top_k_weights[tok, slot, None]).to(out.dtype))
    return out


def _router_forward(self, hidden_states):
    import torch
    import torch.nn.functional as F

    h = hidden_states.reshape(-1, self.hidden_dim)
    logits = F.linear(h, self.weight)
    if not _served(logits) or self.num_experts > self._muh_max_experts or self.top_k > self._muh_max_k:
        return type(self).forward(self, hidden_states)
    w, ids = self._muh_ops.moe_topk_softmax(
        logits, self.top_k, bool(getattr(self, "norm_topk_prob", True)), torch.int64
    )
    return logits, w.to(logits.dtype), ids


def _moe_block_forward(self, hidden_states):
    b, s, hidden = hidden_states.shape
    x = hidden_states.view(-1, hidden)
    shared = self.shared_expert(x)
    _, weights, ids = self.gate(x)
    routed = self.experts(x, ids, weights)
    g = self.shared_expert_gate(x)
    if not _served(routed, shared, g):
        return (routed + g.sigmoid() * shared).reshape(b, s, hidden)  # the stock combine
    return self._muh_ops.shared_expert_combine(routed, shared, g).reshape(b, s, hidden)


def _layer_forward(
    self,
    hidden_states,
    position_embeddings=None,
    attention_mask=None,
    position_ids=None,
    past_key_values=None,
    **kwargs,
):
    norm = self.post_attention_layernorm
    residual = hidden_states
    h = self.input_layernorm(hidden_states)
    if self.block_type == "linear_attention":
        h = self.linear_attn(hidden_states=h, cache_params=past_key_values, attention_mask=attention_mask, **kwargs)
    else:
        h, _ = self.self_attn(
            hidden_states=h,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past_key_values,
            position_embeddings=position_embeddings,
            **kwargs,
        )
    if _served(h, norm.weight) and _served(residual) and h.shape == residual.shape:
        h = h.contiguous()
        self._muh_ops.gemma_fused_add_rms_norm(h, residual, norm.weight, float(norm.eps), 1.0)  # residual += h
    else:
        residual = residual + h
        h = norm(residual)
    h = self.mlp(h)
    if isinstance(h, tuple):
        h = h[0]
    return residual + h


_FORWARDS = {
    "gemma": _gemma_forward,
    "rms": _rms_forward,
    "gated": _gated_forward,
    "mlp": _mlp_forward,
    "experts": _experts_forward,
    "router": _router_forward,
    "moe_block": _moe_block_forward,
    "layer": _layer_forward,
}


def _refusal(kind: str, m) -> str | None:
    """Why module `m` cannot be served as `kind` (attributes the forwards rely on), or None."""
    need = {
        "gemma": ("weight", "eps"),
        "rms": ("weight", "variance_epsilon"),
        "gated": ("weight", "variance_epsilon"),
        "mlp": ("gate_proj", "up_proj", "down_proj", "act_fn"),
        "experts": ("gate_up_proj", "down_proj", "num_experts", "act_fn"),
        "router": ("weight", "top_k", "num_experts", "hidden_dim"),
        "moe_block": ("gate", "experts", "shared_expert", "shared_expert_gate"),
        "layer": ("input_layernorm", "post_attention_layernorm", "mlp", "block_type"),
    }[kind]
    missing = [a for a in need if not hasattr(m, a)]
    if missing:
        return f"no attribute {', '.join(missing)} (transformers changed the class?)"
    if kind == "gated" and getattr(m, "activation", "silu") != "silu":
        return f"activation {m.activation!r}, the op is SiLU-gated"
    if kind in ("mlp", "experts") and not _is_silu(m.act_fn):
        return f"activation {type(m.act_fn).__name__}, silu_and_mul is SiLU"
    if kind == "mlp" and (m.gate_proj.bias is not None or m.up_proj.bias is not None):
        return "gate/up projections with bias"
    if kind == "experts" and (
        getattr(m, "has_bias", False)
        or getattr(m, "is_transposed", False)
        or not getattr(m, "is_concatenated", True)
        or not getattr(m, "has_gate", True)
    ):
        return "expert weights not in the [gate; up] layout without bias"
    if kind == "layer" and RULES.get(type(m.post_attention_layernorm).__name__) != "gemma":
        return "its post-attention norm is not a GemmaRMSNorm"
    return None


def patch_model(model, *, fuse_residual: bool = False) -> Report:
    """Serve every norm / gated norm / SiLU·mul / router / shared-expert combine of ``model`` (a
    transformers Qwen3-Next, Qwen3.5-MoE or Qwen3-MoE model, any head) with ``torch.ops.muh``; in
    place, idempotent. ``fuse_residual``: also fuse each decoder layer's residual add into its
    post-attention norm (writes the layer's input in place; see the module docstring)."""
    ops = _ops()
    lib = llm.library()
    report = Report()
    for name, m in model.named_modules():
        kind = RULES.get(type(m).__name__)
        if kind is None or (kind == "layer" and not fuse_residual):
            continue
        why = _refusal(kind, m)
        if why:
            report.skipped[name or type(m).__name__] = why
            continue
        m._muh_ops = ops
        if kind == "mlp":
            _merge_gate_up(m)
        if kind == "experts":
            m._apply_gate = types.MethodType(_experts_gate, m)
        if kind == "router":
            m._muh_max_experts, m._muh_max_k = lib.max_experts, lib.warp
        m.forward = types.MethodType(_FORWARDS[kind], m)
        m._muh_kind = kind
        report.patched[kind].append(name)
    return report


def unpatch_model(model) -> int:
    """Give every module ``patch_model`` touched its stock forward back; returns how many. The merged
    gate/up weight stays (the parameters are views of it: same values, same ``state_dict``)."""
    n = 0
    for m in model.modules():
        if getattr(m, "_muh_kind", None) is None:
            continue
        for attr in ("forward", "_apply_gate", "_muh_kind", "_muh_ops", "_muh_max_experts", "_muh_max_k"):
            m.__dict__.pop(attr, None)
        n += 1
    return n
