"""`include/muh/cub/tune/<family>.cuh`: policy selectors for CCCL 3.5's tuning API (``cuda::execution::tune``).

Where the spec's CCCL is 3.5 (``toolchain { cccl = "3.5" }``, ``Spec.cccl``), per family CUB 3.5 reads its
tuning from the environment for (``muh.families.cub.SELECTORS``) on the spec's NVIDIA hardware: a stateless
selector templated on the call's types, callable with a ``cuda::compute_capability``, that returns CUB's own
policy struct (``cub::ReducePolicy``) filled from the generated selector
(``include/muh/tuning/tuning_<family>.cuh``) for the spec's hardware at or below that compute capability (the
oldest for any older one: the hubs' ``ChainedPolicy`` ladder, cub_hub.chain). A field muh's spec does not set,
and a call the spec cannot name (an element type without a muh element, an operator outside the catalogue),
takes what CUB's own selector (``policy_selector_from_types``) answers. A convenience entry passes the
selector to CUB's environment overload (``cuda::execution::tune(selector{})``). ``tune/common.cuh`` holds the
vocabulary the hubs' common.cuh has (C++ type → muh element, operator → operation, muh's enumerations in CUB's
spelling), without the 3.0 chain machinery. The look-back families (scan, scan by key, reduce by key, run-length
encode) share ``cub/tune/_lookback.cuh.j2``: CUB 3.5's ``{algorithm, lookback}`` policies, muh's values in the
look-back member, muh's delay as a ``cub::LookbackDelayPolicy`` value (``lookback_delay`` in ``tune/common.cuh``);
DeviceSelect's three families share ``_select.j2``. A policy of structs of different types (radix sort, segmented
sort, segmented radix sort) is written member by member from muh's sub-policies (``Selector.parts``: ``nested``);
one that holds muh's sub-policies in nested structs (batch memcpy) assigns them on CUB's answer (``Selector.subs``:
``_nested``); every other field is CUB's own answer.

This module decides which selectors exist and what each template is given; the templates spell CUB's types.
"""

from __future__ import annotations

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import cub_hub, tuning
from muh.codegen.templates import render
from muh.families import cub
from muh.schema import catalog

OUT = "include/muh/cub/tune"
#: The CCCL the selectors are written for and checked against (tests/codegen/test_cub_selectors*.py).
SELECTOR_CCCL = "3.5"


def selector_families(ctx: BuildContext) -> list[str]:
    """The spec's families that get a selector: its CCCL is the selectors' one, CUB 3.5 reads the family's
    tuning from the environment (``cub.SELECTORS``) and NVIDIA hardware runs it."""
    if ctx.spec.cccl != SELECTOR_CCCL:
        return []
    return [
        f
        for f in sorted({a.family for a in ctx.derived.algorithms.values()})
        if f in cub.SELECTORS and cub_hub.chain(ctx.derived.of(f))
    ]


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    families = selector_families(ctx)
    if not families:
        return []
    wanted = {t for f in families for t in cub.SELECTORS[f].enums.values()}
    # CUB 3.0.1's enumerations the hubs share, then those CCCL 3.5 renamed or added
    enums = [_enum(m, t, pairs) for m, t, pairs in (*cub.cub_enums(), *cub.SELECTOR_ENUMS) if t in wanted]
    out = [
        GeneratedFile(
            f"{OUT}/common.cuh",
            render(
                "muh.codegen.cxx",
                "cub/tune/common.cuh.j2",
                header=ctx.header("//"),
                enums=enums,
                # they declare the enumerations' types (once each: DeviceSelect's families share one)
                headers=list(dict.fromkeys(cub.SELECTORS[f].header for f in families)),
                records=cub_hub.records(ctx),
                cccl=ctx.spec.cccl,
            ),
        )
    ]
    for family in families:
        algs = ctx.derived.of(family)
        fields = {f.name for f in tuning.fields_of(family, algs)}
        sel = cub.SELECTORS[family]
        out.append(
            GeneratedFile(
                f"{OUT}/{family}.cuh",
                render(
                    "muh.codegen.cxx",
                    f"cub/tune/{family}.cuh.j2",
                    header=ctx.header("//"),
                    family=tuning.ident(family),
                    entry=catalog.FAMILIES[family].cub.entry,
                    sel=sel,
                    rungs=cub_hub.chain(algs),
                    passes=[dict(name=p, values=[_value(sel, m, p, fields) for m in sel.fields]) for p in sel.passes],
                    values=[_value(sel, m, None, fields) for m in sel.fields],
                    sized=["0LL" for _ in tuning.sized(algs)],
                    cccl=ctx.spec.cccl,
                    **_nested(family, sel, algs, fields),
                    **nested(family, sel, algs, fields),
                ),
            )
        )
    return out


