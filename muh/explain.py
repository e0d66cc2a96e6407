"""`muh explain`: a resolved value and how it came to be."""
from __future__ import annotations

from muh.derive.model import Derived, Resolved
from muh.diagnostics import Diagnostic, MuhError, did_you_mean


def _fmt_value(r: Resolved) -> str:
    v = r.value
    if hasattr(v, "kind"):
        return f"{v.kind}(ns = {v.ns} ns, l2_write_latency = {v.l2_write_latency} ns)"
    return str(v).lower() if isinstance(v, bool) else str(v)


def _origin(r: Resolved) -> str:
    text = r.origin
    if r.measured is not None:
        m = r.measured
        text += (", kept" if m.kept else "") + f" on {m.device} {m.date}"
        if m.variant:
            text += f" [{'best challenger ' if m.kept else ''}{m.variant} score {m.score}]"
        if r.stale:
            text += " — STALE: the hardware or toolchain changed since it was measured"
    return text


def rests_on(spec, hw, inputs: dict) -> str | None:
    """``rests on measured: warp_size (NVIDIA H200 2026-12-01), …`` when hardware inputs were measured."""
    if spec is None or not inputs:
        return None
    from muh.derive.resolve import measured_inputs

    got = measured_inputs(spec, hw, inputs)
    if not got:
        return None
    return "rests on measured: " + ", ".join(f"{f} ({m.device} {m.date})" for f, m in sorted(got.items()))


def explain(derived: Derived, what: str, spec=None) -> list[str]:
    head, *rest = what.split(".")
    if head == "deploy" and spec is not None:
        from muh.codegen.vllm.explain import explain as explain_deploy

        return explain_deploy(spec, what)
    algs = {k: a for k, a in derived.algorithms.items() if k == head or a.family == head}
    if not algs:
        names = sorted({a.family for a in derived.algorithms.values()} | set(derived.algorithms))
        raise MuhError([Diagnostic("E-EXPLAIN", f"no algorithm `{head}` in this spec", None,
                                   hint=did_you_mean(head, names) or f"algorithms: {', '.join(names)}")])
    lines: list[str] = []
    for key, alg in sorted(algs.items()):
        lines.append(f"{key} (hardware {alg.hardware.name}: warp {alg.hardware.warp_size}, smem/block {alg.hardware.smem_per_block} B)")
        pols = alg.policies
        dims_filter = None
        if rest:
            cand = ".".join(rest)
            if cand in pols:
                pols = {cand: pols[cand]}
            elif ".".join(rest[:-1]) in pols:
                pols, dims_filter = {".".join(rest[:-1]): pols[".".join(rest[:-1])]}, rest[-1]
            elif len(rest) == 1:
                dims_filter = rest[0]
            else:
                raise MuhError([Diagnostic("E-EXPLAIN", f"no policy `{'.'.join(rest)}` in {key}", None,
                                           hint=did_you_mean(".".join(rest), pols) or f"policies: {', '.join(pols)}")])
        for pkey, pol in pols.items():
            lines.append(f"  {pkey} ({pol.elem_size} B per item" + (f", tile {pol.smem_bytes} B of shared memory)" if pol.smem_bytes else ")"))
            found = False
            for dim, r in pol.values.items():
                if dims_filter and dim != dims_filter:
                    continue
                found = True
                lines.append(f"    {dim} = {_fmt_value(r)}    [{_origin(r)}]")
                lines.append(f"        rule: {r.rule}")
                if r.inputs:
                    lines.append("        inputs: " + ", ".join(f"{k}={v}" for k, v in r.inputs.items()))
                    rests = rests_on(spec, alg.hardware, r.inputs)
                    if rests:
                        lines.append(f"        {rests}")
                if r.where:
                    lines.append(f"        from: {r.where}")
            if dims_filter and not found:
                raise MuhError([Diagnostic("E-EXPLAIN", f"`{dims_filter}` is not set for {key} {pkey}", None,
                                           hint=did_you_mean(dims_filter, pol.values) or f"set: {', '.join(pol.values)}")])
    return lines
