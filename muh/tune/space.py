"""The tuning space of one algorithm and element type, and the static filter.

A *variant* is a full nominal policy (the values a user writes in the spec): the base policy of the
type (``default`` ⊕ ``<type>`` ⊕ ``<type>.plus``) with the space's dimensions replaced. Its
*effective* policy is what a kernel gets after the family's scaling rule for the element size on
this hardware (muh/derive/scaling.py). Two variants with the same effective policy compile to the
same kernel, so they share one measurement.

The static filter rejects variants that cannot run on the spec's hardware (threads not a multiple
of the warp, more threads than a block may have, a tile larger than shared memory, and every other
reason the kernel emitter's own ``validate`` gives) before anything is compiled.
"""
from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field

from muh import families
from muh.derive.resolve import scale
from muh.diagnostics import Diagnostic, MuhError, did_you_mean
from muh.runtime.dtypes import SIZE as DTYPES
from muh.families.base import load_vec
from muh.schema.catalog import FAMILIES
from muh.schema.models import Algorithm, Delay, Hardware, Spec

# CCCL's label tokens (benchmark %RANGE% names) for muh's dimensions, in CCCL's order.
TOKENS = {"items": "ipt", "threads": "tpb", "vec": "ipv", "delay.ns": "ns", "delay.kind": "dcid",
          "delay.l2_write_latency": "l2w", "load": "trp", "modifier": "ld", "block": "alg",
          "bits_per_pass": "bpp", "bytes_in_flight": "bif", "store": "st", "algorithm": "algo",
          "window": "win", "store_modifier": "stm"}
TOKEN_ORDER = list(TOKENS)

MAX_VARIANTS = 100_000
"""The most variants one (algorithm, type) space may have (docs/tune.md). The space is counted before
anything is built; a larger one is refused with its size and how to narrow it."""

