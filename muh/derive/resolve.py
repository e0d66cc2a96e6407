"""Derive: resolve each algorithm's policies per element type, every value with its provenance.

For a policy key `dtype[.op]` the layers are `default` ⊕ `dtype` ⊕ `dtype.op` (the most specific
wins); then the family's scaling rule turns nominal 4-byte threads/items into the values a kernel
uses for that element size, with the shared-memory budget and warp size of the hardware (or CUB's
constants when the hardware asks for `cub_parity`). Tile-staging families are checked against
shared memory here, per element size.
"""

from __future__ import annotations

import hashlib
import json

from muh.derive import scaling
from muh.derive.kernels import kernel_builds
from muh.derive.model import Derived, DerivedAlgorithm, Resolved, ResolvedBucket, ResolvedPolicy
from muh.derive.ops import from_spec as derive_ops
from muh.diagnostics import Diagnostic, MuhError
from muh.families import limits
from muh.schema import policy_key
from muh.schema.catalog import DEFAULT_TYPES, DIMS, DTYPES, FAMILIES
from muh.schema.models import Algorithm, Hardware, Measured, Spec
from muh.schema.units import fmt_bytes


def hardware_fingerprint(hw: Hardware) -> str:
    """Hash of what a measurement depends on: the hardware block and its toolchain — the facts it
    sets, not the fields it leaves unset (a new optional key in the language must not mark every
    measurement stale: it did once, when `clock` was added)."""
    data = hw.model_dump(mode="json", exclude={"name"}, exclude_none=True)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


# Input names of derivation rules → the hardware facts they stand for (most specific first): a derived
# value whose inputs include a fact measured on the card (`muh probe`) rests on measured inputs.
HARDWARE_INPUTS: dict[str, tuple[str, ...]] = {
    "smem": ("smem_per_block",),
    "smem_per_block": ("smem_per_block",),
    "warp": ("warp_size",),
    "warp_size": ("warp_size",),
    "sm_count": ("sm_count",),
    "device_name": ("device_name",),
    "smem_bytes": ("smem_per_block_optin", "smem_per_block"),  # Triton's budget: opt-in when the card has it
}


def measured_inputs(spec: Spec, hw: Hardware, inputs: dict) -> dict[str, Measured]:
    """The hardware facts among ``inputs`` that carry `@measured(…)` in ``spec`` (field → evidence)."""
    if str(inputs.get("budget", "")).startswith("cub_parity"):
        return {}  # CUB's constants, not the card's facts
    out: dict[str, Measured] = {}
    for name in inputs:
        for fld in HARDWARE_INPUTS.get(name, ()):
            if fld in hw.model_fields_set:
                m = spec.measured.get(f"hardware.{hw.name}.{fld}")
                if m is not None:
                    out[fld] = m
                break
    return out


def scaling_budget(hw: Hardware) -> tuple[int, int, str]:
    """(smem, warp, why) used by the scaling rules on this hardware."""
    if hw.cub_parity:
        return scaling.CUB_SMEM, scaling.CUB_WARP, "cub_parity: CUB's fixed 49152 B and 32 threads"
    return hw.smem_per_block, hw.warp_size, f"hardware {hw.name}: smem_per_block and warp_size"


def scale(rule: str, t4: int, i4: int, size: int, hw: Hardware, value: int | None = None) -> tuple[int, int, dict]:
    """(threads, items, inputs): the family's scaling rule for element size ``size`` on ``hw``
    (derive and ``muh tune``'s candidates alike); ``value``: the second input's size for the by-key
    rules (default: ``size``)."""
    smem, warp, why = scaling_budget(hw)
    if rule in scaling.COMBINED:
        value = size if value is None else value
        threads, items = scaling.RULES[rule](t4, i4, size, smem, warp, value=value)
        return threads, items, {"T4": t4, "I4": i4, "size": size, "value": value, "budget": why}
    threads, items = scaling.RULES[rule](t4, i4, size, smem, warp)
    return threads, items, {"T4": t4, "I4": i4, "size": size, "smem": smem, "warp": warp, "budget": why}


