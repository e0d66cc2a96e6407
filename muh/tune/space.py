"""The tuning space of one algorithm and element type, and the static filter.

A *variant* is a full nominal policy (the values a user writes in the spec): the base policy of the
type (``default`` ⊕ ``<type>`` ⊕ ``<type>.plus``, and the size bucket's values when a bucket is
tuned) with the space's dimensions replaced. A variant is evaluated by the stages a spec goes through:
its *candidate spec* (the spec with the variant written into the tuned policy) is checked by
validate's policy checks and resolved by derive (``derive.resolve.resolve_query``: scaling, tile
checks), and the family record gives the numbers its kernel is instantiated with. Nothing of derive's
rules is repeated here. Two variants whose kernels get the same numbers share one measurement.

The static filter rejects variants that cannot run on the spec's hardware (what validate, derive and
the kernel emitter's own ``validate`` refuse) before anything is compiled.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Optional

from muh import families
from muh.diagnostics import Diagnostic, MuhError, did_you_mean
from muh.runtime.dtypes import SIZE as DTYPES
from muh.schema.catalog import FAMILIES
from muh.schema.models import SUB_SEP, Algorithm, Bucket, Delay, Policy, PolicyValues, Spec, sub_dim

# CCCL's label tokens (benchmark %RANGE% names) for muh's dimensions, in CCCL's order.
TOKENS = {
    "items": "ipt",
    "threads": "tpb",
    "vec": "ipv",
    "delay.ns": "ns",
    "delay.kind": "dcid",
    "delay.l2_write_latency": "l2w",
    "load": "trp",
    "modifier": "ld",
    "block": "alg",
    "bits_per_pass": "bpp",
    "bytes_in_flight": "bif",
    "store": "st",
    "algorithm": "algo",
    "window": "win",
    "store_modifier": "stm",
}
TOKEN_ORDER = list(TOKENS)

MAX_VARIANTS = 100_000
"""The most variants one (algorithm, type) space may have (docs/tune.md). The space is counted before
anything is built; a larger one is refused with its size and how to narrow it."""

TUNABLE = {r.name: r.tunable for r in families.tunable()}  # what the harness can vary


@dataclass(frozen=True)
class Variant:
    """One point of the space: the nominal policy (spec values) of one element type."""

    family: str
    dtype: str
    values: tuple[tuple[str, object], ...]  # sorted (dim, value); Delay values stay Delay models

    def get(self, dim: str, default=None):
        return dict(self.values).get(dim, default)

    def as_dict(self) -> dict:
        return dict(self.values)

    def label(self, dims: tuple[str, ...] | None = None) -> str:
        """CCCL-style label, e.g. ``ipt_16.tpb_256.ipv_4`` (only ``dims``, default: all)."""
        flat = _flatten(self.as_dict())
        keys = [k for k in TOKEN_ORDER if k in flat] + sorted(k for k in flat if k not in TOKENS)
        if dims is not None:  # a dotted dimension is a sub-policy's (`large.items`) or a delay's part
            keys = [k for k in keys if k in dims or k.split(".")[0] in dims]
        return ".".join(f"{TOKENS.get(k, k.replace('.', '_'))}_{_tok(flat[k])}" for k in keys)


def _tok(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _flatten(values: dict) -> dict:
    out = {}
    for k, v in values.items():
        if isinstance(v, Delay):
            from muh.schema.catalog import DELAY_KINDS

            out["delay.kind"] = DELAY_KINDS.index(v.kind)
            out["delay.ns"] = int(v.ns)
            out["delay.l2_write_latency"] = int(v.l2_write_latency)
        else:
            out[k] = v
    return out


@dataclass(frozen=True)
class Effective:
    """What the kernel is generated with: derive's resolved values of the candidate (element-size-scaled
    threads/items and the other dims) and the family record's numbers for them (``params``)."""

    family: str
    dtype: str
    values: tuple[tuple[str, object], ...]
    params: tuple[tuple[str, int], ...] = ()  # (constexpr name, value): what the kernel is instantiated with
    # the candidate's sub-policies as derive resolved them (the spec's: `muh tune` varies top-level dims):
    # {sub-policy: {dim: Resolved}}, what the record's ``get.sub`` reads, as ``muh build`` does
    subs: dict = field(default_factory=dict, compare=False, hash=False)
    # whose kernels are measured: muh's own (``muh``) or CUB's dispatch on a policy hub generated from the
    # candidate spec (``cub``: muh/tune/cub.py; its values then hold the sub-policies' as ``large.items``)
    implementation: str = "muh"
    spec: Optional[Spec] = field(default=None, compare=False, hash=False)  # cub: the candidate spec

    def get(self, dim: str, default=None):
        return dict(self.values).get(dim, default)

    @property
    def key(self) -> str:
        """Stable identity of the compiled kernel (cache key together with the source hash): its
        instantiation numbers when known (variants that load alike share one measurement); the
        implementation is part of it, so muh's and CUB's trials never share a key."""
        what = list(self.params) if self.params else [(k, _jsonable(v)) for k, v in self.values]
        head = [self.family, self.dtype] + ([self.implementation] if self.implementation != "muh" else [])
        blob = json.dumps(head + [what], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _jsonable(v):
    return v.model_dump(mode="json") if isinstance(v, Delay) else v


@dataclass
class Rejected:
    variant: Variant
    reasons: list[str]


@dataclass
class Space:
    """Candidates of one (algorithm, type[, size bucket]): the base variant, the dims explored and
    their values, and the spec the candidates are written into."""

    family: str
    dtype: str
    akey: str
    policy_key: str  # where winners are written (`float32` or `float32.plus` if that exists)
    base: Variant
    dims: dict[str, list] = field(default_factory=dict)
    spec: Optional[Spec] = None
    bucket: Optional[tuple[int, Optional[int]]] = None  # (lo, hi) of the size bucket tuned; None: every size
    bucket_key: str = "elements"  # what the bucket tests (the family record's ``buckets_by``)
    shape: Optional[tuple] = None  # the family's problem shape this space is measured at (topk: row length, k)
    implementation: str = "muh"  # `muh tune --implementation`: muh's kernels, or CUB's (muh/tune/cub.py)

    @property
    def bucket_label(self) -> str | None:
        return None if self.bucket is None else Bucket(size=self.bucket_key, lo=self.bucket[0], hi=self.bucket[1]).label

    @property
    def name(self) -> str:
        """``float64`` or ``float64 [elements >= 2^24]``."""
        return self.dtype + (f" [{self.bucket_label}]" if self.bucket is not None else "")

    def sizes(self, sizes) -> list[int]:
        """The problem sizes of ``sizes`` that fall in this space's bucket (all without one, or when the
        bucket tests another size than `elements`: its shape says where it is measured)."""
        if self.bucket is None or self.bucket_key != "elements":
            return list(sizes)
        lo, hi = self.bucket
        return [n for n in sizes if n >= lo and (hi is None or n < hi)]

    @property
    def size(self) -> int:
        n = 1
        for vals in self.dims.values():
            n *= len(vals)
        return n

    def iter_variants(self):
        """The Cartesian product in a fixed order (dims sorted, values as listed), one at a time."""
        names = sorted(self.dims)
        base = self.base.as_dict()
        for combo in itertools.product(*(self.dims[n] for n in names)):
            vals = dict(base)
            vals.update(zip(names, combo))
            yield Variant(self.family, self.dtype, tuple(sorted(vals.items())))

    def variants(self) -> list[Variant]:
        return list(self.iter_variants())


def given(pol: Policy) -> dict:
    """The values a policy block sets: its own dimensions, and each sub-policy's as ``<sub>.<dim>``."""
    out = dict(pol.given())
    for sub, block in sorted(pol.subs.items()):
        out.update({f"{sub}{SUB_SEP}{d}": v for d, v in block.given().items()})
    return out


def nominal_base(alg: Algorithm, dtype: str, bucket: tuple[int, Optional[int]] | None = None) -> tuple[dict, str]:
    """(nominal base policy values, policy key to write winners to) for ``dtype``; with ``bucket``
    (lo, hi), the values of the spec's size bucket holding ``lo`` on top, and the policy that holds the
    buckets as the key. Sub-policy values are named ``<sub>.<dim>``."""
    layers = [k for k in ("default", dtype, f"{dtype}.plus") if k in alg.policies]
    values: dict = {}
    for layer in layers:
        values.update(given(alg.policies[layer]))
    target = f"{dtype}.plus" if f"{dtype}.plus" in alg.policies else dtype
    owner = next((k for k in reversed(layers) if alg.policies[k].buckets), None)
    if owner is not None:
        target = owner
        if bucket is not None:
            lo = bucket[0]
            got = next((b for b in alg.policies[owner].buckets if b.lo <= lo and (b.hi is None or lo < b.hi)), None)
            if got is not None:
                values.update(got.given())
    return values, target


def spec_buckets(spec: Spec, family: str, dtype: str) -> list[tuple[int, Optional[int]]]:
    """The size buckets the spec's policy of ``dtype`` holds (empty: one policy for every size)."""
    owner = _bucket_owner(spec, family, dtype)
    return owner.bucket_sizes() if owner else []


def spec_bucket_key(spec: Spec, family: str, dtype: str) -> str | None:
    """What the buckets of the spec's policy of ``dtype`` test (None: it has none)."""
    owner = _bucket_owner(spec, family, dtype)
    return owner.bucket_key if owner else None


def _bucket_owner(spec: Spec, family: str, dtype: str) -> Policy | None:
    for _, alg in sorted(spec.algorithms.items()):
        if alg.family == family:
            layers = [k for k in ("default", dtype, f"{dtype}.plus") if k in alg.policies]
            owner = next((k for k in reversed(layers) if alg.policies[k].buckets), None)
            return alg.policies[owner] if owner else None
    return None


def build_space(
    spec: Spec,
    family: str,
    dtype: str,
    bucket: tuple[int, Optional[int]] | None = None,
    bucket_key: str = "elements",
    shape: tuple | None = None,
    implementation: str = "muh",
) -> Space:
    """The space of ``family`` on its hardware for ``dtype`` (of one bucket: ``bucket`` (lo, hi) of
    ``bucket_key``, measured at ``shape`` where the family has one); ``MuhError`` if there is none.
    ``implementation`` ``cub``: the space of CUB's policy for the family (muh/tune/cub.py)."""
    algs = [(k, a) for k, a in sorted(spec.algorithms.items()) if a.family == family]
    if not algs:
        fams = sorted({a.family for a in spec.algorithms.values()})
        hint = did_you_mean(family, fams) or f"algorithms: {', '.join(fams) or '(none)'}"
        if family in families.OPS:  # the ops derive from reduce/transform until the spec has their own policy
            hint = (
                f"add `algorithm {family} on <hardware> {{ policy default {{ threads = 256  items = 1 }}  "
                f"space {{ threads = [128, 256, 512, 1024]  items = [1, 2, 4] }} }}` (docs/ops.md)"
            )
        raise MuhError([Diagnostic("E-TUNE", f"no algorithm `{family}` in {spec.file}", None, hint=hint)])
    if implementation == "cub":
        from muh.tune import cub_harness

        tunable = cub_harness.tunable(family)  # MuhError naming the families that work
    elif family not in TUNABLE:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"`muh tune` cannot measure `{family}` yet",
                    None,
                    hint=f"tunable: {', '.join(TUNABLE)}"
                    + (
                        f"; CUB's own kernels: `--implementation cub` ({', '.join(_cub_families())})"
                        if family in _cub_families()
                        else ""
                    ),
                )
            ]
        )
    else:
        tunable = TUNABLE[family]
    if dtype not in DTYPES:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"unknown element type `{dtype}`",
                    None,
                    hint=did_you_mean(dtype, DTYPES) or f"types: {', '.join(DTYPES)}",
                )
            ]
        )
    akey, alg = algs[0]
    if implementation == "cub":
        _check_cub_target(spec, family, algs)
    base_vals, target = nominal_base(alg, dtype, bucket)
    dims: dict[str, list] = {}
    for skey in ("default", dtype, f"{dtype}.plus"):
        if skey in alg.spaces:
            dims.update({d: list(v) for d, v in alg.spaces[skey].values.items()})
    span = spec.span_of(("algorithms", akey))
    if not dims:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"`algorithm {family} on {alg.on}` has no `space` block",
                    span,
                    hint="add e.g. `space { items = 7..24  threads = 128..1024 step 32 }`",
                )
            ]
        )
    bad = [d for d in dims if d not in tunable]
    if bad:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"`muh tune` cannot vary `{bad[0]}` of {family} yet",
                    span,
                    hint=f"{family} varies: {', '.join(tunable)}",
                )
            ]
        )
    missing = [d for d in ("threads", "items") if d in FAMILIES[family].dims and d in tunable and d not in base_vals]
    if missing:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"the base policy of {family} {dtype} does not set `{missing[0]}`",
                    span,
                    hint="set it in `policy default { … }`",
                )
            ]
        )
    base = Variant(family, dtype, tuple(sorted(base_vals.items())))
    space = Space(
        family,
        dtype,
        akey,
        target,
        base,
        dims,
        spec=spec,
        bucket=bucket,
        bucket_key=bucket_key,
        shape=shape,
        implementation=implementation,
    )
    if space.size > MAX_VARIANTS:
        widest = sorted(dims, key=lambda d: -len(dims[d]))
        where = next(
            (
                spec.span_of(("algorithms", akey, "spaces", k), key=True)
                for k in ("default", dtype, f"{dtype}.plus")
                if k in alg.spaces
            ),
            span,
        )
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"the space of {family} {dtype} has {space.size:,} variants (limit {MAX_VARIANTS:,})",
                    where,
                    hint="narrow it: "
                    + " × ".join(f"{d} {len(dims[d])}" for d in widest)
                    + " values; use a coarser `step`, fewer listed values, or a `space <type> { … }` for one type",
                )
            ]
        )
    return space


