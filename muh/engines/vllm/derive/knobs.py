"""The ``tune`` block: its knobs checked against the tuning table, the anchored edits they make (each
value with its rule), the ops rebound and provided, and which of them a live tuning point keeps."""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.diagnostics import did_you_mean
from muh.engines.variant import Variant
from muh.engines.vllm.derive import rules, tuning
from muh.engines.vllm.derive.context import IMPORT_PATH_RE, MODULE_RE, Context, flatten, plain_value
from muh.engines.vllm.derive.edits import sites_for
from muh.engines.vllm.derive.engine import EngineInfo
from muh.engines.vllm.derive.flags import Setting
from muh.engines.vllm.derive.plan import Edit, MoePlan, Provide, Rebind
from muh.schema.models import Hardware

EDIT_POINT = {"paged-attn-v1-threshold": "paged_attention.v1_v2_rule", "prefix-prefill-tile": "prefix_prefill.tile"}
_REBIND_POINT = {"moe_default_config": "moe.tiles", "top_k_top_p": "sampler.top_k_top_p"}


def tune_knobs(c: Context) -> dict[str, object]:
    out: dict[str, object] = {}
    for path, value in flatten(c.d.tune):
        key = ".".join(path)
        span = c.span("tune", *path)
        if key in tuning.REFUSED:
            c.error(
                "E-VLLM-KNOB",
                f"`{key}` cannot be tuned: {tuning.REFUSED[key]}",
                c.key_span("tune", *path),
                hint="remove it; muh tunes the safe points (see docs/deploy.md)",
            )
            continue
        knob = tuning.KNOBS.get(key)
        if knob is None:
            c.error(
                "E-VLLM-KNOB",
                f"unknown vLLM tuning point `{key}`",
                c.key_span("tune", *path),
                hint=did_you_mean(key, list(tuning.KNOBS) + list(tuning.REFUSED))
                or f"known: {', '.join(tuning.KNOBS)}",
            )
            continue
        v = plain_value(value)
        if v == "auto" and knob.kind == "int":
            continue
        if knob.kind == "int":
            if (
                not isinstance(v, int)
                or isinstance(v, bool)
                or not (knob.lo <= v <= knob.hi)
                or (knob.pow2 and v & (v - 1))
            ):
                c.error(
                    "E-VLLM-KNOB",
                    f"`{key}` takes {'a power of two' if knob.pow2 else 'an integer'} in "
                    f"{knob.lo}..{knob.hi} or `auto`, not `{value}`",
                    span,
                )
                continue
        elif knob.kind == "bool" and not isinstance(v, bool):
            c.error("E-VLLM-KNOB", f"`{key}` takes true or false", span)
            continue
        elif knob.kind == "str" and not isinstance(v, str):
            c.error("E-VLLM-KNOB", f"`{key}` takes a string", span)
            continue
        elif knob.kind == "names":
            names = v if isinstance(v, list) else [v]
            bad = [n for n in names if n not in tuning.REBIND_TARGETS or n == "moe_default_config"]
            if bad:
                c.error(
                    "E-VLLM-OP",
                    f"vLLM {c.d.engine.version} has no op `{bad[0]}` muh can serve",
                    span,
                    hint=did_you_mean(str(bad[0]), tuning.REBIND_TARGETS) or f"ops: {', '.join(tuning.REBIND_TARGETS)}",
                )
                continue
            v = list(names)
        out[key] = v
    return out


