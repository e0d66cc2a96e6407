"""`muh explain SPEC deploy[.<key>]`: a deployment value and how it came to be (for muh/explain.py)."""
from __future__ import annotations

from muh.derive.deploy import derive_deploy
from muh.derive.model import Derived
from muh.derive.resolve import measured_inputs
from muh.diagnostics import Diagnostic, MuhError, did_you_mean
from muh.schema.models import Spec


def explain(spec: Spec, what: str, derived: Derived | None = None) -> list[str]:
    """``what`` is ``deploy`` or ``deploy.<tuned key>`` (e.g. ``deploy.vllm.prefix_prefill.block``,
    ``deploy.serve.max_num_seqs``, ``deploy.moe.tiles``); a prefix lists every key under it. The plan is
    derive's (``derived.deploy``; without ``derived``, the spec's deploy block is derived here)."""
    if not spec.deploys:
        raise MuhError([Diagnostic("E-EXPLAIN", "this spec has no deploy block", None)])
    plan, diags = (derived.deploy, derived.deploy_diagnostics) if derived is not None else derive_deploy(spec)
    if plan is None:
        raise MuhError(diags)
    prefix = what.split(".", 1)[1] if "." in what else ""
    keys = [k for k in plan.tuned if not prefix or k == prefix or k.startswith(prefix + ".")]
    if not keys:
        raise MuhError([Diagnostic("E-EXPLAIN", f"no deploy value `{prefix}`", None,
                                   hint=did_you_mean(prefix, plan.tuned) or "try `muh explain SPEC deploy`")])
    lines = [f"deploy {plan.deploy} on {plan.hardware} ({plan.engine} {plan.engine_version})"]
    for k in keys:
        r = plan.tuned[k]
        value = str(r.value).lower() if isinstance(r.value, bool) else str(r.value)
        lines.append(f"  {k} = {value}    [{r.origin}{' at ' + r.where if r.where else ''}]")
        if r.origin != "spec" or r.rule != "spec":
            lines.append(f"      rule: {r.rule}")
        if r.inputs:
            lines.append("      inputs: " + ", ".join(f"{a}={b}" for a, b in sorted(r.inputs.items())))
            got = measured_inputs(spec, spec.hardware[plan.hardware], r.inputs)
            if got:
                lines.append("      rests on measured: " + ", ".join(f"{f} ({m.device} {m.date})" for f, m in sorted(got.items())))
    return lines