def _check_cub_target(spec: Spec, family: str, algs: list) -> None:
    """CUB's kernels are tuned on one hardware of the spec's, and not on a CUB parity target (whose policies
    are CUB's by definition: `muh check`'s parity and cub_dispatch compare them with CUB's)."""
    if len(algs) > 1:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"{spec.file} declares {family} on {', '.join(a.on for _, a in algs)}: "
                    "`muh tune` measures one hardware's policy, on that GPU",
                    spec.span_of(("algorithms", algs[1][0])),
                    hint=f"tune a spec that declares {family} on the GPU's hardware only "
                    "(e.g. bench/cub_tune/h200_cub.muh for the H200)",
                )
            ]
        )
    akey, alg = algs[0]
    if spec.hardware[alg.on].cub_parity:
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"`{alg.on}` is a CUB parity target (`cub_parity = true`): its {family} policy is CUB's "
                    "shipped one, which `muh check` compares with CUB",
                    spec.span_of(("algorithms", akey)),
                    hint="tune a spec of your GPU's hardware, starting from these values",
                )
            ]
        )


def _cub_families() -> tuple[str, ...]:
    from muh.tune.cub_harness import FAMILIES

    return FAMILIES


def candidate_spec(space: Space, v: Variant) -> Spec:
    """The spec with ``v``'s nominal values written into the tuned policy (``space.policy_key``): the
    spec `--apply` would write, as derive reads it (the policy's size buckets aside: the variant is the
    whole policy of the bucket it is measured for)."""
    spec = space.spec
    alg = spec.algorithms[space.akey]
    old = alg.policies.get(space.policy_key)
    values = {k: x for k, x in v.as_dict().items() if sub_dim(k) is None}
    subs = dict(old.subs) if old else {}
    by_sub: dict[str, dict] = {}
    for k, x in v.as_dict().items():
        if (sd := sub_dim(k)) is not None:
            by_sub.setdefault(sd[0], {})[sd[1]] = x
    for sub, vals in by_sub.items():  # the variant's sub-policy values over the policy's own block
        mine = {**(subs[sub].given() if sub in subs else {}), **vals}
        subs[sub] = PolicyValues.model_construct(_fields_set=set(mine), **mine)
    pol = Policy.model_construct(_fields_set=set(values) | {"subs"}, subs=subs, buckets=[], **values)
    algo = alg.model_copy(update={"policies": {**alg.policies, space.policy_key: pol}})
    return spec.model_copy(update={"algorithms": {**spec.algorithms, space.akey: algo}})


