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

from dataclasses import dataclass
from decimal import Decimal

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.derive.model import DerivedAlgorithm, Resolved, ResolvedPolicy
from muh.diagnostics import Diagnostic, Severity
from muh.schema import catalog
from muh.schema.models import Delay, Hardware

OUT = "include/muh/tuning"
VENDOR_ARCH_BASE = 1_000_000  # ids of hardware without a compute capability (compared with ==)
CXX_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t class compl "
    "const constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit "
    "export extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq "
    "nullptr operator or or_eq private protected public register reinterpret_cast return short signed sizeof "
    "static static_assert static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq".split())

#: Enumerations shared by all families: (C++ type, doc, catalogue choices).
ENUMS = (
    ("block_load_algorithm", "How a block loads its tile (CUB's BlockLoadAlgorithm)", catalog.LOAD_ALGORITHMS),
    ("block_store_algorithm", "How a block stores its tile (CUB's BlockStoreAlgorithm)", catalog.STORE_ALGORITHMS),
    ("cache_load_modifier", "Cache operator of global loads (CUB's CacheLoadModifier)", catalog.LOAD_MODIFIERS),
    ("block_reduce_algorithm", "Block-wide reduction (CUB's BlockReduceAlgorithm)", catalog.BLOCK_REDUCE),
    ("block_scan_algorithm", "Block-wide scan (CUB's BlockScanAlgorithm)", catalog.BLOCK_SCAN),
    ("delay_kind", "Decoupled look-back delay; values are the benchmark's dcid ids", catalog.DELAY_KINDS),
    ("transform_algorithm", "DeviceTransform strategy", catalog.TRANSFORM_ALGORITHMS),
    ("histogram_memory", "Where privatised histograms live", catalog.HISTOGRAM_MEMORY),
    ("radix_rank_algorithm", "Radix ranking algorithm", catalog.RADIX_RANK),
)
_ENUM_OF_DIM = {"load": "block_load_algorithm", "store": "block_store_algorithm", "modifier": "cache_load_modifier",
                "algorithm": "transform_algorithm", "memory": "histogram_memory", "rank": "radix_rank_algorithm"}


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
    comment: str


@dataclass(frozen=True)
class Case:
    """One element type (and optionally one operator) on one hardware."""
    key: str
    element: str
    op: str | None
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
    return "block_reduce_algorithm" if catalog.FAMILIES[family].block_choices == catalog.BLOCK_REDUCE else "block_scan_algorithm"


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


def _where(ctx: BuildContext, where: str | None) -> str:
    """`specs/x.muh:12:7` whatever path the spec was loaded from (output must not depend on it)."""
    if not where:
        return ""
    parts = where.rsplit(":", 2)
    return f"{ctx.spec_label}:{parts[1]}" if len(parts) == 3 else where


def provenance(ctx: BuildContext, dim: str, r: Resolved) -> str:
    if r.inputs:
        i = r.inputs
        rule = r.rule.split(":", 1)[0]
        text = f"{rule}(T4={i.get('T4')}, I4={i.get('I4')}, {i.get('size')} B; smem {i.get('smem')} B, warp {i.get('warp')})"
    else:
        text = r.rule
    where = _where(ctx, r.where)
    if where:
        text += f" at {where}"
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


def _values(ctx: BuildContext, what: str, hw: Hardware, fields, resolved: dict[str, Resolved]) -> tuple[Value, ...]:
    values = []
    for f in fields:
        dim = f.name.rstrip("_")
        r = resolved.get(dim)
        if r is None:
            ctx.diagnostics.append(Diagnostic(
                "W-CXX-UNSET", f"{what} on {hw.name}: `{dim}` is not set; the header holds a zero value",
                severity=Severity.warning, hint=f"set `{dim}` in the `policy default` of this algorithm"))
            values.append(Value(f"{f.cxx_type}{{}}", f"{dim}: not set in the spec (zero)"))
            continue
        values.append(Value(cxx_value(f, r.value), f"{dim}: {provenance(ctx, dim, r)}"))
    return tuple(values)


def _asserts(family: str, label: str, hw: Hardware, hw_id: str, names: set[str], sel: str, dtype: str):
    if "threads" not in names:
        return []
    out = [(f"{sel}.threads % hardware::{hw_id}.warp_size == 0",
            f"{label}: threads must be a multiple of the warp size ({hw.warp_size})"),
           (f"{sel}.threads <= hardware::{hw_id}.max_threads_per_block",
            f"{label}: threads exceed max_threads_per_block ({hw.max_threads_per_block})")]
    if catalog.FAMILIES[family].stages_tile and "items" in names:
        out.append((f"{sel}.threads * {sel}.items * element_size(element::{ident(dtype)}) <= hardware::{hw_id}.smem_per_block",
                    f"{label}: the tile must fit smem_per_block ({hw.smem_per_block} B)"))
    return out


