"""`include/muh/tuning/tuning_<family>.cuh`: CCCL-shaped policy structs and selectors.

Per algorithm family in the spec: a plain aggregate ``policy`` struct (one field per tunable
dimension, values already scaled for the element type), ``operator==``, and a constexpr
``policy_selector{type, op}(arch)`` that is an if-ladder over the spec's hardware, newest NVIDIA
arch first, the fallback last — the shape of CCCL main's policy selectors, written in C++14 (no
designated initialisers, no inline variables, no if constexpr, no macros). ``common.cuh`` holds the
shared vocabulary: enumerations, element types, and the hardware table.

Every value carries a comment with its provenance; static_asserts pin each policy to its hardware
(warp multiple, block size limit, and for tile-staging families the tile against shared memory).
This module decides everything; the templates only loop and print.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from decimal import Decimal

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import cxx_str, render
from muh.derive.model import DerivedAlgorithm, Resolved, ResolvedPolicy
from muh.derive.resolve import resolve_query
from muh.diagnostics import Diagnostic, MuhError, Severity
from muh.families import limits
from muh.families.base import BUCKET_SIZES
from muh.schema import catalog, policy_key
from muh.schema.models import Bucket, Delay, Hardware, Spec
from muh.schema.policy_key import Query

OUT = "include/muh/tuning"
VENDOR_ARCH_BASE = 1_000_000  # ids of hardware without a compute capability (compared with ==)
CXX_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t class compl "
    "const constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit "
    "export extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq "
    "nullptr operator or or_eq private protected public register reinterpret_cast return short signed sizeof "
    "static static_assert static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq".split()
)

#: Enumerations shared by all families: (C++ type, doc, catalogue choices).
ENUMS = (
    ("block_load_algorithm", "How a block loads its tile (CUB's BlockLoadAlgorithm)", catalog.LOAD_ALGORITHMS),
    ("block_store_algorithm", "How a block stores its tile (CUB's BlockStoreAlgorithm)", catalog.STORE_ALGORITHMS),
    ("cache_load_modifier", "Cache operator of global loads (CUB's CacheLoadModifier)", catalog.LOAD_MODIFIERS),
    ("cache_store_modifier", "Cache operator of global stores (CUB's CacheStoreModifier)", catalog.STORE_MODIFIERS),
    ("block_reduce_algorithm", "Block-wide reduction (CUB's BlockReduceAlgorithm)", catalog.BLOCK_REDUCE),
    ("block_scan_algorithm", "Block-wide scan (CUB's BlockScanAlgorithm)", catalog.BLOCK_SCAN),
    ("delay_kind", "Decoupled look-back delay; values are the benchmark's dcid ids", catalog.DELAY_KINDS),
    ("transform_algorithm", "DeviceTransform strategy", catalog.TRANSFORM_ALGORITHMS),
    ("histogram_memory", "Where privatised histograms live", catalog.HISTOGRAM_MEMORY),
    ("radix_rank_algorithm", "Radix ranking algorithm", catalog.RADIX_RANK),
    ("scan_stage", "Where a scan tile waits for its look-back (muh's, no CUB counterpart)", catalog.SCAN_STAGES),
)
_ENUM_OF_DIM = {
    "load": "block_load_algorithm",
    "store": "block_store_algorithm",
    "modifier": "cache_load_modifier",
    "store_modifier": "cache_store_modifier",
    "algorithm": "transform_algorithm",
    "memory": "histogram_memory",
    "rank": "radix_rank_algorithm",
    "stage": "scan_stage",
}


def ident(name: str) -> str:
    """A C++ identifier for a spec name (keywords get a trailing underscore)."""
    return name + "_" if name in CXX_KEYWORDS else name


@dataclass(frozen=True)
class Field:
    name: str
    cxx_type: str
    doc: str


@dataclass(frozen=True)
class Value:
    cxx: str
    comment: tuple[str, ...]  # its provenance, as comment lines (wrapped to the line limit)


@dataclass(frozen=True)
class Case:
    """One policy on one hardware and the calls (type, operator, offset width) that select it."""

    key: str  # the calls, in words (for the comment above the policy)
    condition: str | None  # C++ condition on the selector's fields; None: every remaining call
    values: tuple[Value, ...]
    subs: tuple[tuple[str, tuple[Value, ...]], ...]  # (sub-policy, its values), in struct order
    asserts: tuple[tuple[str, str], ...]  # (C++ condition, message)


@dataclass(frozen=True)
class SubPolicy:
    """A named sub-policy (radix_sort's onesweep, …): its own struct, a member of the policy."""

    name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Branch:
    hardware: str
    condition: str | None  # None: the unconditional fallback
    comment: str
    cases: tuple[Case, ...]


@dataclass(frozen=True)
class HardwareRow:
    name: str
    arch: int
    warp_size: int
    smem_per_block: int
    max_threads_per_block: int
    comment: str


def arch_ids(hardware: dict[str, Hardware]) -> dict[str, int]:
    """SM x 10 (CUB's numbering) for NVIDIA hardware; 1000000 + n for the others, in name order."""
    ids, n = {}, 0
    for name in sorted(hardware):
        cc = hardware[name].compute_capability
        if cc:
            ids[name] = cc * 10
        else:
            ids[name] = VENDOR_ARCH_BASE + n
            n += 1
    return ids


def _block_enum(family: str) -> str:
    return (
        "block_reduce_algorithm"
        if catalog.FAMILIES[family].block_choices == catalog.BLOCK_REDUCE
        else "block_scan_algorithm"
    )


def fields_of(family: str, algorithms: list[DerivedAlgorithm], sub: str | None = None) -> list[Field]:
    """The family's dimensions that any policy (or sub-policy ``sub``) in the spec sets.

    ``scaling`` is applied by derive, not emitted."""
    used = {d for a in algorithms for p in a.policies.values() for d in (p.subs.get(sub, {}) if sub else p.values)}
    out = []
    for dim in catalog.FAMILIES[family].dims:
        if dim == "scaling" or dim not in used:
            continue
        kind = catalog.DIMS[dim].kind
        cxx = {"int": "int", "bytes": "int", "bool": "bool", "delay": "delay_policy"}.get(kind)
        if kind == "enum":
            cxx = _block_enum(family) if dim == "block" else _ENUM_OF_DIM[dim]
        doc = catalog.DIMS[dim].doc.replace(" (nominal for 4-byte items)", "")
        out.append(Field(ident(dim), cxx, doc + (" (bytes)" if kind == "bytes" else "")))
    return out


def subs_of(family: str, algorithms: list[DerivedAlgorithm]) -> list[SubPolicy]:
    names = sorted({s for a in algorithms for p in a.policies.values() for s in p.subs})
    return [SubPolicy(ident(n), tuple(fields_of(family, algorithms, n))) for n in names]


def provenance(ctx: BuildContext, dim: str, r: Resolved, per_size: bool = False) -> str:
    """Where a value came from: its rule and inputs, the measurement (not the spec line: a comment above
    it would change the header; `muh explain` shows the line). ``per_size``: the
    header scales the value itself, so the element size is left out."""
    if r.inputs:
        i = r.inputs
        rule = r.rule.split(":", 1)[0]
        if per_size:
            text = f"{rule} of T4={i.get('T4')}, I4={i.get('I4')}" + (
                f" (smem {i.get('smem')} B, warp {i.get('warp')})" if "smem" in i and dim == "threads" else ""
            )
        elif "value" in i:
            text = f"{rule}(T4={i.get('T4')}, I4={i.get('I4')}; key {i.get('size')} B, value {i.get('value')} B)"
        else:
            text = (
                f"{rule}(T4={i.get('T4')}, I4={i.get('I4')}, {i.get('size')} B; smem {i.get('smem')} B, "
                f"warp {i.get('warp')})"
            )
    else:
        text = r.rule
    if r.inputs and r.inputs.get(f"{dim}_from"):  # the bucket the nominal value was written in
        text += f" ({r.inputs[f'{dim}_from']})"
    if r.measured is not None:
        m = r.measured
        nums = " ".join(f"{x:.6f}" for x in (m.score, m.min, m.mean, m.max) if x is not None)
        text += f"; measured {m.variant} {nums}".rstrip() + f" on {m.device}"
    if r.stale:
        text += " (STALE: hardware changed since the measurement)"
    return text


def cxx_value(field: Field, value) -> str:
    if isinstance(value, Delay):
        return f"delay_policy{{delay_kind::{ident(value.kind)}, {int(value.ns)}, {int(value.l2_write_latency)}}}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Decimal)):
        return str(int(value))
    return f"{field.cxx_type}::{ident(str(value))}"


LINE_LIMIT = 120  # columns, as in CCCL's own headers


def comment_lines(text: str, indent: int) -> tuple[str, ...]:
    """``// text`` wrapped so that no line passes LINE_LIMIT columns at ``indent``."""
    width = LINE_LIMIT - indent - 3
    return tuple(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or ("",)


def _values(
    ctx: BuildContext, family: str, what: str, hw: Hardware, fields, resolved: dict[str, Resolved]
) -> tuple[tuple[str, str], ...]:
    """(C++ value, provenance text) per field."""
    values = []
    for f in fields:
        dim = f.name.rstrip("_")
        r = resolved.get(dim)
        if r is None:
            meaning = catalog.DIMS[dim].unset if dim in catalog.DIMS else None
            if meaning is not None:  # zero is the header's "unset", and the kernels know what it means
                values.append((f"{f.cxx_type}{{}}", f"{dim}: unset (0): {meaning}"))
                continue
            akey = next(
                (k for k, a in sorted(ctx.spec.algorithms.items()) if a.family == family and a.on == hw.name), None
            )
            seen = any(
                d.code == "W-CXX-UNSET" and d.message.startswith(f"{family} on {hw.name}: `{dim}` ")
                for d in ctx.diagnostics
            )
            if not seen:  # once per algorithm and dimension, at the algorithm block (not once per type)
                ctx.diagnostics.append(
                    Diagnostic(
                        "W-CXX-UNSET",
                        f"{family} on {hw.name}: `{dim}` is not set (first for {what.split(' ', 1)[-1]}); "
                        "the tuning header holds a zero value",
                        ctx.spec.span_of(("algorithms", akey)) if akey else None,
                        severity=Severity.warning,
                        hint=f"set `{dim}` in the `policy default` of this algorithm",
                    )
                )
            values.append((f"{f.cxx_type}{{}}", f"{dim}: not set in the spec (zero)"))
            continue
        scaled = scaled_expr(family, dim, r)
        if scaled is not None:
            values.append((scaled, f"{dim}: {provenance(ctx, dim, r, per_size=True)}"))
            continue
        values.append((cxx_value(f, r.value), f"{dim}: {provenance(ctx, dim, r)}"))
    return tuple(values)


SIZE = "element_size(type)"
VALUE_SIZE = "element_size(value_type())"  # by-key families: the values' size


def scaled_expr(family: str, dim: str, r: Resolved) -> str | None:
    """The C++ expression that scales a nominal value for the selector's element type (CUB's rule, as
    common.cuh defines it), or None for a value that is not scaled by the element size."""
    if dim not in ("threads", "items") or not r.inputs or "T4" not in r.inputs:
        return None
    rule, i = r.rule.split(":", 1)[0], r.inputs
    t4, i4 = i["T4"], i["I4"]
    if rule in ("mem_bound", "reg_bound"):
        if dim == "threads":
            return f"{rule}_threads({t4}, {i4}, {SIZE}, {i['smem']}, {i['warp']})"
        return f"{rule}_items({i4}, {SIZE})"
    if dim == "threads":
        return None  # the other rules keep T4
    if rule in ("nominal_4b", "nominal_8b"):
        return f"{rule}_items({i4}, {SIZE})"
    if rule in ("combined", "combined_ceil"):
        fam = catalog.FAMILIES[family]
        value = (VALUE_SIZE if fam.key_value else SIZE) if fam.value_bytes is None else str(i["value"])
        return f"combined_items({i4}, {SIZE}, {value}, {'true' if rule == 'combined_ceil' else 'false'})"
    return None


_SOURCE = re.compile(r"^(?P<head>.*?) at (?P<file>[^\s;]+):(?P<line>\d+)(?P<tail>(?:; .*)?)$")


def merged_comment(texts: list[str]) -> str:
    """One provenance for a value several calls share: texts that differ only in the spec line they came
    from name the lines together (``… at specs/x.muh:12, 40``); other differences are joined with `` | ``."""
    texts = list(dict.fromkeys(texts))
    dim = texts[0].split(": ", 1)[0] + ": "
    if len(texts) > 1 and all(t.startswith(dim) for t in texts):
        return dim + merged_comment([t[len(dim) :] for t in texts])
    groups: dict[tuple, list[str]] = {}
    for text in texts:
        m = _SOURCE.match(text)
        key = (m["head"], m["file"], m["tail"]) if m else (text, None, "")
        groups.setdefault(key, []).append(m["line"] if m else "")
    return " | ".join(
        f"{head} at {file}:{', '.join(lines)}{tail}" if file else head for (head, file, tail), lines in groups.items()
    )


def _finish(entries: list[tuple[tuple[str, str], ...]], indent: int) -> tuple[Value, ...]:
    """The values of a policy several calls share (their provenance merged), comments wrapped."""
    out = []
    for i, (cxx, _) in enumerate(entries[0]):
        text = merged_comment([e[i][1] for e in entries])
        out.append(_inline(Value(cxx, comment_lines(text, indent)), indent))
    return tuple(out)


def _inline(v: Value, indent: int) -> Value:
    """A value whose one-line comment fits beside it keeps it there (``cxx, // comment``)."""
    if len(v.comment) == 1 and indent + len(v.cxx) + 5 + len(v.comment[0]) <= LINE_LIMIT:
        return Value(f"{v.cxx}, // {v.comment[0]}", ())
    return Value(v.cxx + ",", v.comment)


def _asserts(family: str, label: str, hw: Hardware, hw_id: str, names: set[str], sel: str, dtype: str):
    if "threads" not in names:
        return []
    operands = {
        "threads": f"{sel}.threads",
        "items": f"{sel}.items",
        "size": f"element_size(element::{ident(dtype)})",
        **{f: f"hardware::{hw_id}.{f}" for f in ("warp_size", "max_threads_per_block", "smem_per_block")},
    }
    messages = {
        "warp": f"{label}: threads must be a multiple of the warp size ({hw.warp_size})",
        "block": f"{label}: threads exceed max_threads_per_block ({hw.max_threads_per_block})",
        "tile": f"{label}: {TILE_MESSAGE} ({hw.smem_per_block} B)",
    }
    held = limits.applying(hw.cub_parity, catalog.FAMILIES[family].stages_tile)
    return [(limits.CXX[n].format(**operands), messages[n]) for n in held if n != "tile" or "items" in names]


TILE_MESSAGE = "the tile must fit smem_per_block"


_LOGICAL = re.compile(r" (\|\||&&) ")
_ARITHMETIC = re.compile(r" (\|\||&&|\*|%|<=) ")


def wrap_expr(expr: str, indent: int, cont: int, split: re.Pattern = _LOGICAL) -> str:
    """A C++ expression broken before binary operators (``split``) so that no line passes LINE_LIMIT
    columns; the first line starts at column ``indent``, continuation lines at ``cont``."""
    parts = split.split(expr)
    lines, line = [], parts[0]
    for op, operand in zip(parts[1::2], parts[2::2]):
        piece = f" {op} {operand}"
        if (cont if lines else indent) + len(line) + len(piece) > LINE_LIMIT:
            lines.append(line)
            line = f"{op} {operand}"
        else:
            line += piece
    lines.append(line)
    return ("\n" + " " * cont).join(lines)


def _message(text: str) -> str:
    """A static_assert message as C++ string literal(s), split after `: ` when the line would be too long."""
    if 14 + len(cxx_str(text)) + 2 <= LINE_LIMIT or ": " not in text:
        return cxx_str(text)
    head, _, tail = text.rpartition(": ")
    return cxx_str(head + ": ") + "\n              " + cxx_str(tail)


def _equality(members: list[str]) -> str:
    return wrap_expr(" && ".join(f"a.{m} == b.{m}" for m in members) or "true", 9, 9)


def selector_call(q: Query, hw_id: str, at: dict[str, int] | None = None, keys: tuple[str, ...] = ()) -> str:
    """A selector's call in C++; its members in the one order: type, op, offset bits, then the problem sizes
    ``keys`` its buckets test, each from ``at`` (0 where it names none; families with size buckets), or the
    values' type (by-key families)."""
    size = "" if at is None else "".join(f", {at.get(z, 0)}LL" for z in keys)
    value = f", element::{ident(q.pair)}" if q.pair else ""
    return (
        f"policy_selector{{element::{ident(q.dtype)}, operation::{ident(q.op)}, {q.offset}{size}{value}}}"
        f"(hardware::{hw_id}.arch)"
    )


def sized(algorithms: list[DerivedAlgorithm]) -> list[str]:
    """The problem sizes a family's selector takes (`elements`, `k` …, muh/families/base.py's order): those
    the buckets of its policies test; empty when no policy has buckets."""
    used = {b.size for a in algorithms for p in a.policies.values() for b in p.buckets}
    return [z for z in BUCKET_SIZES if z in used] + sorted(used - set(BUCKET_SIZES))


def queries(spec: Spec, family: str) -> tuple[Query, ...]:
    """Every call a family's selector answers: each element type x operator x offset width — the
    catalogue's types, and the spec's own where an algorithm of the family lists them (a record has no
    radix sort unless the spec says so)."""
    listed = {t for a in spec.algorithms.values() if a.family == family for t in a.types}
    types = [t for t in spec.element_sizes() if t in catalog.DTYPES or t in listed]
    return tuple(Query(t, o, w) for t in types for o in catalog.OPS for w in policy_key.OFFSETS.values())


def _bucket_condition(size: str, lo: int, hi: int | None) -> str:
    parts = ([f"{size} >= {lo}LL"] if lo else []) + ([f"{size} < {hi}LL"] if hi is not None else [])
    return " && ".join(parts) or "true"


def pair_queries(spec: Spec, family: str) -> tuple[Query, ...]:
    """By-key families: every call whose values are of another type — each key type x each type an
    algorithm of the family lists in `values` x operator x offset width."""
    values = [
        v for v in spec.element_sizes() if any(v in a.values for a in spec.algorithms.values() if a.family == family)
    ]
    return tuple(Query(q.dtype, q.op, q.offset, v) for v in values for q in queries(spec, family) if q.dtype != v)


def _calls(spec: Spec, akey: str, calls=None) -> list[tuple[set, Query, ResolvedPolicy | None]]:
    """Distinct resolutions of every call: (the calls, a representative call, its policy).

    A call resolves through the policy keys that cover it; calls covered by the same keys get the
    same policy, so each distinct key set is resolved once. A type the spec does not list gets the
    `default` policy scaled for its size (CUB's behaviour for an untuned type), never zeros."""
    alg = spec.algorithms[akey]
    seen: dict[tuple[str, ...], list[Query]] = {}
    for q in queries(spec, alg.family) if calls is None else calls:
        seen.setdefault((q.dtype, q.pair) + tuple(policy_key.covering(alg.policies, q)), []).append(q)
    out = []
    for calls in seen.values():
        try:
            pol = resolve_query(spec, akey, calls[0])
        except MuhError:
            pol = None  # this type cannot run here (its tile overflows): left to the fallback
        out.append(({(q.dtype, q.op, q.offset, q.pair) for q in calls}, calls[0], pol))
    return out


def _label(spec: Spec, akey: str, q: Query) -> str:
    """The most specific policy key of the spec that covers the call (`default` if none)."""
    return policy_key.covering(spec.algorithms[akey].policies, q)[-1]


def _ops_condition(ops: frozenset[str]) -> str | None:
    everything = frozenset(catalog.OPS)
    if ops == everything:
        return None
    for name, members in policy_key.OP_CLASSES.items():
        if ops == frozenset(members):
            return f"is_{name}(op)"
        if everything - ops == frozenset(members):
            return f"!is_{name}(op)"
    if len(everything - ops) < len(ops):
        return " && ".join(f"op != operation::{ident(o)}" for o in catalog.OPS if o not in ops)
    return " || ".join(f"op == operation::{ident(o)}" for o in catalog.OPS if o in ops)


def _calls_condition(calls: set[tuple[str, str, int]], sizes: dict[str, int]) -> str:
    """A C++ condition true for exactly ``calls`` (type, operator, offset width) among ``queries``
    (``sizes``: every element type's size)."""
    by_type: dict[str, frozenset] = {}
    for t, o, w in calls:
        by_type.setdefault(t, set()).add((o, w))
    shapes: dict[frozenset, list[str]] = {}
    for t in sizes:
        if t in by_type:
            shapes.setdefault(frozenset(by_type[t]), []).append(t)
    terms = []
    for shape, types in shapes.items():
        parts = []
        widths_ = {sizes[t] for t in types}
        if set(types) != set(sizes):
            same_size = {t for t in sizes if sizes[t] in widths_}
            if same_size == set(types):
                parts.append(" || ".join(f"element_size(type) == {n}" for n in sorted(widths_)))
            else:
                parts.append(" || ".join(f"type == element::{ident(t)}" for t in types))
        widths = sorted({w for _, w in shape})
        ops_per_width = {w: frozenset(o for o, ww in shape if ww == w) for w in widths}
        if len(set(ops_per_width.values())) == 1:
            cond = _ops_condition(ops_per_width[widths[0]])
            if cond:
                parts.append(cond)
            if widths != sorted(policy_key.OFFSETS.values()):
                parts.append(f"offset_bits == {widths[0]}")
        else:
            alts = []
            for w in widths:
                cond = _ops_condition(ops_per_width[w])
                alts.append(f"offset_bits == {w}" + (f" && ({cond})" if cond else ""))
            parts.append(" || ".join(f"({a})" for a in alts))
        terms.append(" && ".join(f"({p})" if " || " in p and len(parts) > 1 else p for p in parts) or "true")
    return " || ".join(f"({t})" if " && " in t and len(terms) > 1 else t for t in terms)


def _branches(
    ctx: BuildContext, family: str, algorithms: list[DerivedAlgorithm], fields: list[Field], subs: list[SubPolicy]
) -> list[Branch]:
    # Vendor hardware (equality) first, then NVIDIA newest first; the last branch is also the fallback.
    order = sorted(
        algorithms,
        key=lambda a: (
            a.hardware.compute_capability is not None,
            -(a.hardware.compute_capability or 0),
            a.hardware.name,
        ),
    )
    every = ctx.spec.element_sizes()
    sizes = {q.dtype: every[q.dtype] for q in queries(ctx.spec, family)}
    out = []
    sized_family = False
    for alg in order:
        hw = alg.hardware
        hw_id = ident(hw.name)
        akey = f"{family}@{hw.name}"
        cases = []
        for value in dict.fromkeys(q.pair for q in pair_queries(ctx.spec, family)):
            calls = [q for q in pair_queries(ctx.spec, family) if q.pair == value]
            got, sized = _cases(
                ctx,
                family,
                akey,
                hw,
                fields,
                subs,
                every,
                sizes,
                _calls(ctx.spec, akey, calls),
                f"value != type && value == element::{ident(value)}",
            )
            cases += got
            sized_family = sized_family or sized
        got, sized = _cases(ctx, family, akey, hw, fields, subs, every, sizes, _calls(ctx.spec, akey), None)
        cases += got
        sized_family = sized_family or sized
        what = (
            f"compute capability {hw.compute_capability // 10}.{hw.compute_capability % 10}"
            if hw.compute_capability
            else f"{hw.vendor} {hw.arch}"
        )
        compare = ">=" if hw.compute_capability else "=="
        out.append(Branch(hw_id, f"arch {compare} hardware::{hw_id}.arch", f"{hw.name}: {what}", tuple(cases)))
    return out, sized_family


def _cases(
    ctx: BuildContext, family: str, akey: str, hw: Hardware, fields, subs, every, sizes, resolved, guard: str | None
) -> tuple[list[Case], bool]:
    """The cases of one hardware branch for ``resolved`` calls, and whether any is a size bucket's;
    ``guard``: a condition every case adds (the values' type of key/value calls; then no case is
    unconditional)."""
    hw_id = ident(hw.name)
    keys = tuple(sized(ctx.derived.of(family)))
    groups: dict[tuple, list] = {}
    members: dict[tuple, set] = {}
    for calls, q, pol in resolved:
        if pol is None:
            continue
        sub_values = tuple(
            (
                sp.name,
                _values(
                    ctx, family, f"{family} {q.dtype} {sp.name}", hw, sp.fields, pol.subs.get(sp.name.rstrip("_"), {})
                ),
            )
            for sp in subs
        )
        # A size bucket is its own case: (size, lo, hi) joins the key; None: every size.
        sized_values = [((b.size, b.lo, b.hi), b.values) for b in pol.buckets] or [(None, pol.values)]
        for bounds, resolved_values in sized_values:
            values = _values(ctx, family, f"{family} {q.dtype}", hw, fields, resolved_values)
            # Calls whose policies hold the same values share one `return`, whatever spec lines they came from.
            same = (tuple(v for v, _ in values), tuple((n, tuple(v for v, _ in vs)) for n, vs in sub_values), bounds)
            groups.setdefault(same, []).append((q, pol, values, sub_values))
            members.setdefault(same, set()).update(calls)
    # size buckets first, so that the fallback (the last case) never needs a size
    ordered = sorted(groups, key=lambda g: (g[2] is None, len(members[g])))
    cases = []
    for i, g in enumerate(ordered):
        last = i == len(ordered) - 1 and guard is None
        entries = groups[g]
        labels = sorted({_label(ctx.spec, akey, q) for q, *_ in entries})
        bounds = g[2]  # the size bucket's (size, lo, hi), None: every size
        bucket = None if bounds is None else Bucket(size=bounds[0], lo=bounds[1], hi=bounds[2]).label
        if bucket is not None:
            labels = [f"{lab}, {bucket}" for lab in labels]
        values = _finish([e[2] for e in entries], 10)
        sub_values = tuple((sp.name, _finish([e[3][k][1] for e in entries], 12)) for k, sp in enumerate(subs))
        # The case's values depend on the call only through the element size: checked once per size.
        by_size: dict[int, Query] = {}
        for q in sorted(e[0] for e in entries):
            by_size.setdefault(every[q.dtype], q)
        threads_scaled = "threads(" in repr(g)  # a threads value is an expression of the element size
        asserts = []
        for n, size in enumerate(sorted(by_size)):
            q = by_size[size]
            sel = selector_call(q, hw_id, None if bounds is None else {bounds[0]: bounds[1]}, keys)
            label = (
                f"{family} {q.dtype}"
                + (f":{q.pair}" if q.pair else "")
                + ("" if bucket is None else f" ({bucket})")
                + f" on {hw.name}"
            )
            got = _asserts(family, label, hw, hw_id, {f.name for f in fields}, sel, q.dtype)
            for sp in subs:
                got += _asserts(
                    family, f"{label}, {sp.name}", hw, hw_id, {f.name for f in sp.fields}, f"{sel}.{sp.name}", q.dtype
                )
            # Threads that do not depend on the size are checked once; tiles at every size.
            asserts += got if n == 0 or threads_scaled else [a for a in got if TILE_MESSAGE in a[1]]
        cond = None
        if not last:
            cond = _calls_condition({c[:3] for c in members[g]}, sizes)
            if bounds is not None:
                cond = (f"({cond})" if " || " in cond else cond) + f" && {_bucket_condition(*bounds)}"
            cond = f"{guard} && ({cond})" if guard else cond
            cond = wrap_expr(cond + ")", 10, 10)[:-1]  # the template closes `if (`: one column reserved
        asserts = tuple((wrap_expr(c, 14, 18, _ARITHMETIC), _message(m)) for c, m in dict.fromkeys(asserts))
        cases.append(Case(", ".join(labels), cond, values, sub_values, asserts))
    return cases, any(g[2] is not None for g in groups)


def _hardware_rows(ctx: BuildContext, ids: dict[str, int]) -> list[HardwareRow]:
    rows = []
    for name, hw in sorted(ctx.spec.hardware.items()):
        note = (
            "CUB parity: policies scaled with 49152 B / 32 threads"
            if hw.cub_parity
            else "policies scaled with this hardware's limits"
        )
        rows.append(
            HardwareRow(
                ident(name),
                ids[name],
                hw.warp_size,
                int(hw.smem_per_block),
                hw.max_threads_per_block,
                f"{hw.vendor} {hw.arch}; {note}",
            )
        )
    return rows


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    families = sorted({a.family for a in ctx.derived.algorithms.values()})
    if not families:
        return []
    too_old = sorted(h.name for h in ctx.spec.hardware.values() if h.toolchain.cxx < 14)
    for name in too_old:
        ctx.diagnostics.append(
            Diagnostic(
                "E-CXX-LEVEL",
                f"hardware `{name}`: the tuning headers need C++14 (the toolchain says C++11)",
                ctx.spec.span_of(("hardware", name, "toolchain", "cxx")),
                hint="set `cxx = 14` if the compiler allows it",
            )
        )
    ids = arch_ids(ctx.spec.hardware)
    dtypes = [(ident(k), v) for k, v in ctx.spec.element_sizes().items()]
    files = [
        GeneratedFile(
            f"{OUT}/common.cuh",
            render(
                "muh.codegen.cxx",
                "common.cuh.j2",
                header=ctx.header("//"),
                enums=[(name, doc, [ident(c) for c in choices]) for name, doc, choices in ENUMS],
                dtypes=dtypes,
                ops=[ident(o) for o in catalog.OPS],
                hardware=_hardware_rows(ctx, ids),
                op_classes=[(name, [ident(o) for o in ops]) for name, ops in policy_key.OP_CLASSES.items()],
            ),
        )
    ]
    for family in families:
        algs = ctx.derived.of(family)
        fields = fields_of(family, algs)
        subs = subs_of(family, algs)
        branches, _ = _branches(ctx, family, algs, fields, subs)
        files.append(
            GeneratedFile(
                f"{OUT}/tuning_{family}.cuh",
                render(
                    "muh.codegen.cxx",
                    "tuning.cuh.j2",
                    header=ctx.header("//"),
                    family=ident(family),
                    doc=catalog.FAMILIES[family].doc,
                    fields=fields,
                    subs=subs,
                    branches=branches,
                    fallback=branches[-1],
                    sized=sized(algs),
                    size_docs={z: b.doc for z, b in BUCKET_SIZES.items()},
                    key_value=catalog.FAMILIES[family].key_value,
                    eq=_equality([f.name for f in fields] + [sp.name for sp in subs]),
                    sp_eq={sp.name: _equality([f.name for f in sp.fields]) for sp in subs},
                ),
            )
        )
    return files