def evaluate(space: Space, v: Variant) -> tuple[Effective | None, list[str]]:
    """The variant run through the spec's stages: validate's policy checks and derive's resolution of
    its candidate spec (``resolve_query`` for the call the kernels serve), then the family record's
    numbers. Returns (effective policy or None, reasons it cannot run)."""
    from muh.derive.kernels import hardware_config, read_policy
    from muh.derive.resolve import resolve_query
    from muh.schema.policy_key import Query
    from muh.schema.validate import policy_problems

    if space.implementation == "cub":  # CUB's kernels: the candidate's hub (muh/tune/cub.py)
        return _evaluate_cub(space, v)
    cand = candidate_spec(space, v)
    alg = cand.algorithms[space.akey]
    hw = cand.hardware[alg.on]
    path = ("algorithms", space.akey, "policies", space.policy_key)
    reasons = [d.message for d in policy_problems(alg.policies[space.policy_key].given(), space.family, hw, cand, path)]
    rec = families.find(space.family)
    try:
        rp = resolve_query(cand, space.akey, Query(space.dtype, (rec.op if rec else None) or "plus"))
    except MuhError as err:
        return None, reasons + [d.message for d in err.diagnostics]
    values = tuple(sorted((d, r.value) for d, r in rp.values.items() if d != "scaling"))
    params: tuple = ()
    if rec is not None and not reasons:
        try:
            cfg = hardware_config(hw)
            pol = read_policy(space.family, dict(values).get, f"{space.family}.{space.dtype}", rp.subs)
            params = tuple((p.cname, p.value) for p in rec.params(cfg, space.dtype, pol))
        except (TypeError, ValueError, KeyError):
            params = ()  # the emitter's own check (unit.emitter_reasons) says why
    return Effective(space.family, space.dtype, values, params, subs=dict(rp.subs)), reasons