def _case(ctx: BuildContext, family: str, hw: Hardware, hw_id: str, fields: list[Field], subs: list[SubPolicy],
          pol: ResolvedPolicy, selector: str | None) -> Case:
    label = f"{family} {pol.key} on {hw.name}"
    values = _values(ctx, f"{family} {pol.key}", hw, fields, pol.values)
    sub_values = tuple((sp.name, _values(ctx, f"{family} {pol.key} {sp.name}", hw, sp.fields,
                                         pol.subs.get(sp.name.rstrip("_"), {}))) for sp in subs)
    asserts = []
    if selector is not None:
        asserts += _asserts(family, label, hw, hw_id, {f.name for f in fields}, selector, pol.dtype)
        for sp in subs:
            asserts += _asserts(family, f"{label}, {sp.name}", hw, hw_id, {f.name for f in sp.fields},
                                f"{selector}.{sp.name}", pol.dtype)
    return Case(pol.key, ident(pol.dtype), ident(pol.op) if pol.op else None, values, sub_values, tuple(asserts))


def _other_op(alg: DerivedAlgorithm, dtype: str) -> str | None:
    """An operator that reaches the type-only policy of ``dtype`` (one without a `dtype.op` policy)."""
    taken = {p.op for p in alg.policies.values() if p.dtype == dtype and p.op}
    return next((op for op in catalog.OPS if op not in taken), None)


def _branches(ctx: BuildContext, family: str, algorithms: list[DerivedAlgorithm], fields: list[Field],
              subs: list[SubPolicy]) -> list[Branch]:
    # Vendor hardware (equality) first, then NVIDIA newest first; the last branch is also the fallback.
    order = sorted(algorithms, key=lambda a: (a.hardware.compute_capability is not None,
                                              -(a.hardware.compute_capability or 0), a.hardware.name))
    out = []
    for alg in order:
        hw = alg.hardware
        hw_id = ident(hw.name)
        compare = ">=" if hw.compute_capability else "=="
        cases = []
        for key, pol in sorted(alg.policies.items(), key=lambda kv: (kv[1].dtype, kv[1].op is None, kv[1].op or "")):
            reach = pol.op or _other_op(alg, pol.dtype)
            sel = (f"policy_selector{{element::{ident(pol.dtype)}, operation::{ident(reach)}}}(hardware::{hw_id}.arch)"
                   if reach else None)
            cases.append(_case(ctx, family, hw, hw_id, fields, subs, pol, sel))
        what = f"compute capability {hw.compute_capability // 10}.{hw.compute_capability % 10}" if hw.compute_capability else f"{hw.vendor} {hw.arch}"
        out.append(Branch(hw_id, f"arch {compare} hardware::{hw_id}.arch", f"{hw.name}: {what}", tuple(cases)))
    return out


def _hardware_rows(ctx: BuildContext, ids: dict[str, int]) -> list[HardwareRow]:
    rows = []
    for name, hw in sorted(ctx.spec.hardware.items()):
        note = "CUB parity: policies scaled with 49152 B / 32 threads" if hw.cub_parity else "policies scaled with this hardware's limits"
        rows.append(HardwareRow(ident(name), ids[name], hw.warp_size, int(hw.smem_per_block), hw.max_threads_per_block,
                                f"{hw.vendor} {hw.arch}; {note}"))
    return rows


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    families = sorted({a.family for a in ctx.derived.algorithms.values()})
    if not families:
        return []
    too_old = sorted(h.name for h in ctx.spec.hardware.values() if h.toolchain.cxx < 14)
    for name in too_old:
        ctx.diagnostics.append(Diagnostic(
            "E-CXX-LEVEL", f"hardware `{name}`: the tuning headers need C++14 (the toolchain says C++11)",
            ctx.spec.span_of(("hardware", name, "toolchain", "cxx")), hint="set `cxx = 14` if the compiler allows it"))
    ids = arch_ids(ctx.spec.hardware)
    dtypes = [(ident(k), v) for k, v in catalog.DTYPES.items()]
    files = [GeneratedFile(f"{OUT}/common.cuh", render(
        "muh.codegen.cxx", "common.cuh.j2", header=ctx.header("//"), enums=[
            (name, doc, [ident(c) for c in choices]) for name, doc, choices in ENUMS],
        dtypes=dtypes, ops=[ident(o) for o in catalog.OPS], hardware=_hardware_rows(ctx, ids)))]
    for family in families:
        algs = ctx.derived.of(family)
        fields = fields_of(family, algs)
        subs = subs_of(family, algs)
        branches = _branches(ctx, family, algs, fields, subs)
        files.append(GeneratedFile(f"{OUT}/tuning_{family}.cuh", render(
            "muh.codegen.cxx", "tuning.cuh.j2", header=ctx.header("//"), family=ident(family),
            doc=catalog.FAMILIES[family].doc, fields=fields, subs=subs, branches=branches, fallback=branches[-1],
            members=[f.name for f in fields] + [sp.name for sp in subs])))
    return files
