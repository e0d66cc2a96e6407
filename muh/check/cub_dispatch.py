"""The `cub_dispatch` check: CUB's own dispatch, run on muh's generated policy hubs, selects CUB's policies.

For every CUB case of the parity table the spec covers (``parity.coverage``: family × arch × type ×
operator × offset width × value type) whose family has a generated hub (``include/muh/cub/<family>.cuh``,
muh/codegen/cxx/cub_hub.py), one ``static_assert`` per member of CUB's agent policy (the family's CUB
table: muh/families/cub.py, sub-policies included; a delay constructor compared as a type) proves that
the policy CUB's ``ChainedPolicy`` walk selects from muh's hub equals the one it selects from CUB's own
hub. Compiled with nvcc, host-only, no GPU; the cases are batched into a few translation units compiled
in parallel, and a unit that compiled with the same inputs before is not compiled again
(``tuning_headers.compile_units``). A case the spec does not cover is a gap (as in ``parity``), a family
the spec tunes without a hub template is named, and both fail the check.
"""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

from muh.check import cub_truth, parity, tuning_headers
from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import cub_hub, tuning
from muh.diagnostics import MuhError
from muh.runtime.toolchain import HOST
from muh.schema import catalog

#: Translation units the cases are spread over (compiled in parallel; each holds whole families).
UNITS = 4
_CUB_HUB = re.compile(r"(?:typename )?cub::detail::(?:\w+::)+?policy_hub(_t)?\b")


def muh_hub(family: str) -> str:
    """The C++ of muh's hub in the place of CUB's in the family's table expression (same arguments)."""
    hub = cub_truth.TABLES[family].hub
    return _CUB_HUB.sub(lambda m: f"typename ::muh::cub::{family}::policy_hub{m.group(1) or ''}", hub, count=1)


def members(family: str) -> list[dict]:
    """Every member the family's CUB table names (sub-policies' included): its path below the agent
    policy, muh's name for it, and whether it is a type (a delay constructor)."""
    table = cub_truth.TABLES[family]
    out = []
    for prefix, ms in [("", table.cub_members)] + [(f"{s.name}/", s.members) for s in table.subs]:
        for m in ms:
            delay = catalog.DIMS[m.dim].kind == "delay"
            out.append(dict(name=prefix + m.dim, path=m.cub, type=delay))
    return out


def hub_files(ctx: BuildContext) -> list[GeneratedFile]:
    """The generated tuning headers and hubs of the spec (what the units include)."""
    return [f for f in tuning.emit(ctx) if f.path.endswith(".cuh")] + cub_hub.emit(ctx)


def units(
    ctx: BuildContext, only: set[str] | None = None
) -> tuple[list[tuning_headers.Unit], int, int, list[str], list[str]]:
    """(the units, cases, static_asserts, gaps, families without a hub) for the spec's covered cases
    (``only``: those of these families)."""
    compared, gaps, _ = parity.coverage(ctx.spec)
    missing = [f"{parity.case_name(p)}: {why}" for p, why in gaps]
    hubs = set(cub_hub.hub_families(ctx))
    no_hub = sorted({p.algorithm for p, _ in compared if p.algorithm not in hubs})
    by_family: dict[str, list[dict]] = {}
    asserts = 0
    for probe, _ in compared:
        if probe.algorithm not in hubs or (only is not None and probe.algorithm not in only):
            continue
        ms = members(probe.algorithm)
        asserts += len(ms)
        by_family.setdefault(probe.algorithm, []).append(
            dict(
                family=probe.algorithm,
                label=parity.case_name(probe),
                members=ms,
                args=f"{probe.cc}, {probe.cxx_type}, {probe.cxx_op}, {probe.cxx_offset}",
            )
        )
    groups: list[list[str]] = [[] for _ in range(min(UNITS, len(by_family)))]
    for family in sorted(by_family, key=lambda f: -len(by_family[f])):  # largest first, onto the lightest unit
        min(groups, key=lambda g: sum(len(by_family[f]) for f in g)).append(family)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    rows = {h["name"]: h for h in cub_truth.probe_rows()}
    out = []
    for i, fams in enumerate(g for g in groups if g):
        cases = [c for f in sorted(fams) for c in by_family[f]]
        source = env.get_template("cub_dispatch.cu.j2").render(
            hub_headers=sorted(f"{f}.cuh" for f in fams),
            cases=cases,
            families=[
                dict(name=f, hub=muh_hub(f), cub_hub=cub_truth.TABLES[f].hub, agent=cub_truth.TABLES[f].agent)
                for f in sorted(fams)
            ],
            structs=cub_truth.struct_shapes(p for p, _ in compared),
            hubs=[rows[f] for f in sorted(fams)],
            cub_headers=cub_truth.probe_headers(),
        )
        out.append(tuning_headers.Unit(f"cub_dispatch_{i}", source, HOST.cxx))
    return out, sum(len(v) for v in by_family.values()), asserts, missing, no_hub


@register("cub_dispatch")
def check_cub_dispatch(ctx: BuildContext) -> CheckResult:
    """`muh check SPEC --only cub_dispatch`: CUB's dispatch on muh's hubs selects CUB's policies, case by case."""
    if not parity.parity_hardware(ctx.spec):
        return CheckResult("cub_dispatch", "skip", "no NVIDIA hardware with cub_parity = true: nothing to compare")
    if ctx.spec.cccl != cub_hub.HUB_CCCL:
        return CheckResult(
            "cub_dispatch",
            "skip",
            f"the spec's CCCL is {ctx.spec.cccl}: muh writes policy selectors for it, not hubs (docs/parity.md)",
        )
    files = hub_files(ctx)
    todo, cases, asserts, gaps, no_hub = units(ctx)
    if not todo and not gaps and not no_hub:
        return CheckResult("cub_dispatch", "skip", "the spec tunes no family CUB tunes")
    try:
        results = tuning_headers.compile_units(files, todo, use_cache=not ctx.flags.get("no_cache"))
    except MuhError as err:
        return CheckResult("cub_dispatch", "fail", err.diagnostics[0].message, [d.render() for d in err.diagnostics])
    lines = []
    for u in todo:
        ok, text = results[u.name]
        fams = [f for f in re.findall(r'#include "muh/cub/(\w+)\.cuh"', u.source)]
        lines.append(f"{u.name} ({', '.join(fams)}): {'ok' if ok else 'FAILED'}")
        if not ok:
            lines += [f"  {line}" for line in text.strip().splitlines() if "error" in line][:40]
    lines += [f"NO HUB {f}: CUB's dispatch cannot run the spec's {f} policies (no hub template)" for f in no_hub]
    lines += [f"GAP {g}" for g in gaps[:40]] + ([f"GAP … {len(gaps) - 40} more"] if len(gaps) > 40 else [])
    failed = [u.name for u in todo if not results[u.name][0]]
    counted = f"{cases} CUB cases, {asserts} static_assert(muh hub member == CUB hub member)"
    extra = (f"; {len(no_hub)} families without a hub" if no_hub else "") + (
        f"; {len(gaps)} CUB cases MISSING" if gaps else ""
    )
    if failed:
        detail = f"{len(failed)} of {len(todo)} units failed ({', '.join(failed)}); {counted}{extra}"
    else:
        detail = f"cub_dispatch: {counted} hold{extra}"
    return CheckResult("cub_dispatch", "fail" if failed or gaps or no_hub else "pass", detail, lines)