def _alone(spec: Spec, akey: str) -> Spec:
    """The candidate spec reduced to the tuned algorithm and its hardware (what its hub is built from:
    the other algorithms' files are not part of the unit)."""
    alg = spec.algorithms[akey]
    return spec.model_copy(
        update={"algorithms": {akey: alg}, "hardware": {alg.on: spec.hardware[alg.on]}, "deploys": {}}
    )


def _evaluate_cub(space: Space, v: Variant) -> tuple[Effective | None, list[str]]:
    """``v``'s candidate spec through validate's policy checks (the sub-policies' and CUB's agent rules
    too) and derive's resolution of the call (``space.dtype``); the effective values hold the
    sub-policies' as ``large.items``. Returns (effective, reasons it cannot run)."""
    from muh.derive.resolve import resolve_query
    from muh.schema.policy_key import Query
    from muh.schema.validate import candidate_problems

    cand = candidate_spec(space, v)
    alg = cand.algorithms[space.akey]
    hw = cand.hardware[alg.on]
    path = ("algorithms", space.akey, "policies", space.policy_key)
    reasons = [d.message for d in candidate_problems(alg.policies[space.policy_key], space.family, hw, cand, path)]
    try:
        rp = resolve_query(cand, space.akey, Query(space.dtype))
    except MuhError as err:
        return None, reasons + [d.message for d in err.diagnostics]
    values = {d: r.value for d, r in rp.values.items() if d != "scaling"}
    for sub, held in rp.subs.items():
        values.update({f"{sub}.{d}": r.value for d, r in held.items() if d != "scaling"})
    eff = Effective(
        space.family,
        space.dtype,
        tuple(sorted(values.items())),
        subs=dict(rp.subs),
        implementation="cub",
        spec=_alone(cand, space.akey),
    )
    return eff, reasons