TUNABLE = {r.name: r.tunable for r in families.records() if r.tunable}  # what the harness can vary


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
        if dims is not None:
            keys = [k for k in keys if k.split(".")[0] in dims]
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
    """What the kernel is generated with: element-size-scaled threads/items and the other dims."""

    family: str
    dtype: str
    values: tuple[tuple[str, object], ...]

    def get(self, dim: str, default=None):
        return dict(self.values).get(dim, default)

    @property
    def key(self) -> str:
        """Stable identity of the compiled kernel (cache key together with the source hash)."""
        blob = json.dumps([self.family, self.dtype, [(k, _jsonable(v)) for k, v in self.values]], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _jsonable(v):
    return v.model_dump(mode="json") if isinstance(v, Delay) else v


@dataclass
class Rejected:
    variant: Variant
    reasons: list[str]


@dataclass
class Space:
    """Candidates of one (algorithm, type): the base variant, the dims explored and their values."""

    family: str
    dtype: str
    akey: str
    policy_key: str  # where winners are written (`float32` or `float32.plus` if that exists)
    base: Variant
    dims: dict[str, list] = field(default_factory=dict)

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


def nominal_base(alg: Algorithm, dtype: str) -> tuple[dict, str]:
    """(nominal base policy values, policy key to write winners to) for ``dtype``."""
    layers = [k for k in ("default", dtype, f"{dtype}.plus") if k in alg.policies]
    values: dict = {}
    for layer in layers:
        values.update(alg.policies[layer].given())
    target = f"{dtype}.plus" if f"{dtype}.plus" in alg.policies else dtype
    return values, target


def build_space(spec: Spec, family: str, dtype: str) -> Space:
    """The space of ``family`` on its hardware for ``dtype``; ``MuhError`` if there is none."""
    algs = [(k, a) for k, a in sorted(spec.algorithms.items()) if a.family == family]
    if not algs:
        fams = sorted({a.family for a in spec.algorithms.values()})
        raise MuhError([Diagnostic("E-TUNE", f"no algorithm `{family}` in {spec.file}", None,
                                   hint=did_you_mean(family, fams) or f"algorithms: {', '.join(fams) or '(none)'}")])
    if family not in TUNABLE:
        raise MuhError([Diagnostic("E-TUNE", f"`muh tune` cannot measure `{family}` yet", None,
                                   hint=f"tunable: {', '.join(TUNABLE)}")])
    if dtype not in DTYPES:
        raise MuhError([Diagnostic("E-TUNE", f"unknown element type `{dtype}`", None,
                                   hint=did_you_mean(dtype, DTYPES) or f"types: {', '.join(DTYPES)}")])
    akey, alg = algs[0]
    base_vals, target = nominal_base(alg, dtype)
    dims: dict[str, list] = {}
    for skey in ("default", dtype, f"{dtype}.plus"):
        if skey in alg.spaces:
            dims.update({d: list(v) for d, v in alg.spaces[skey].values.items()})
    span = spec.span_of(("algorithms", akey))
    if not dims:
        raise MuhError([Diagnostic("E-TUNE", f"`algorithm {family} on {alg.on}` has no `space` block", span,
                                   hint="add e.g. `space { items = 7..24  threads = 128..1024 step 32 }`")])
    bad = [d for d in dims if d not in TUNABLE[family]]
    if bad:
        raise MuhError([Diagnostic("E-TUNE", f"`muh tune` cannot vary `{bad[0]}` of {family} yet", span,
                                   hint=f"{family} varies: {', '.join(TUNABLE[family])}")])
    missing = [d for d in ("threads", "items") if d in FAMILIES[family].dims and d in TUNABLE[family] and d not in base_vals]
    if missing:
        raise MuhError([Diagnostic("E-TUNE", f"the base policy of {family} {dtype} does not set `{missing[0]}`", span,
                                   hint="set it in `policy default { … }`")])
    base = Variant(family, dtype, tuple(sorted(base_vals.items())))
    space = Space(family, dtype, akey, target, base, dims)
    if space.size > MAX_VARIANTS:
        widest = sorted(dims, key=lambda d: -len(dims[d]))
        where = next((spec.span_of(("algorithms", akey, "spaces", k), key=True) for k in ("default", dtype, f"{dtype}.plus")
                      if k in alg.spaces), span)
        raise MuhError([Diagnostic(
            "E-TUNE", f"the space of {family} {dtype} has {space.size:,} variants (limit {MAX_VARIANTS:,})", where,
            hint="narrow it: " + " × ".join(f"{d} {len(dims[d])}" for d in widest)
                 + " values; use a coarser `step`, fewer listed values, or a `space <type> { … }` for one type")])
    return space


def effective(v: Variant, hw: Hardware, family_scaling: str | None = None) -> Effective:
    """What the kernel gets: derive's scaling of nominal threads/items for the element size on this
    hardware (``derive.resolve.scale``), and the load width rule of the family records (``load_vec``:
    variants that load alike share one measurement)."""
    vals = v.as_dict()
    rule = vals.get("scaling") or family_scaling or FAMILIES[v.family].scaling
    size = DTYPES[v.dtype]
    if "threads" in vals and "items" in vals and rule != "none":
        vals["threads"], vals["items"], _ = scale(rule, vals["threads"], vals["items"], size, hw)
    if "vec" in vals and "items" in vals:
        vals["vec"] = load_vec(v.dtype, int(vals["items"]), int(vals["vec"]))[0]
    vals.pop("scaling", None)
    return Effective(v.family, v.dtype, tuple(sorted(vals.items())))


def static_reasons(eff: Effective, hw: Hardware) -> list[str]:
    """Why ``eff`` cannot run on ``hw`` (empty: it may). Pure arithmetic, no compiler."""
    out: list[str] = []
    t, i = eff.get("threads"), eff.get("items")
    size = DTYPES[eff.dtype]
    if t is not None:
        if t % hw.warp_size:
            out.append(f"threads={t} is not a multiple of warp_size={hw.warp_size}")
        if t > hw.max_threads_per_block:
            out.append(f"threads={t} exceeds max_threads_per_block={hw.max_threads_per_block}")
    if FAMILIES[eff.family].stages_tile and t and i:
        need = t * i * size
        if need > hw.smem_per_block:
            out.append(f"tile {t}x{i}x{size} B = {need} B exceeds smem_per_block={hw.smem_per_block} B")
    return out


def static_filter(space: Space, hw: Hardware, extra=None) -> tuple[list[Variant], list[Rejected]]:
    """Split the space into runnable variants and rejected ones (with reasons), before compiling.

    ``extra(eff) -> list[str]`` adds the kernel emitter's own constraints (e.g. its shared-memory
    layout); it is called only for variants that pass the hardware checks.
    """
    keep, rejected = [], []
    for v in space.iter_variants():  # streamed: the space is never held whole
        eff = effective(v, hw)
        reasons = static_reasons(eff, hw)
        if not reasons and extra is not None:
            reasons = list(extra(eff))
        if reasons:
            rejected.append(Rejected(v, reasons))
        else:
            keep.append(v)
    return keep, rejected
