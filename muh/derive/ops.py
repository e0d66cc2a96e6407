"""Derive: launch shapes of the LLM serving ops, from the hardware and its reduce/transform policies.

Every number the ops template prints is computed here, with the rule and inputs that produced it
(``Resolved``), so the generated file can say where each value came from. Two ways in:

* ``from_spec(derived, hardware)``: a real spec (``transform`` / ``reduce`` algorithms on that
  hardware; CUB's defaults where the spec has none, marked ``origin="default"``); ``derive`` runs it
  for every hardware of the spec (``Derived.ops``), ``muh explain SPEC ops`` prints it and the ops
  emitter (muh/codegen/ops) only renders it; the tests' and the bench's presets take it from there
  (``bench/presets.py``: ``ops``);
* ``tune_target(...)``: one candidate of ``muh tune``.

The rules (docs/ops.md):

* ``vec``: elements per vector load = min(16 B, nominal vec × 4 B) / element size: the policies'
  ``vec`` counts nominal 4-byte items (CUB's convention); 16 B is the widest load instruction.
* ``items_min``: vectors each thread keeps in flight before another thread is added =
  ceil(bytes_in_flight / (resident threads per SM × vector bytes)) — bytes_in_flight is per SM
  (CUB's meaning), resident threads per SM the 2048 of every CUDA-class SM since sm_30.
* ``row_threads`` (rms_norm, fused_add_rms_norm, softmax: one block reduces one row): the reduce
  policy's threads for the dtype (``dtype.plus`` when tuned), a multiple of the warp, capped at the
  hardware's block limit. A launch uses fewer when the row is short (see ``ops.cu``).
* ``max_items``: vectors a thread may cache in registers: min(32 floats, a quarter of its share of
  a 64 Ki register file at ``row_threads``); longer rows fall back to a streaming loop that
  re-reads the row from L1/L2.
* ``elt_threads`` / ``elt_items`` (silu_and_mul): the transform policy's threads and ``items_min``.
* ``topk_threads`` (topk_softmax: one warp per token): the reduce policy's threads; ``max_per_lane``
  = 16 experts per lane (1024 experts on a 64-lane warp, 512 on a 32-lane one).

The ops' own policies override the derivation where the spec has them: ``algorithm rms_norm`` sets
the row numbers (``row_threads`` = threads, ``items_min`` = items, ``vec`` = its vec, ``max_items``
by the same register rule), ``algorithm silu_and_mul`` the element-wise ones (``elt_threads``,
``elt_items``, ``elt_vec``); their records (muh/families/rms_norm/, silu_and_mul/) own those
numbers. Either may hold size buckets by rows × hidden (an op's element count): the ops' buckets are
every boundary of the policies they read, each with its full set of numbers (``OpsPolicy.buckets``).
"""

from __future__ import annotations

from typing import Optional

from muh.derive.model import OpsPolicy, OpsTarget, Resolved
from muh.families import rms_norm as ROW
from muh.families import silu_and_mul as ELT
from muh.families.base import MAX_LOAD_BYTES, RESIDENT_THREADS_PER_SM
from muh.families.transform import DEFAULT_BYTES_IN_FLIGHT
from muh.runtime import dtypes as DT

OPS_DTYPES = DT.OPS
CTYPE = {d: DT.TABLE[d].cxx for d in OPS_DTYPES}
ELEM = {d: DT.SIZE[d] for d in OPS_DTYPES}
DTYPE_CODE = {d: DT.CODE[d] for d in OPS_DTYPES}  # muh_op_dtype in include/muh/ops/ops.h = muh_dtype's codes
MAX_PER_LANE = 16
DEFAULT_THREADS = 256  # CUB's default block of reduce and transform
DEFAULT_VEC = 4  # nominal 4-byte items per vector load (CUB reduce default)


def _src(value, origin: str, where: str) -> Resolved:
    return Resolved(value=value, origin=origin, rule=where)


