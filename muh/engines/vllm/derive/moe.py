"""The ``moe`` block: vLLM's fused-MoE config file (its name and one tile per decode batch size), each
number with its rule."""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.engines.vllm.derive import rules
from muh.engines.vllm.derive.context import Context, stable_where, value_problem
from muh.engines.vllm.derive.effective import Effective
from muh.engines.vllm.derive.flags import Setting
from muh.engines.vllm.derive.plan import MoePlan, MoeTile
from muh.schema.models import Hardware


def moe_plan(c: Context, hw: Hardware, given: dict[str, Setting], eff: Effective) -> MoePlan | None:
    moe = c.d.moe
    if moe is None:
        return None
    span = lambda *k: c.span("moe", *k)  # noqa: E731
    experts, inter = moe.experts, moe.intermediate_size
    tp = eff.tensor_parallel_size
    if inter % tp:
        c.error(
            "E-DEPLOY-MOE",
            f"moe.intermediate_size = {inter} is not divisible by tensor_parallel_size = {tp}",
            span("intermediate_size"),
        )
        return None
    device = moe.device_name or hw.device_name
    bad = [ch for ch in "/," if isinstance(device, str) and ch in device]
    if device and isinstance(device, str) and (bad or value_problem(device)):
        where = span("device_name") if moe.device_name else c.spec.span_of(("hardware", hw.name, "device_name"))
        why = f"it contains `{bad[0]}`" if bad else value_problem(device)
        c.error(
            "E-DEPLOY-MOE",
            f"device_name {device!r} cannot be part of vLLM's MoE config file name (E=…,N=…,device_name=….json): {why}",
            where,
            hint="use the name the runtime reports; `/` and `,` cannot appear in that file name",
        )
        return None
    if not device or not isinstance(device, str):
        c.error(
            "E-DEPLOY-MOE",
            "the MoE config file needs the device name the runtime reports",
            span("device_name") or c.span("moe"),
            hint=f'set `device_name = "…"` in `hardware {hw.name}` or in the moe block',
        )
        return None
    dtype = moe.dtype
    max_seqs, max_model_len = eff.max_num_seqs, eff.max_model_len
    max_tokens = min(eff.max_num_batched_tokens or max_model_len or 8192, 32768)
    elem = 1 if dtype else 2
    batch_sizes = moe.batch_sizes
    if batch_sizes is not None:
        missing = [m for m in range(1, max_seqs + 1) if m not in batch_sizes]
        if missing:
            c.error(
                "E-DEPLOY-MOE",
                f"moe.batch_sizes misses decode batch size {missing[0]} (max_num_seqs = {max_seqs})",
                span("batch_sizes"),
                hint="list every batch size up to max_num_seqs, or omit batch_sizes to derive them",
            )
            return None
        keys = sorted(set(batch_sizes))
    else:
        keys = rules.moe_batch_sizes(max_seqs, max_tokens)
    n = inter // tp
    tiles = {m: MoeTile(**rules.moe_tile(m, experts, hw, elem)) for m in keys}
    name = rules.moe_config_file_name(experts, n, device, dtype)
    plan = MoePlan(
        file_name=name,
        experts=c.from_spec(experts, "moe", "experts"),
        n=Resolved(
            value=n,
            origin="derived",
            rule="intermediate_size / tensor_parallel_size",
            inputs={"intermediate_size": inter, "tensor_parallel_size": tp},
        ),
        device_name=Resolved(
            value=device,
            origin="spec",
            rule="spec",
            where=c.where("moe", "device_name") or stable_where(c.spec.span_of(("hardware", hw.name, "device_name"))),
        ),
        tiles=tiles,
        rule=Resolved(
            value="moe_tile",
            origin="derived",
            rule=rules.MOE_TILE_RULE,
            inputs={
                "experts": experts,
                "warp_size": hw.warp_size,
                "smem_bytes": rules.triton_smem(hw),
                "elem_bytes": elem,
                "max_num_seqs": max_seqs,
                "max_batch_tokens": max_tokens,
            },
        ),
    )
    return plan


def moe_tuned(plan: MoePlan, hw: Hardware) -> dict[str, Resolved]:
    """The MoE plan's values as ``muh explain`` shows them (``moe.file``, ``moe.tiles.<M>.<key>``): read from the
    plan, added to the deploy plan's ``tuned`` only when the MoE point ships."""
    experts, elem, smem = plan.experts.value, plan.rule.inputs["elem_bytes"], rules.triton_smem(hw)
    out = {
        "moe.file": Resolved(
            value=plan.file_name,
            origin="derived",
            rule="E={E},N={N},device_name={name}[,dtype=…].json",
            inputs={"E": experts, "N": plan.n.value, "device_name": plan.device_name.value},
        )
    }
    for m, t in plan.tiles.items():
        shape = "vLLM's fallback shape for M ≤ E" if m <= experts else "vLLM's fallback shape for M > E"
        why = {
            "num_warps": ("Triton's default 128 threads / warp_size", {"warp_size": hw.warp_size}),
            "num_stages": ("min(3, smem / ((BM·BK + BK·BN) × elem_bytes))", {"smem_bytes": smem, "elem_bytes": elem}),
        }
        for k, v in t.model_dump().items():
            rule, inputs = why.get(k, (shape, {"E": experts}))
            out[f"moe.tiles.{m:05d}.{k}"] = Resolved(value=v, origin="derived", rule=rule, inputs={"M": m, **inputs})
    return out