def policy_keys(alg: Algorithm, order=DTYPES) -> list[str]:
    """Every key resolved: each type in `types` (or the standard set) and each explicit typed policy
    (types in ``order``: the catalogue's, then the spec's own)."""
    keys = list(alg.types or DEFAULT_TYPES)
    for k in alg.policies:  # a `record` key is a class of types: it applies through the types it covers
        parsed = policy_key.key_of(k)
        if k != "default" and k not in keys and not {parsed.dtype, parsed.value} & set(policy_key.CLASSES):
            keys.append(k)
    rank = {t: i for i, t in enumerate(order)}
    return sorted(set(keys), key=lambda k: (rank.get(k.split(".")[0], len(rank)), k))


def derive(spec: Spec) -> Derived:
    """Resolve every algorithm; raise ``MuhError`` if a resolved policy cannot run on its hardware."""
    diags: list[Diagnostic] = []
    algorithms = {}
    for akey, alg in sorted(spec.algorithms.items()):
        hw = spec.hardware[alg.on]
        diags.extend(_bucket_support(spec, akey, alg))
        policies = {}
        for key in policy_keys(alg, spec.element_sizes()):
            rp, errs = _resolve(spec, akey, alg, hw, key)
            policies[key] = rp
            diags.extend(errs)
        algorithms[akey] = DerivedAlgorithm(family=alg.family, hardware=hw, policies=policies)
        diags.extend(_ops_checks(spec, akey, alg, policies))
    if diags:
        raise MuhError(diags)
    from muh.derive.deploy import complete_deploy, derive_deploy

    plan, deploy_diags = derive_deploy(spec)
    derived = Derived(
        spec_name=spec.name,
        spec_sha256=spec.sha256,
        algorithms=algorithms,
        deploy=plan,
        deploy_diagnostics=deploy_diags,
    )
    derived = derived.model_copy(
        update={"kernels": kernel_builds(spec, derived)}
    )  # the deploy's probe and ops read them
    derived = complete_deploy(spec, derived)
    ops = {name: derive_ops(derived, hw) for name, hw in sorted(spec.hardware.items())}
    return derived.model_copy(update={"ops": ops})


def _bucket_support(spec: Spec, akey: str, alg: Algorithm) -> list[Diagnostic]:
    """Size buckets only where the family's generated launch code picks a bucket by size."""
    from muh.families import registry

    names = registry.ALL
    if alg.family in names and registry.get(alg.family).buckets_by:
        return []
    able = [n for n in names if registry.get(n).buckets_by]
    why = (
        f"the {alg.family} kernels do not dispatch by size yet"
        if alg.family in names
        else f"muh generates no kernels for {alg.family}"
    )
    return [
        Diagnostic(
            "E-BUCKET",
            f"{why}: size buckets are not available for `{alg.family}`",
            spec.span_of(("algorithms", akey, "policies", k, "buckets", 0), key=True),
            hint=f"families with size buckets: {', '.join(able)}; write one policy for every size",
        )
        for k, p in alg.policies.items()
        if p.buckets
    ]


def _ops_checks(spec: Spec, akey: str, alg: Algorithm, policies: dict) -> list[Diagnostic]:
    """The LLM ops' own policies (rms_norm, silu_and_mul): their records' checks on every resolved
    policy and size bucket, and only the element types the ops are generated for."""
    from muh.families import registry

    if alg.family not in registry.OPS:
        return []
    rec = registry.get(alg.family)
    out = []
    for key, rp in policies.items():
        if rp.dtype not in rec.dtypes:
            out.append(
                Diagnostic(
                    "E-TYPE",
                    f"the LLM ops are not generated for {rp.dtype}",
                    spec.span_of(("algorithms", akey)),
                    hint=f"{alg.family} types: {', '.join(rec.dtypes)}",
                )
            )
            continue
        for label, values in [(None, rp.values)] + [(b.label, b.values) for b in rp.buckets]:
            pol = rec.read(lambda dim, default=None, v=values: v[dim].value if dim in v else default)
            for msg in rec.checks(None, rp.dtype, pol):
                where = f" (bucket `{label}`)" if label else ""
                layer = key if key in alg.policies else "default"
                out.append(
                    Diagnostic(
                        "E-VALUE",
                        msg + where,
                        spec.span_of(("algorithms", akey, "policies", layer)),
                        hint="threads 1..1024, items ≥ 1, vec a power of two (elements per load)",
                    )
                )
    return out


def layers_of(alg: Algorithm, key: str) -> list[str]:
    """The spec's policies that apply to ``key``, least specific first (muh/schema/policy_key.py)."""
    want = policy_key.key_of(key)
    got = [(k, policy_key.key_of(k)) for k in alg.policies]
    return [k for k, p in sorted(((k, p) for k, p in got if p.generalises(want)), key=lambda kp: kp[1].rank)]


