"""The tuning points of a deploy: each reached, dead (with the reason and numbers), inactive or off, for
this model, variant and flags."""
from __future__ import annotations

from muh.derive.model import Resolved
from muh.engines.variant import Variant
from muh.engines.vllm.derive import rules, tuning
from muh.engines.vllm.derive.flags import Setting, truthy
from muh.engines.vllm.derive.plan import Point
from muh.schema.models import Hardware
from muh.engines.vllm.derive.context import _Ctx, _int


_PATH_OF = {"ops.silu_and_mul": "activation", "ops.topk_softmax": "moe_routing", "vendor.moe_topk_softmax": "moe_routing"}


def _points(c: _Ctx, hw: Hardware, variant: Variant, knobs: dict, given: dict[str, Setting], triton) -> list[Point]:
    """Each tuning point: reached, dead (with the reason and numbers) or off, for this model + variant + flags."""
    shape = c.d.model_shape
    paths = variant.models.get(shape.architecture) if shape else None
    if shape is not None and paths is None and variant.models:
        c.warn("W-DEPLOY-MODEL", f"{variant.label} has no record of the paths `{shape.architecture}` runs; every tuning "
               "point counts as reached", c.span("model_shape", "architecture"),
               hint=f"known: {', '.join(sorted(variant.models))}")
    tp = _int(given.get("tensor_parallel_size"), 1)
    seqs = _int(given.get("max_num_seqs"), c.engine.default("max_num_seqs"))
    heads = shape.num_attention_heads // tp if shape and shape.num_attention_heads and shape.num_attention_heads >= tp else None
    ops = set(knobs.get("ops", []))
    out: list[Point] = []

    def add(pid: str, status: str, reason: str) -> None:
        d = tuning.POINTS[pid]
        live = status not in ("dead", "off")
        confirm = paths.confirm.get(pid) if paths is not None and live else None
        if confirm is not None:
            reason += f"; the image build reports whether {confirm[0].rsplit('/', 1)[-1]} names `{confirm[1]}`"
        out.append(Point(id=pid, reaches=d.reaches, status=status, reason=reason,
                         mechanism=d.mechanism if live else "none", confirm=confirm))

    def rewritten(file: str) -> str | None:
        what = variant.rewritten_files.get(file)
        return f"{variant.label} rewrote {file} ({what})" if what else None

    # decode v1/v2 rule
    why = []
    if variant.paged_attention_v2 is False:
        why.append(f"v2 not implemented in {variant.label}")
    if rewritten("vllm/attention/ops/paged_attn.py"):
        why.append(rewritten("vllm/attention/ops/paged_attn.py"))
    if paths and "paged_attn" not in paths.decode_attention:
        why.append(f"{shape.architecture} decodes through {paths.decode_attention}")
    if heads is not None:
        thr = rules.v1_threshold(hw).value
        if isinstance(knobs.get("paged_attention.v1_threshold"), int):
            thr = knobs["paged_attention.v1_threshold"]
        if seqs * heads <= min(thr, rules.STOCK_V1_THRESHOLD):
            why.append(f"max_num_seqs × heads per shard = {seqs} × {heads} = {seqs * heads} ≤ {min(thr, rules.STOCK_V1_THRESHOLD)}"
                       f": the tuned ({thr}) and stock ({rules.STOCK_V1_THRESHOLD}) rules pick the same kernel")
    add("paged_attention.v1_v2_rule", "dead" if why else "reached", "; ".join(why) or "decode through PagedAttention")
    # prefix-prefill tile
    why = []
    uses = any(truthy(given.get(k)) for k in ("enable_prefix_caching", "enable_chunked_prefill")) \
        or _int(given.get("max_model_len"), 0) > 32768
    if not uses:
        why.append("neither prefix caching nor chunked prefill is on")
    if triton is False:
        why.append("no Triton in the image")
    if paths and "prefix_prefill" not in paths.prefill_attention:
        why.append(f"{shape.architecture} prefills through {paths.prefill_attention}: prefix_prefill is bypassed")
    add("prefix_prefill.tile", "dead" if why else "reached",
        "; ".join(why) or "prefix-cached / chunked prefill through the Triton kernel"
        + ("; Triton unknown: the edit is an optional image step" if triton == "unknown" else ""))
    # MoE tiles
    why = []
    if c.d.moe is None:
        why.append("no moe block")
    if triton is False:
        why.append("no Triton in the image")
    if paths and "fused_moe" not in paths.moe:
        why.append(f"{shape.architecture}'s MoE runs through {paths.moe}: the Triton MoE JSON is never read")
    add("moe.tiles", "dead" if why else "reached", "; ".join(why) or "Triton fused_moe reads the config file")
    # ops
    from muh.runtime import llm

    def op_point(pid: str, op: str, dead: list[str]) -> None:
        if op not in ops:
            add(pid, "off", f"`{op}` not in tune.ops")
        elif dead:
            add(pid, "dead", "; ".join(dead))
        elif op not in llm.SERVED:
            add(pid, "inactive", f"muh has no `{op}` op yet: shipped behind its guard, the plugin logs the fallback "
                "until muh_kernels exports it")
        else:
            add(pid, "reached", (f"{shape.architecture}'s {_PATH_OF[pid]}: {getattr(paths, _PATH_OF[pid])}"
                                 if paths is not None and pid in _PATH_OF else tuning.POINTS[pid].reaches))

    gemma = paths is not None and paths.norm == "gemma"
    norm_dead = [f"{shape.architecture}'s norms are GemmaRMSNorm: rms_norm(x)·(1+w), never calling ops.rms_norm"] if gemma else []
    op_point("ops.rms_norm", "rms_norm", norm_dead)
    sig = variant.op_signatures.get("fused_add_rms_norm")
    dead = list(norm_dead)
    if sig and tuple(sig) not in llm.forms("fused_add_rms_norm"):
        dead.append(f"{variant.label}'s fused_add_rms_norm takes ({', '.join(sig)}), a form muh's op does not serve; "
                    "the signature guard keeps the vendor op")
    op_point("ops.fused_add_rms_norm", "fused_add_rms_norm", dead)
    op_point("ops.silu_and_mul", "silu_and_mul", [])
    op_point("ops.topk_softmax", "topk_softmax", [])
    vendor = variant.vendor_ops.get("topk_softmax")
    if vendor is None:
        add("vendor.moe_topk_softmax", "off", f"{variant.label} routes through stock vLLM's own topk_softmax")
    else:
        op_point("vendor.moe_topk_softmax", "topk_softmax",
                 [f"{variant.vendor_module}.{vendor.vendor} is present"] if vendor.present is True else [])
    if gemma and "gemma_rms_norm" in ops and "gemma_rms_norm" in llm.SERVED:
        add("ops.gemma_rms_norm", "reached", f"{shape.architecture}'s norms are GemmaRMSNorm ({paths.source}): the "
            "plugin rebinds GemmaRMSNorm.forward_cuda to muh's gemma ops, signature-guarded, stock per refused input")
    else:
        op_point("ops.gemma_rms_norm", "gemma_rms_norm", [] if gemma or paths is None else ["the model's norms are not GemmaRMSNorm"])
    # q/k norm: a GemmaRMSNorm over head_dim is served by the same rebind (3-D input: the op's (tokens, heads) rows)
    if paths is not None and paths.head_norm is not None and paths.head_norm != "gemma":
        add("ops.head_rms_norm", "dead", f"{shape.architecture}'s q/k norm is {paths.head_norm} inside the fork's model code; "
            "no module-level name to rebind is known")
    elif paths is not None and paths.head_norm == "gemma":
        hd = f"head_dim {shape.head_dim}" if shape.head_dim else "head_dim"
        if "gemma_rms_norm" not in ops:
            add("ops.head_rms_norm", "off", f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd}: served by the "
                "gemma_rms_norm rebind, which is not in tune.ops")
        else:
            add("ops.head_rms_norm", "reached" if "gemma_rms_norm" in llm.SERVED else "inactive",
                f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd} on [tokens, heads, "
                f"{shape.head_dim or 'head_dim'}]: the ops.gemma_rms_norm rebind serves it (a 3-D input goes to "
                f"muh's gemma_rms_norm as (tokens, heads) rows, strided views without a copy); {paths.head_norm_note}")
    else:
        op_point("ops.head_rms_norm", "gemma_rms_norm", [])
    add("sampler.top_k_top_p", "reached" if "sampler.top_k_top_p" in knobs else "off",
        "requests with top_k/top_p" if "sampler.top_k_top_p" in knobs else "no provider given")
    for p in out:
        c.tuned[f"points.{p.id}"] = Resolved(value=p.status, origin="derived", rule=p.reason,
                                             inputs={"variant": variant.label, "reaches": p.reaches})
    return out
