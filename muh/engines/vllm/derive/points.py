"""The tuning points of a deploy: each reached, dead (with the reason and numbers), inactive or off, for
this model, variant and flags."""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.engines.variant import Variant
from muh.engines.vllm.derive import rules, tuning
from muh.engines.vllm.derive.context import Context
from muh.engines.vllm.derive.effective import Effective
from muh.engines.vllm.derive.flags import Setting
from muh.engines.vllm.derive.plan import Point
from muh.schema.models import Hardware

_PATH_OF = {
    "ops.silu_and_mul": "activation",
    "ops.topk_softmax": "moe_routing",
    "vendor.moe_topk_softmax": "moe_routing",
}


class Points:
    """The points found so far, and what each step asks about the model's paths in this variant."""

    def __init__(self, variant: Variant, shape, ops: set[str]):
        self.variant, self.shape, self.ops = variant, shape, ops
        self.paths = variant.models.get(shape.architecture) if shape else None
        self.out: list[Point] = []

    def add(self, pid: str, status: str, reason: str) -> None:
        d = tuning.POINTS[pid]
        live = status not in ("dead", "off")
        confirm = self.paths.confirm.get(pid) if self.paths is not None and live else None
        if confirm is not None:
            reason += f"; the image build reports whether {confirm[0].rsplit('/', 1)[-1]} names `{confirm[1]}`"
        self.out.append(
            Point(
                id=pid,
                reaches=d.reaches,
                status=status,
                reason=reason,
                mechanism=d.mechanism if live else "none",
                confirm=confirm,
            )
        )

    def rewritten(self, file: str) -> str | None:
        what = self.variant.rewritten_files.get(file)
        return f"{self.variant.label} rewrote {file} ({what})" if what else None

    def op(self, pid: str, op: str, dead: list[str]) -> None:
        """An op's point: off (not in tune.ops), dead (why), inactive (muh lacks the op) or reached."""
        from muh.runtime import llm

        if op not in self.ops:
            self.add(pid, "off", f"`{op}` not in tune.ops")
        elif dead:
            self.add(pid, "dead", "; ".join(dead))
        elif op not in llm.SERVED:
            self.add(
                pid,
                "inactive",
                f"muh has no `{op}` op yet: shipped behind its guard, the plugin logs the fallback "
                "until muh_kernels exports it",
            )
        else:
            paths = self.paths
            self.add(
                pid,
                "reached",
                (
                    f"{self.shape.architecture}'s {_PATH_OF[pid]}: {getattr(paths, _PATH_OF[pid])}"
                    if paths is not None and pid in _PATH_OF
                    else tuning.POINTS[pid].reaches
                ),
            )


def tuning_points(
    c: Context, hw: Hardware, variant: Variant, knobs: dict, given: dict[str, Setting], triton, eff: Effective
) -> list[Point]:
    """Each tuning point: reached, dead (with the reason and numbers) or off, for this model + variant + flags."""
    p = Points(variant, c.d.model_shape, set(knobs.get("ops", [])))
    warn_unknown_model(c, p)
    decode_rule(p, hw, knobs, eff)
    prefix_prefill(p, eff, triton)
    moe_tiles(p, c, triton)
    norm_ops(p)
    routing_ops(p)
    gemma_ops(p)
    head_norm(p)
    p.add(
        "sampler.top_k_top_p",
        "reached" if "sampler.top_k_top_p" in knobs else "off",
        "requests with top_k/top_p" if "sampler.top_k_top_p" in knobs else "no provider given",
    )
    return p.out


def points_tuned(points: list[Point], variant: Variant) -> dict[str, Resolved]:
    """Each point's status as ``muh explain`` shows it (``points.<id>``)."""
    return {
        f"points.{pt.id}": Resolved(
            value=pt.status, origin="derived", rule=pt.reason, inputs={"variant": variant.label, "reaches": pt.reaches}
        )
        for pt in points
    }


def warn_unknown_model(c: Context, p: Points) -> None:
    if p.shape is not None and p.paths is None and p.variant.models:
        c.warn(
            "W-DEPLOY-MODEL",
            f"{p.variant.label} has no record of the paths `{p.shape.architecture}` runs; every tuning "
            "point counts as reached",
            c.span("model_shape", "architecture"),
            hint=f"known: {', '.join(sorted(p.variant.models))}",
        )


def decode_rule(p: Points, hw: Hardware, knobs: dict, eff: Effective) -> None:
    """The decode v1/v2 rule: dead where the variant, the model or the numbers leave no choice to tune."""
    shape, paths, variant = p.shape, p.paths, p.variant
    tp, seqs = eff.tensor_parallel_size, eff.max_num_seqs
    heads = (
        shape.num_attention_heads // tp
        if shape and shape.num_attention_heads and shape.num_attention_heads >= tp
        else None
    )
    why = []
    if variant.paged_attention_v2 is False:
        why.append(f"v2 not implemented in {variant.label}")
    if p.rewritten("vllm/attention/ops/paged_attn.py"):
        why.append(p.rewritten("vllm/attention/ops/paged_attn.py"))
    if paths and "paged_attn" not in paths.decode_attention:
        why.append(f"{shape.architecture} decodes through {paths.decode_attention}")
    if heads is not None:
        thr = rules.v1_threshold(hw).value
        if isinstance(knobs.get("paged_attention.v1_threshold"), int):
            thr = knobs["paged_attention.v1_threshold"]
        if seqs * heads <= min(thr, rules.STOCK_V1_THRESHOLD):
            why.append(
                f"max_num_seqs × heads per shard = {seqs} × {heads} = {seqs * heads} ≤ "
                f"{min(thr, rules.STOCK_V1_THRESHOLD)}"
                f": the tuned ({thr}) and stock ({rules.STOCK_V1_THRESHOLD}) rules pick the same kernel"
            )
    p.add("paged_attention.v1_v2_rule", "dead" if why else "reached", "; ".join(why) or "decode through PagedAttention")