def _value(sel: cub.Selector, member: cub.Member, pass_name: str | None, fields: set[str]) -> str:
    """One field of a pass (``pass_name``; None: of a policy without passes): muh's value where the spec sets
    the dimension (an enumeration in CUB's type), else CUB's own selector's value of that field (``c``: its
    policy for the same compute capability)."""
    if member.dim not in fields:
        return f"c.{pass_name}.{member.cub}" if pass_name else f"c.{member.cub}"
    if member.dim in catalog.DIMS and catalog.DIMS[member.dim].kind == "delay":  # a LookbackDelayPolicy value
        return f"::muh::cub::tune::lookback_delay(p.{member.dim})"
    if member.dim in sel.enums:
        return f"::muh::cub::tune::to<::{sel.enums[member.dim]}>::from(p.{member.dim})"
    return f"p.{member.dim}"


def _enum(muh: str, cub_type: str, pairs) -> dict:
    return dict(muh=muh, cub=cub_type, pairs=[(tuning.ident(v), c) for v, c in pairs])


def _muh_value(sel: cub.Selector, member: cub.Member, at: str) -> str:
    """muh's value of ``member`` in the selector's policy ``at`` (``p``, ``p.small``), in CUB's type."""
    if member.dim in sel.enums:
        return f"::muh::cub::tune::to<::{sel.enums[member.dim]}>::from({at}.{member.dim})"
    return f"{at}.{member.dim}"


def _nested(family: str, sel: cub.Selector, algs, fields: set[str]) -> dict:
    """What a selector whose policy nests structs needs beyond emit's flat ``values`` and ``passes``: ``muh``,
    muh's value of each top-level field by dimension (None where the spec leaves it unset: the template takes
    CUB's), and ``subs``, per sub-policy of ``sel.subs`` the assignments ``(field below CUB's policy, muh's
    value)`` of the fields the spec sets (the others stay CUB's)."""
    muh = {m.dim: (_muh_value(sel, m, "p") if m.dim in fields else None) for m in sel.fields}
    if not sel.subs:
        return dict(muh=muh, subs=[])
    have = {sp.name: {f.name for f in sp.fields} for sp in tuning.subs_of(family, algs)}
    subs = [
        dict(
            name=s.name,
            path=s.path,
            sets=[
                (f"{s.path}.{m.cub}", _muh_value(sel, m, f"p.{tuning.ident(s.name)}"))
                for m in s.fields
                if m.dim in have.get(tuning.ident(s.name), set())
            ],
        )
        for s in sel.subs
    ]
    return dict(muh=muh, subs=subs)


#: Columns a generated line may take (before clang-format), and the indentation of a part's initializer in the
#: templates' `return ::cub::…Policy{` (cub/tune/_selector.j2).
WIDTH = 120
PART_INDENT = 8


def nested(family: str, sel: cub.Selector, algs, fields: set[str]) -> dict:
    """More context for a family whose 3.5 policy is made of structs of different types (``sel.parts``):
    ``parts``, each member's C++ initializer in aggregate order (muh's sub-policy values where the spec sets
    them, CUB's own selector's ``c`` elsewhere), one line or one field a line at ``PART_INDENT``; nothing for a
    flat policy (its ``values``)."""
    if not sel.parts:
        return {}
    subs = {sp.name: {f.name for f in sp.fields} for sp in tuning.subs_of(family, algs)}
    return {"parts": [_part(sel, part, fields, subs) for part in sel.parts]}


def _part(sel: cub.Selector, part: cub.Part, fields: set[str], subs: dict[str, set[str]]) -> dict:
    have = subs.get(part.sub, set()) if part.sub else fields
    values = [_part_value(sel, part, m, have) for m in part.fields]
    if not part.type:
        return {"member": part.member, "text": values[0]}
    pad = " " * PART_INDENT
    one = f"::{part.type}{{{', '.join(values)}}}"
    if len(pad) + len(one) + len(f", // {part.member}") <= WIDTH:
        return {"member": part.member, "text": one}
    inner = ",\n".join(f"{pad}  {v}" for v in values)
    return {"member": part.member, "text": f"::{part.type}{{\n{inner}}}"}


def _part_value(sel: cub.Selector, part: cub.Part, member: cub.Member, have: set[str]) -> str:
    """One field of a part: muh's value where the spec sets the dimension (in the sub-policy ``part.sub``),
    converted to CUB's type, else what CUB's own selector (``c``) answers for it."""
    if member.dim == cub.CUB_ONLY or member.dim not in have:
        return f"c.{part.member}" if not part.type else f"c.{part.member}.{member.cub}"
    v = f"p.{part.sub}.{member.dim}" if part.sub else f"p.{member.dim}"
    enum = sel.enums.get(f"{part.sub}.{member.dim}") or sel.enums.get(member.dim)
    if enum:
        return f"::muh::cub::tune::to<::{enum}>::from({v})"
    if member.dim in sel.bools:
        yes, no = sel.bools[member.dim]
        return f"{v} ? ::{yes} : ::{no}"
    return v