def tune_edits(
    c: Context, hw: Hardware, engine: EngineInfo, knobs: dict, given: dict[str, Setting]
) -> tuple[list[Edit], dict[str, Resolved]]:
    """The anchored edits whose values differ from the stock code's, and every value with its rule (``vllm.*``)."""
    sites = sites_for(engine.version) or ()
    path = lambda key: ("tune", *key.split("."))  # noqa: E731
    vals: dict[str, Resolved] = {}
    # decode v1/v2 rule
    vals["paged_attention.v1_threshold"] = (
        c.from_spec(knobs["paged_attention.v1_threshold"], *path("paged_attention.v1_threshold"))
        if "paged_attention.v1_threshold" in knobs
        else rules.v1_threshold(hw)
    )
    limit = rules.v1_max_seq_len_limit(hw)
    if "paged_attention.v1_max_seq_len" in knobs:
        v = knobs["paged_attention.v1_max_seq_len"]
        if v > limit:
            c.error(
                "E-VLLM-KNOB",
                f"paged_attention.v1_max_seq_len = {v} overflows shared memory on `{hw.name}` (limit {limit})",
                c.span(*path("paged_attention.v1_max_seq_len")),
                hint="v1 keeps one fp32 logit per token in shared memory: (smem_per_block − 1 KiB) / 4 B",
            )
        vals["paged_attention.v1_max_seq_len"] = c.from_spec(v, *path("paged_attention.v1_max_seq_len"))
    else:
        vals["paged_attention.v1_max_seq_len"] = Resolved(
            value=min(rules.STOCK_V1_MAX_SEQ_LEN, limit),
            origin="derived",
            rule="min(stock 8192, (smem_per_block − 1 KiB) / 4 B)",
            inputs={"stock": rules.STOCK_V1_MAX_SEQ_LEN, "smem_per_block": int(hw.smem_per_block)},
        )
    # prefix-prefill tile
    head_dim = knobs.get("prefix_prefill.head_dim", 128)
    vals["prefix_prefill.head_dim"] = (
        c.from_spec(head_dim, *path("prefix_prefill.head_dim"))
        if "prefix_prefill.head_dim" in knobs
        else Resolved(value=128, origin="default", rule="default head size (most current models)")
    )
    if "prefix_prefill.block" in knobs:
        b = knobs["prefix_prefill.block"]
        if 3 * b * head_dim * 2 >= rules.triton_smem(hw):
            c.error(
                "E-VLLM-KNOB",
                f"prefix_prefill.block = {b} needs {3 * b * head_dim * 2} B of shared memory; `{hw.name}` has "
                f"{rules.triton_smem(hw)}",
                c.span(*path("prefix_prefill.block")),
                hint=f"use `auto` ({rules.prefill_block(hw, head_dim).value} here)",
            )
        vals["prefix_prefill.block"] = c.from_spec(b, *path("prefix_prefill.block"))
    else:
        vals["prefix_prefill.block"] = rules.prefill_block(hw, head_dim)
    if "prefix_prefill.num_warps" in knobs:
        w = knobs["prefix_prefill.num_warps"]
        if w * hw.warp_size > hw.max_threads_per_block:
            c.error(
                "E-VLLM-KNOB",
                f"prefix_prefill.num_warps = {w} × warp_size {hw.warp_size} exceeds max_threads_per_block",
                c.span(*path("prefix_prefill.num_warps")),
            )
        vals["prefix_prefill.num_warps"] = c.from_spec(w, *path("prefix_prefill.num_warps"))
    else:
        vals["prefix_prefill.num_warps"] = rules.prefill_num_warps(hw)
    cc = hw.compute_capability or 0
    stock = {
        "paged-attn-v1-threshold": {
            "v1_threshold": rules.STOCK_V1_THRESHOLD,
            "v1_max_seq_len": rules.STOCK_V1_MAX_SEQ_LEN,
        },
        "prefix-prefill-tile": {"block": 128 if cc >= 80 else 64, "num_warps": 8},
    }  # what the stock code computes here
    edits = []
    for site in sites:
        values = {k: vals[k] for k in site.knobs}
        names = {k.split(".")[-1]: r.value for k, r in values.items()}
        if all(stock.get(site.id, {}).get(n) == v for n, v in names.items()):
            continue  # the stock rule already says this: no patch
        prov = "; ".join(
            _ascii(f"{k.split('.')[-1]}={r.value} {r.origin}" + (f" by {r.rule}" if r.origin == "derived" else ""))
            for k, r in values.items()
        )
        new = site.new.format(hardware=hw.name, provenance=prov, **names)
        edits.append(Edit(id=site.id, file=site.file, anchor=site.old, new=new, line=site.line, values=values))
    return edits, {f"vllm.{k}": r for k, r in vals.items()}