def prefix_prefill(p: Points, eff: Effective, triton) -> None:
    """The prefix-prefill tile: reached by prefix caching / chunked prefill through the Triton kernel."""
    why = []
    if not eff.prefix_prefill:
        why.append("neither prefix caching nor chunked prefill is on")
    if triton is False:
        why.append("no Triton in the image")
    if p.paths and "prefix_prefill" not in p.paths.prefill_attention:
        why.append(f"{p.shape.architecture} prefills through {p.paths.prefill_attention}: prefix_prefill is bypassed")
    p.add(
        "prefix_prefill.tile",
        "dead" if why else "reached",
        "; ".join(why)
        or "prefix-cached / chunked prefill through the Triton kernel"
        + ("; Triton unknown: the edit is an optional image step" if triton == "unknown" else ""),
    )


def moe_tiles(p: Points, c: Context, triton) -> None:
    """The MoE tile file: read by Triton's fused_moe, where the model's MoE runs through it."""
    why = []
    if c.d.moe is None:
        why.append("no moe block")
    if triton is False:
        why.append("no Triton in the image")
    if p.paths and "fused_moe" not in p.paths.moe:
        why.append(f"{p.shape.architecture}'s MoE runs through {p.paths.moe}: the Triton MoE JSON is never read")
    p.add("moe.tiles", "dead" if why else "reached", "; ".join(why) or "Triton fused_moe reads the config file")


def _gemma(p: Points) -> bool:
    return p.paths is not None and p.paths.norm == "gemma"


def norm_ops(p: Points) -> None:
    """rms_norm and fused_add_rms_norm: dead under GemmaRMSNorm, or where the variant's signature differs."""
    from muh.runtime import llm

    norm_dead = (
        [f"{p.shape.architecture}'s norms are GemmaRMSNorm: rms_norm(x)·(1+w), never calling ops.rms_norm"]
        if _gemma(p)
        else []
    )
    p.op("ops.rms_norm", "rms_norm", norm_dead)
    sig = p.variant.op_signatures.get("fused_add_rms_norm")
    dead = list(norm_dead)
    if sig and tuple(sig) not in llm.forms("fused_add_rms_norm"):
        dead.append(
            f"{p.variant.label}'s fused_add_rms_norm takes ({', '.join(sig)}), a form muh's op does not serve; "
            "the signature guard keeps the vendor op"
        )
    p.op("ops.fused_add_rms_norm", "fused_add_rms_norm", dead)


def routing_ops(p: Points) -> None:
    """silu_and_mul, topk_softmax, and the vendor's MoE routing op where the variant delegates to one."""
    p.op("ops.silu_and_mul", "silu_and_mul", [])
    p.op("ops.topk_softmax", "topk_softmax", [])
    vendor = p.variant.vendor_ops.get("topk_softmax")
    if vendor is None:
        p.add("vendor.moe_topk_softmax", "off", f"{p.variant.label} routes through stock vLLM's own topk_softmax")
    else:
        p.op(
            "vendor.moe_topk_softmax",
            "topk_softmax",
            [f"{p.variant.vendor_module}.{vendor.vendor} is present"] if vendor.present is True else [],
        )


def gemma_ops(p: Points) -> None:
    """GemmaRMSNorm's rebind: reached where the model's norms are GemmaRMSNorm."""
    from muh.runtime import llm

    if _gemma(p) and "gemma_rms_norm" in p.ops and "gemma_rms_norm" in llm.SERVED:
        p.add(
            "ops.gemma_rms_norm",
            "reached",
            f"{p.shape.architecture}'s norms are GemmaRMSNorm ({p.paths.source}): the "
            "plugin rebinds GemmaRMSNorm.forward_cuda to muh's gemma ops, signature-guarded, stock per refused input",
        )
    else:
        p.op(
            "ops.gemma_rms_norm",
            "gemma_rms_norm",
            [] if _gemma(p) or p.paths is None else ["the model's norms are not GemmaRMSNorm"],
        )


def head_norm(p: Points) -> None:
    """q/k norm: a GemmaRMSNorm over head_dim is served by the same rebind (3-D input: the op's (tokens, heads)
    rows)."""
    from muh.runtime import llm

    shape, paths = p.shape, p.paths
    if paths is not None and paths.head_norm is not None and paths.head_norm != "gemma":
        p.add(
            "ops.head_rms_norm",
            "dead",
            f"{shape.architecture}'s q/k norm is {paths.head_norm} inside the fork's model code; "
            "no module-level name to rebind is known",
        )
    elif paths is not None and paths.head_norm == "gemma":
        hd = f"head_dim {shape.head_dim}" if shape.head_dim else "head_dim"
        if "gemma_rms_norm" not in p.ops:
            p.add(
                "ops.head_rms_norm",
                "off",
                f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd}: served by the "
                "gemma_rms_norm rebind, which is not in tune.ops",
            )
        else:
            p.add(
                "ops.head_rms_norm",
                "reached" if "gemma_rms_norm" in llm.SERVED else "inactive",
                f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd} on [tokens, heads, "
                f"{shape.head_dim or 'head_dim'}]: the ops.gemma_rms_norm rebind serves it (a 3-D input goes to "
                f"muh's gemma_rms_norm as (tokens, heads) rows, strided views without a copy); {paths.head_norm_note}",
            )
    else:
        p.op("ops.head_rms_norm", "gemma_rms_norm", [])