_layers = layers_of


def resolve_query(spec: Spec, akey: str, query: policy_key.Query) -> ResolvedPolicy:
    """The policy one call (type, operator, offset width) gets: every key covering it, layered."""
    alg = spec.algorithms[akey]
    rp, errs = _resolve(spec, akey, alg, spec.hardware[alg.on], policy_key.query_key(query))
    if errs:
        raise MuhError(errs)
    return rp


def _pick(
    spec: Spec,
    akey: str,
    alg: Algorithm,
    layers: list[str],
    dim: str,
    key: str,
    sub: str | None = None,
    bucket: tuple[str, int] | None = None,
):
    """The most specific layer that sets ``dim``: (value, layer, path) or None. A size bucket
    (``(layer, index)``) is more specific than every layer."""
    if bucket is not None:
        layer, i = bucket
        b = alg.policies[layer].buckets[i]
        if dim in b.model_fields_set:
            return getattr(b, dim), layer, ("algorithms", akey, "policies", layer, "buckets", i, dim)
    for layer in reversed(layers):
        pol = alg.policies[layer]
        block = pol.subs.get(sub) if sub else pol
        if block is not None and dim in block.model_fields_set:
            path = ("algorithms", akey, "policies", layer) + (("subs", sub) if sub else ()) + (dim,)
            return getattr(block, dim), layer, path
    return None


def _resolve_values(spec, akey, alg, hw, key, size, sub=None, bucket=None, value_size=None) -> dict[str, Resolved]:
    fam = FAMILIES[alg.family]
    layers = _layers(alg, key)
    values: dict[str, Resolved] = {}
    for dim in fam.dims:
        got = _pick(spec, akey, alg, layers, dim, key, sub, bucket)
        if got is None and sub and not DIMS[dim].whole_policy:
            got = _pick(spec, akey, alg, layers, dim, key)  # sub-policies inherit from their policy
        if got is None:
            continue
        value, layer, path = got
        span = spec.span_of(path)
        mkey = ".".join(map(str, path))
        measured = spec.measured.get(mkey)
        origin = "measured" if measured else ("spec" if layer == key else "inherited")
        rule = "spec" if layer == key else f"inherited from policy {layer}"
        if "buckets" in path:
            label = alg.policies[layer].buckets[bucket[1]].label
            rule = f"bucket `{label}`" + ("" if layer == key else f" of policy {layer}")
        stale = bool(measured and measured.fingerprint and measured.fingerprint != hardware_fingerprint(hw))
        values[dim] = Resolved(
            value=value, origin=origin, rule=rule, where=span.stable() if span else None, measured=measured, stale=stale
        )
    if "scaling" not in values:
        values["scaling"] = Resolved(value=fam.scaling, origin="default", rule=f"family default for {alg.family}")
    rule = values["scaling"].value
    if "threads" in values and "items" in values and rule != "none":
        threads, items, inputs = scale(
            rule,
            values["threads"].value,
            values["items"].value,
            size,
            hw,
            fam.value_bytes if value_size is None else value_size,
        )
        for dim, new in (("threads", threads), ("items", items)):
            old = values[dim]
            values[dim] = Resolved(
                value=new,
                origin="measured" if (old.origin == "measured" and new == old.value) else "derived",
                rule=f"{rule}: {scaling.FORMULAS[rule]}",
                inputs={**inputs, f"{dim}_from": old.rule} if old.rule.startswith("bucket") else inputs,
                where=old.where,
                measured=old.measured,
                stale=old.stale,
            )
    return values