def _pow2_floor(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def _round_warp(n: int, warp: int) -> int:
    return max(warp, -(-n // warp) * warp)


def derive_policy(
    dtype: str,
    warp: int,
    max_block: int,
    reduce_threads: Resolved,
    nominal_vec: Resolved,
    transform_threads: Resolved,
    bytes_in_flight: Resolved,
) -> OpsPolicy:
    size = ELEM[dtype]
    vec_bytes = _pow2_floor(min(MAX_LOAD_BYTES, int(nominal_vec.value) * 4))
    vec = max(1, vec_bytes // size)
    vec_r = Resolved(
        value=vec,
        origin="derived",
        rule="pow2_floor(min(16 B, nominal vec × 4 B)) / element size",
        inputs={"vec": nominal_vec.value, "vec_from": nominal_vec.rule, "element_size": size},
    )
    items_min = max(1, -(-int(bytes_in_flight.value) // (RESIDENT_THREADS_PER_SM * vec * size)))
    items_r = Resolved(
        value=items_min,
        origin="derived",
        rule="ceil(bytes_in_flight / (resident_threads_per_sm × vec × element_size))",
        inputs={
            "bytes_in_flight": int(bytes_in_flight.value),
            "bytes_from": bytes_in_flight.rule,
            "resident_threads_per_sm": RESIDENT_THREADS_PER_SM,
            "vec": vec,
            "element_size": size,
        },
    )

    def threads(src: Resolved, what: str) -> Resolved:
        v = min(_round_warp(int(src.value), warp), max_block // warp * warp)
        return Resolved(
            value=v,
            origin="derived",
            rule=f"{what} threads rounded up to the warp, ≤ max_threads_per_block",
            inputs={
                "threads": int(src.value),
                "threads_from": src.rule,
                "warp_size": warp,
                "max_threads_per_block": max_block,
            },
        )

    row_threads = threads(reduce_threads, "reduce")
    max_items, mrule = ROW.max_items(int(row_threads.value), vec)
    return OpsPolicy(
        dtype=dtype,
        ctype=CTYPE[dtype],
        code=DTYPE_CODE[dtype],
        row_threads=row_threads,
        vec=vec_r,
        items_min=items_r,
        max_items=Resolved(
            value=max_items,
            origin="derived",
            rule=mrule,
            inputs={"register_file": ROW.REGISTER_FILE, "row_threads": int(row_threads.value), "vec": vec},
        ),
        elt_threads=threads(transform_threads, "transform"),
        elt_items=Resolved(value=items_min, origin="derived", rule="items_min", inputs={"items_min": items_min}),
        elt_vec=Resolved(value=vec, origin="derived", rule="vec (the row ops')", inputs={"vec": vec}),
        topk_threads=threads(reduce_threads, "reduce"),
        max_per_lane=Resolved(
            value=MAX_PER_LANE,
            origin="default",
            rule="experts per lane held in registers",
            inputs={"max_experts": MAX_PER_LANE * warp},
        ),
    )


def from_spec(derived, hardware) -> OpsTarget:
    """The ops of ``hardware`` (a schema ``Hardware``) from the spec's reduce/transform policies."""
    name = hardware.name
    red = {a.family: a for a in derived.of("reduce", name)}.get("reduce")
    tra = {a.family: a for a in derived.of("transform", name)}.get("transform")
    row = {a.family: a for a in derived.of("rms_norm", name)}.get("rms_norm")
    elt = {a.family: a for a in derived.of("silu_and_mul", name)}.get("silu_and_mul")
    pols = {}
    for d in OPS_DTYPES:
        rp0 = _policy(red, d, "plus")
        tp0 = _policy(tra, d, None)
        np0 = _policy(row, d, None)
        ep0 = _policy(elt, d, None)
        sized = []
        for lo, hi in _intervals(rp0, tp0, np0, ep0):  # an op's size is its rows × hidden: its element count
            rp, tp, np_, ep = _at(rp0, lo), _at(tp0, lo), _at(np0, lo), _at(ep0, lo)
            rt = _pick(rp, "threads", DEFAULT_THREADS, f"reduce@{name}")
            vec = _pick(tp, "vec", None, f"transform@{name}") or _pick(rp, "vec", DEFAULT_VEC, f"reduce@{name}")
            tt = _pick(tp, "threads", DEFAULT_THREADS, f"transform@{name}")
            bif = _pick(tp, "bytes_in_flight", DEFAULT_BYTES_IN_FLIGHT, f"transform@{name}")
            pol = derive_policy(d, hardware.warp_size, hardware.max_threads_per_block, rt, vec, tt, bif)
            pol = own_policy(pol, d, np_, ep, name)
            sized.append(pol.model_copy(update={"lo": lo, "hi": hi}))
        pols[d] = sized[0] if len(sized) == 1 else sized[0].model_copy(update={"buckets": sized})
    return OpsTarget(name=name, warp_size=hardware.warp_size, cxx=hardware.toolchain.cxx, policies=pols)


def own_policy(pol: OpsPolicy, dtype: str, row, elt, hw_name: str) -> OpsPolicy:
    """``pol`` with the numbers of the ops' own policies (``algorithm rms_norm`` / ``silu_and_mul``,
    resolved, or one size bucket of them) in place of the derived ones; their records compute them."""
    update = {}
    for rec, src, names in (
        (ROW.RECORD, row, ("row_threads", "vec", "items_min", "max_items")),
        (ELT.RECORD, elt, ("elt_threads", "elt_vec", "elt_items")),
    ):
        if src is None:
            continue
        where = f"{rec.name}@{hw_name}.{src.key}"
        given = {dim: r for dim, r in src.values.items()}
        p = rec.read(lambda dim, default=None: given[dim].value if dim in given else default)
        for field, prm in zip(names, rec.params(None, dtype, p)):
            dim = {"kRowThreads": "threads", "kEltThreads": "threads", "kItemsMin": "items", "kEltItems": "items"}.get(
                prm.cname
            )
            r = given.get(dim) if dim else None
            if r is not None:  # the policy's own value: its origin (spec, inherited, measured) and rule
                update[field] = Resolved(
                    value=prm.value,
                    origin=r.origin,
                    rule=f"{where}.{dim} ({r.rule})",
                    where=r.where,
                    measured=r.measured,
                    stale=r.stale,
                )
            else:
                update[field] = Resolved(
                    value=prm.value,
                    origin="derived",
                    rule=f"{rec.name}: {prm.rule}",
                    inputs={k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in prm.inputs}
                    | {"policy": where},
                )
    return pol.model_copy(update=update)


def tune_target(hardware, family: str, dtype: str, values: dict) -> OpsTarget:
    """The ops of one element type for `muh tune`: ``family``'s (rms_norm or silu_and_mul) numbers from
    ``values`` (a candidate's resolved values, {dim: value}), the rest derived from CUB's defaults
    (they are not what the candidate measures)."""
    d = lambda v, what: _src(v, "default", what)  # noqa: E731
    pol = derive_policy(
        dtype,
        hardware.warp_size,
        hardware.max_threads_per_block,
        d(DEFAULT_THREADS, "default reduce threads"),
        d(DEFAULT_VEC, "default vec"),
        d(DEFAULT_THREADS, "default transform threads"),
        d(DEFAULT_BYTES_IN_FLIGHT, "default bytes_in_flight"),
    )
    given = _Given(
        {k: Resolved(value=v, origin="spec", rule="tune candidate") for k, v in values.items()}, f"{dtype} (candidate)"
    )
    pol = own_policy(
        pol, dtype, given if family == "rms_norm" else None, given if family == "silu_and_mul" else None, hardware.name
    )
    return OpsTarget(
        name=hardware.name, warp_size=hardware.warp_size, cxx=hardware.toolchain.cxx, policies={dtype: pol}
    )


class _Given:
    """Values read like a resolved policy (``values``, ``key``) by ``own_policy``."""

    def __init__(self, values: dict, key: str):
        self.values, self.key = values, key


def _intervals(*policies) -> list[tuple[int, Optional[int]]]:
    """The size buckets of the ops: every boundary of the given policies' buckets (one interval when
    none has buckets)."""
    cuts = sorted({b.lo for p in policies if p is not None for b in p.buckets} - {0})
    return list(zip([0] + cuts, cuts + [None]))


class _Sized:
    """A resolved policy's size bucket read like a policy (``values``, ``key``) by ``_pick``."""

    def __init__(self, policy, bucket):
        self.values, self.key = bucket.values, f"{policy.key} [{bucket.label}]"


def _at(policy, lo: int):
    """``policy``, or its size bucket holding ``lo`` when it has buckets."""
    if policy is None or not policy.buckets:
        return policy
    return next(_Sized(policy, b) for b in policy.buckets if b.lo <= lo and (b.hi is None or lo < b.hi))


def _policy(alg, dtype: str, op: Optional[str]):
    if alg is None:
        return None
    try:
        return alg.for_type(dtype, op)
    except KeyError:
        return None


def _pick(policy, dim: str, default, where: str) -> Optional[Resolved]:
    r = policy.values.get(dim) if policy is not None else None
    if r is not None:
        return Resolved(value=r.value, origin=r.origin, rule=f"{where}.{policy.key}.{dim} ({r.rule})", where=r.where)
    if default is None:
        return None
    return Resolved(value=default, origin="default", rule=f"default {dim} (no {where} policy)")