_ASCII = {"×": "*", "·": "*", "−": "-", "≤": "<=", "≥": ">=", "→": "->"}


def _ascii(text: str) -> str:
    """Provenance for comments inside vLLM's sources: plain ASCII, one line."""
    return "".join(_ASCII.get(ch, ch if 32 <= ord(ch) < 127 else "?") for ch in text)


def tune_rebinds(c: Context, knobs: dict, moe: MoePlan | None) -> tuple[list[Rebind], dict[str, Resolved]]:
    """The ops the plugin rebinds, and each rebind with its rule (``plugin.*``)."""
    out: list[Rebind] = []
    if moe is not None and knobs.get("moe.default_config", True):
        mod, attr = tuning.REBIND_TARGETS["moe_default_config"]
        out.append(
            Rebind(
                name="moe_default_config",
                module=mod,
                attr=attr,
                provider="muh_vllm_plugin.moe:get_default_config",
                generated=True,
            )
        )
    ops_module = knobs.get("ops_module", tuning.DEFAULT_OPS_MODULE)
    if not MODULE_RE.match(str(ops_module)):
        c.error("E-VLLM-KNOB", f"`{ops_module}` is not a module path", c.span("tune", "ops_module"))
        return out, {}
    if "sampler.top_k_top_p" in knobs:
        provider = knobs["sampler.top_k_top_p"]
        if not IMPORT_PATH_RE.match(provider):
            c.error(
                "E-VLLM-KNOB",
                f"`{provider}` is not an import path `pkg.module:callable`",
                c.span("tune", "sampler", "top_k_top_p"),
            )
        else:
            mod, attr = tuning.REBIND_TARGETS["top_k_top_p"]
            out.append(Rebind(name="top_k_top_p", module=mod, attr=attr, provider=provider))
    for op in knobs.get("ops", []):
        if any(r.name == op for r in out):
            c.error(
                "E-VLLM-OP",
                f"`{op}` is rebound twice (by `ops` and by `sampler.top_k_top_p`)",
                c.span("tune", "ops"),
                hint="keep one of them",
            )
            continue
        mod, attr = tuning.REBIND_TARGETS[op]
        out.append(Rebind(name=op, module=mod, attr=attr, provider=f"{ops_module}:{op}"))
    recorded = {
        f"plugin.{r.name}": Resolved(
            value=r.provider,
            origin="spec" if not r.generated else "derived",
            rule=f"rebind {r.module}.{r.attr}",
            where=None
            if r.generated
            else c.where("tune", *(("sampler", "top_k_top_p") if r.name == "top_k_top_p" else ("ops",))),
        )
        for r in out
    }
    return sorted(out, key=lambda r: r.name), recorded


def rebind_live(r: Rebind, live: set[str]) -> bool:
    return _REBIND_POINT.get(r.name, f"ops.{r.name}") in live or f"ops.{r.name}" in live


def tune_provides(variant: Variant, knobs: dict, live: set[str]) -> list[Provide]:
    vendor = variant.vendor_ops.get("topk_softmax")
    if "vendor.moe_topk_softmax" not in live or vendor is None or not variant.vendor_module:
        return []
    module = knobs.get("ops_module", tuning.DEFAULT_OPS_MODULE)
    from muh.runtime.llm import VLLM_SIGNATURES

    # the fork's _custom_ops.topk_softmax passes its four arguments on (the team's notes, 003:1123-1135)
    return [
        Provide(
            name="moe_topk_softmax",
            module=variant.vendor_module,
            attr=vendor.vendor,
            provider=f"{module}:topk_softmax",
            arity=len(VLLM_SIGNATURES["topk_softmax"][0]),
        )
    ]