def _resolve(spec: Spec, akey: str, alg: Algorithm, hw: Hardware, key: str):
    parsed = policy_key.key_of(key)
    dtype, op = parsed.dtype, parsed.op or ""
    size = spec.element_sizes()[dtype]
    value = spec.element_sizes()[parsed.value] if parsed.value else None  # by-key: the values' size
    values = _resolve_values(spec, akey, alg, hw, key, size, value_size=value)
    diags: list[Diagnostic] = []
    subs = {}
    for sub in sorted({s for p in alg.policies.values() for s in p.subs}):
        subs[sub] = _resolve_values(spec, akey, alg, hw, key, size, sub, value_size=value)
    diags += _zeros(spec, akey, alg, hw, key, values)
    for sub, sv in subs.items():
        diags += _zeros(spec, akey, alg, hw, key, sv, sub=sub)
    smem_bytes = _tile_smem(spec, akey, alg, hw, key, size, values, diags)
    buckets = []
    owner = _bucket_layer(alg, _layers(alg, key))
    if owner is not None:
        for i, b in enumerate(alg.policies[owner].buckets):
            bvalues = _resolve_values(spec, akey, alg, hw, key, size, bucket=(owner, i), value_size=value)
            diags += _zeros(spec, akey, alg, hw, key, bvalues, bucket=(owner, i))
            bsmem = _tile_smem(spec, akey, alg, hw, key, size, bvalues, diags, (owner, i))
            buckets.append(
                ResolvedBucket(
                    size=b.size, lo=b.lo, hi=b.hi, label=b.label, layer=owner, values=bvalues, smem_bytes=bsmem
                )
            )
    return ResolvedPolicy(
        family=alg.family,
        hardware=hw.name,
        key=key,
        dtype=dtype,
        op=op or None,
        offset=parsed.offset,
        value_type=parsed.value,
        elem_size=size,
        values=values,
        subs=subs,
        smem_bytes=smem_bytes,
        buckets=buckets,
    ), diags


def _zeros(spec, akey, alg, hw, key, values, sub=None, bucket=None) -> list[Diagnostic]:
    """A derived count of zero (threads, items, …) cannot launch: an error at the value it came from
    (e.g. `smem_per_block = 1 B` leaves room for no thread of a scaled tile)."""
    out = []
    for dim, r in values.items():
        if r.origin != "derived" or isinstance(r.value, bool) or not isinstance(r.value, int) or r.value > 0:
            continue
        got = _pick(spec, akey, alg, _layers(alg, key), dim, key, sub, bucket)
        where = spec.span_of(got[2]) if got else spec.span_of(("algorithms", akey))
        inputs = ", ".join(f"{k}={v}" for k, v in r.inputs.items() if k != "budget")
        out.append(
            Diagnostic(
                "E-DERIVED",
                f"{alg.family} {key}: the scaling rule derives {dim} = {r.value} on `{hw.name}` ({inputs}): "
                "no kernel launches with zero",
                where,
                hint=f"smem_per_block = {fmt_bytes(hw.smem_per_block)} on `{hw.name}` "
                "leaves no room for this tile: check it, "
                "or write `scaling = none` and the values themselves",
            )
        )
    return out


def _bucket_layer(alg: Algorithm, layers: list[str]) -> str | None:
    """The most specific policy of ``layers`` that holds size buckets (its buckets are the key's)."""
    for layer in reversed(layers):
        if alg.policies[layer].buckets:
            return layer
    return None


def _tile_smem(spec, akey, alg, hw, key, size, values, diags, bucket=None) -> int | None:
    """Shared memory of a tile-staging family's tile; E-SMEM (at the value's source) when it does not fit."""
    held = limits.applying(hw.cub_parity, FAMILIES[alg.family].stages_tile)
    if not ("tile" in held and "threads" in values and "items" in values):
        return None
    t, i = values["threads"].value, values["items"].value
    smem_bytes = limits.tile_bytes(t, i, size)
    if not limits.tile_fits(t, i, size, hw.smem_per_block):
        fit = limits.largest_items(t, size, hw.smem_per_block)
        where = spec.span_of(_path_of(spec, akey, alg, key, "items", bucket))
        label = f" ({alg.policies[bucket[0]].buckets[bucket[1]].label})" if bucket else ""
        diags.append(
            Diagnostic(
                "E-SMEM",
                f"{alg.family} {key}{label}: tile {t} × {i} × {size} B = {fmt_bytes(smem_bytes)} "
                "exceeds smem_per_block = "
                f"{fmt_bytes(hw.smem_per_block)} on `{hw.name}`",
                where,
                hint=(
                    f"largest items that fits at {t} threads is {fit}"
                    if fit >= 1
                    else f"even one item per thread needs {fmt_bytes(t * size)}; use fewer threads"
                ),
            )
        )
    return smem_bytes


def _path_of(spec, akey, alg, key, dim, bucket=None):
    got = _pick(spec, akey, alg, _layers(alg, key), dim, key, bucket=bucket)
    return got[2] if got else ("algorithms", akey)
