"""`muh explain`: a resolved value and how it came to be."""

from __future__ import annotations

from muh.derive.model import Derived, Resolved
from muh.diagnostics import Diagnostic, MuhError, did_you_mean
from muh.schema.models import Spec


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


def explain_deploy(spec: Spec, what: str, derived: Derived | None = None) -> list[str]:
    """``what`` is ``deploy`` or ``deploy.<tuned key>`` (e.g. ``deploy.vllm.prefix_prefill.block``,
    ``deploy.serve.max_num_seqs``, ``deploy.moe.tiles``); a prefix lists every key under it. The plan is
    derive's (``derived.deploy``; without ``derived``, the spec's deploy block is derived here), whichever
    engine made it: it reads only what every engine's plan has (``muh.engines.base.Plan``)."""
    if not spec.deploys:
        raise MuhError([Diagnostic("E-EXPLAIN", "this spec has no deploy block", None)])
    from muh.derive.deploy import derive_deploy

    plan, diags = (derived.deploy, derived.deploy_diagnostics) if derived is not None else derive_deploy(spec)
    if plan is None:
        raise MuhError(diags)
    prefix = what.split(".", 1)[1] if "." in what else ""
    keys = [k for k in plan.tuned if not prefix or k == prefix or k.startswith(prefix + ".")]
    if not keys:
        raise MuhError(
            [
                Diagnostic(
                    "E-EXPLAIN",
                    f"no deploy value `{prefix}`",
                    None,
                    hint=did_you_mean(prefix, plan.tuned) or "try `muh explain SPEC deploy`",
                )
            ]
        )
    lines = [f"deploy {plan.deploy} on {plan.hardware} ({plan.engine} {plan.engine_version})"]
    for k in keys:
        r = plan.tuned[k]
        lines.append(f"  {k} = {_fmt_value(r)}    [{r.origin}{' at ' + r.where if r.where else ''}]")
        if r.origin != "spec" or r.rule != "spec":
            lines.append(f"      rule: {r.rule}")
        if r.inputs:
            lines.append("      inputs: " + ", ".join(f"{a}={b}" for a, b in sorted(r.inputs.items())))
            measured = rests_on(spec, spec.hardware[plan.hardware], r.inputs)
            if measured:
                lines.append("      " + measured)
    return lines


def explain(derived: Derived, what: str, spec=None) -> list[str]:
    head, *rest = what.split(".")
    if head == "deploy" and spec is not None:
        return explain_deploy(spec, what, derived)
    if head.partition("@")[0] == "ops":
        return explain_ops(derived, rest, what, spec)
    algs = {k: a for k, a in derived.algorithms.items() if k == head or a.family == head}
    if not algs:
        names = sorted({a.family for a in derived.algorithms.values()} | set(derived.algorithms))
        raise MuhError(
            [
                Diagnostic(
                    "E-EXPLAIN",
                    f"no algorithm `{head}` in this spec",
                    None,
                    hint=did_you_mean(head, names) or f"algorithms: {', '.join(names)}",
                )
            ]
        )
    lines: list[str] = []
    for key, alg in sorted(algs.items()):
        lines.append(
            f"{key} (hardware {alg.hardware.name}: warp {alg.hardware.warp_size}, smem/block "
            f"{alg.hardware.smem_per_block} B)"
        )
        pols, dims_filter = _select(key, alg.family, alg.policies, rest, what)
        for pkey, pol in pols.items():
            lines.append(
                f"  {pkey} ({pol.elem_size} B per item"
                + (f", tile {pol.smem_bytes} B of shared memory)" if pol.smem_bytes else ")")
            )
            if dims_filter and dims_filter not in pol.values:
                raise MuhError(
                    [
                        Diagnostic(
                            "E-EXPLAIN",
                            f"`{dims_filter}` is not set for {key} {pkey}",
                            None,
                            hint=f"set: {', '.join(pol.values)}",
                        )
                    ]
                )
            if pol.buckets:
                lines.append("    (the policy's own values; the size buckets below are what runs)")
            lines.extend(_dims(pol.values, dims_filter, spec, alg.hardware, "    "))
            for b in pol.buckets:
                tile = f", tile {b.smem_bytes} B of shared memory" if b.smem_bytes else ""
                lines.append(f"    when {b.label}  (policy {b.layer}{tile})")
                lines.extend(_dims(b.values, dims_filter, spec, alg.hardware, "      "))
    return lines


def _dims(values: dict, only: str | None, spec, hw, indent: str) -> list[str]:
    lines = []
    for dim, r in values.items():
        if only is None or dim == only:
            lines.append(f"{indent}{dim} = {_fmt_value(r)}    [{_origin(r)}]")
            lines.extend(_value_lines(r, spec, hw, indent + "    "))
    return lines


