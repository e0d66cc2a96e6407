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
spelling), without the 3.0 chain machinery.

This module decides which selectors exist and what each template is given; the templates spell CUB's types.
"""

from __future__ import annotations

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import cub_hub, tuning
from muh.codegen.templates import render
from muh.families import cub
from muh.schema import catalog

OUT = "include/muh/cub/tune"
#: The CCCL the selectors are written for and checked against (tests/check/test_cub_tune35.py).
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
    enums = [
        dict(muh=m, cub=t, pairs=[(tuning.ident(v), c) for v, c in pairs])
        for m, t, pairs in cub.cub_enums()
        if t in wanted
    ]
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
                lookback_delays=_lookback_delays(wanted),
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
    if member.dim in sel.enums:
        return f"::muh::cub::tune::to<::{sel.enums[member.dim]}>::from(p.{member.dim})"
    return f"p.{member.dim}"


def _lookback_delays(wanted: set[str]) -> list[tuple[str, str]]:
    """muh's delay kinds with CCCL 3.5's ``cub::LookbackDelayAlgorithm`` enumerators, where a selector takes a
    look-back delay as a ``cub::LookbackDelayPolicy`` value (``tune/common.cuh`` then converts muh's
    ``delay_policy``); empty otherwise."""
    if "cub::LookbackDelayPolicy" not in wanted:
        return []
    return [(tuning.ident(m), c) for m, c in cub.LOOKBACK_DELAYS]