def effective(v: Variant, space: Space) -> Effective:
    """What the kernel of ``v`` is generated with (``evaluate``); MuhError if derive refuses it."""
    eff, reasons = evaluate(space, v)
    if eff is None:
        raise MuhError([Diagnostic("E-TUNE", f"{space.family} {space.name} {v.label()}: {reasons[0]}", None)])
    return eff


def static_reasons(v: Variant, space: Space) -> list[str]:
    """Why ``v`` cannot run on the spec's hardware (empty: it may): what validate and derive say of
    its candidate spec. No compiler."""
    return evaluate(space, v)[1]


def static_filter(space: Space, extra=None) -> tuple[list[Variant], list[Rejected]]:
    """Split the space into runnable variants and rejected ones (with reasons), before compiling.

    ``extra(eff) -> list[str]`` adds the kernel emitter's own constraints (e.g. its shared-memory
    layout); it is called only for variants that validate and derive accept (the candidate spec says the hardware).
    """
    keep, rejected = [], []
    for v in space.iter_variants():  # streamed: the space is never held whole
        eff, reasons = evaluate(space, v)
        if not reasons and eff is not None and extra is not None:
            reasons = list(extra(eff))
        if reasons:
            rejected.append(Rejected(v, reasons))
        else:
            keep.append(v)
    return keep, rejected