def _value_lines(r: Resolved, spec, hw, indent: str = "        ") -> list[str]:
    """The rule, inputs and source of one resolved value (indented under its `dim = value` line)."""
    lines = [f"{indent}rule: {r.rule}"]
    if r.inputs:
        lines.append(f"{indent}inputs: " + ", ".join(f"{k}={v}" for k, v in r.inputs.items()))
        rests = rests_on(spec, hw, r.inputs)
        if rests:
            lines.append(f"{indent}{rests}")
    if r.where:
        lines.append(f"{indent}from: {r.where}")
    return lines


def explain_ops(derived: Derived, rest: list[str], what: str, spec=None) -> list[str]:
    """``muh explain SPEC ops[@<hardware>][.<type>][.<value>]``: the LLM ops' launch numbers (derive's,
    muh/derive/ops.py), each with its rule and inputs."""
    from muh.derive.ops import OPS_DTYPES

    def fail(msg: str, hint: str) -> MuhError:
        return MuhError([Diagnostic("E-EXPLAIN", msg, None, hint=hint)])

    head = what.split(".")[0]
    hw_name = head.partition("@")[2] or None
    targets = {n: t for n, t in derived.ops.items() if hw_name in (None, n)}
    if not targets:
        raise fail(
            f"no hardware `{hw_name}` in this spec",
            did_you_mean(hw_name or "", derived.ops) or f"hardware: {', '.join(derived.ops) or '(none)'}",
        )
    parts = list(rest)
    dtype = parts.pop(0) if parts and parts[0] in OPS_DTYPES else None
    names = [n for n, _ in next(iter(targets.values())).policies[OPS_DTYPES[0]].values()]
    value = parts.pop(0) if parts and parts[0] in names else None
    if parts:
        choices = (list(OPS_DTYPES) if dtype is None else []) + names
        raise fail(
            f"`{what}`: `{parts[0]}` is not an ops element type or value",
            (did_you_mean(parts[0], choices) or "")
            + " write ops[@hardware][.type][.value]; choices here: "
            + ", ".join(choices),
        )
    lines: list[str] = []
    for name, t in sorted(targets.items()):
        hw = spec.hardware.get(name) if spec is not None else None
        lines.append(f"ops@{name} (warp {t.warp_size}, C++{t.cxx})")
        for d, p in t.policies.items():
            if dtype not in (None, d):
                continue
            lines.append(f"  {d} ({p.ctype})")
            for sized in p.buckets or [p]:
                indent = "    "
                if p.buckets:
                    from muh.schema.models import Bucket

                    label = Bucket(lo=sized.lo, hi=sized.hi).label.replace("elements", "rows × hidden", 1)
                    lines.append(f"    when {label}")
                    indent = "      "
                for n, r in sized.values():
                    if value in (None, n):
                        lines.append(f"{indent}{n} = {_fmt_value(r)}    [{_origin(r)}]")
                        lines.extend(_value_lines(r, spec, hw, indent + "    "))
    return lines


def _select(key: str, family: str, pols: dict, rest: list[str], what: str) -> tuple[dict, str | None]:
    """The policies and the dimension ``ALGO.<type>[.<op>][.<dimension>]`` names; each part is
    checked against its own list (an unknown type, op or dimension says which and what is valid)."""
    from muh.schema.catalog import DIMS, DTYPES, FAMILIES, OPS

    dims = list(FAMILIES[family].dims) if family in FAMILIES else list(DIMS)

    def fail(msg: str, hint: str) -> MuhError:
        return MuhError([Diagnostic("E-EXPLAIN", msg, None, hint=hint)])

    parts = list(rest)
    dtype = op = dim = None
    if parts and parts[0] in DTYPES:
        dtype = parts.pop(0)
        if parts and parts[0] in OPS:
            op = parts.pop(0)
    if parts and parts[0] in dims:
        dim = parts.pop(0)
    if parts:
        bad = parts[0]
        if dtype is None and dim is None:
            kinds, choices = f"an element type or a dimension of {family}", list(DTYPES) + dims
        elif dtype is not None and op is None and dim is None:
            kinds, choices = f"an operator or a dimension of {family}", list(OPS) + dims
        elif dim is None:
            kinds, choices = f"a dimension of {family}", dims
        else:
            raise fail(f"`{what}`: nothing may follow the dimension `{dim}`", "write ALGO[.type[.op]][.dimension]")
        raise fail(
            f"`{what}`: `{bad}` is not {kinds}",
            (did_you_mean(bad, choices) + " " if choices and did_you_mean(bad, choices) else "")
            + (
                "write ALGO[.type[.op]][.dimension]; " + f"choices here: {', '.join(choices)}"
                if choices
                else "write ALGO[.type[.op]][.dimension]"
            ),
        )
    if dtype is None:
        return pols, dim
    pkey = f"{dtype}.{op}" if op else dtype
    if pkey in pols:
        return {pkey: pols[pkey]}, dim
    if op and dtype in pols:
        raise fail(
            f"{key} has no policy of its own for `{pkey}`",
            f"`{pkey}` uses the `{dtype}` policy: `muh explain SPEC {key.split('@')[0]}.{dtype}`",
        )
    raise fail(f"{key} has no policy for `{pkey}`", f"policies: {', '.join(pols)}")
