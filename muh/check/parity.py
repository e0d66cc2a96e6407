"""The CCCL parity check: muh's derivation against what the installed CUB computes.

Three groups of cases, each compared value by value:

* ``scaling`` — muh's scaling rules (muh/derive/scaling.py) with CUB's budget (49152 B, 32 threads)
  against ``MemBoundScaling`` / ``RegBoundScaling`` / ``Nominal4BItemsToItems`` /
  ``Nominal8BItemsToItems`` for a seeded set of nominal policies and element sizes
  (cub_truth.scaling_cases);
* ``policy`` — for every NVIDIA hardware with ``cub_parity = true`` (the checked spec's, or the
  reference spec ``specs/nvidia.muh`` when it has none), the derived policy of every family CUB
  tunes (the dimensions ``compared_dims`` reads from its CUB table, sub-policies included) and every
  probe-able element type against the policy CUB's ``policy_hub`` chain selects for that arch;
* ``target`` — for other hardware, the rules CUB's constants stand for, in the hardware's own
  terms: threads a multiple of the warp size, within the block limit, and a staged tile that fits
  ``smem_per_block``.

Ground truth is compiled, never typed in: see cub_truth.py and docs/parity.md.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from muh.check import cub_truth
from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext
from muh.derive import Derived, derive, scaling
from muh.derive.model import ResolvedPolicy
from muh.derive.resolve import resolve_query
from muh.diagnostics import MuhError
from muh.schema import Spec, load
from muh.schema.catalog import DEFAULT_TYPES, DIMS, FAMILIES
from muh.schema.policy_key import Query

REFERENCE_SPEC = "nvidia.muh"
#: A delay is compared part by part (the probe prints it as an object of these).
DELAY_PARTS = ("kind", "ns", "l2_write_latency")


def compared_dims(family: str) -> tuple[str, ...]:
    """The dimensions compared for a family CUB tunes: every member its CUB table says CUB has (a
    sub-policy's as ``sub/dim``, a delay's parts as ``delay.kind`` …), in the table's order. The probe's
    row holds each at the same path (``sub.dim``)."""
    table = cub_truth.TABLES[family]
    out = []
    for prefix, members in [("", table.cub_members)] + [(f"{s.name}/", s.members) for s in table.subs]:
        for m in members:
            parts = DELAY_PARTS if DIMS[m.dim].kind == "delay" else ("",)
            out += [prefix + m.dim + (f".{p}" if p else "") for p in parts]
    return tuple(out)


@dataclass(frozen=True)
class ParityCase:
    group: str  # scaling | policy | target
    case: str  # what was compared, e.g. "scan sm90 float64"
    ok: bool
    detail: str = ""  # the values compared (all of them when ok, the differing ones otherwise)
    failures: tuple[tuple[str, object, object, str], ...] = ()  # (dimension, muh, cub, rule)


# ---- scaling -------------------------------------------------------------------------------------


def _muh_scaling(case: cub_truth.ScalingCase) -> tuple[int, int]:
    if case.rule == "nominal_4b_items":
        return 0, scaling.nominal_4b_items(case.items, case.size)
    if case.rule == "nominal_8b_items":
        return 0, scaling.nominal_8b_items(case.items, case.size)
    got = scaling.RULES[case.rule](case.threads, case.items, case.size, scaling.CUB_SMEM, scaling.CUB_WARP)
    return got.threads, got.items


def scaling_parity(truth: cub_truth.Truth) -> list[ParityCase]:
    out = []
    for case, cub in sorted(truth.scaling.items()):
        mine = _muh_scaling(case)
        rule = scaling.FORMULAS.get(case.rule.removesuffix("_items"), case.rule)
        fails = tuple((dim, m, c, rule) for dim, m, c in zip(("threads", "items"), mine, cub) if m != c)
        out.append(ParityCase("scaling", case.key, not fails, f"{cub[0]} x {cub[1]}", fails))
    return out


# ---- policies ------------------------------------------------------------------------------------


def parity_hardware(spec: Spec) -> list[str]:
    """Hardware whose policies CUB can be asked about: cub_parity and a compute capability."""
    return sorted(h.name for h in spec.hardware.values() if h.cub_parity and h.compute_capability)


def arch_name(cc: int) -> str:
    """CUB's policy number (SM x 10) as a case word: 900 -> sm90."""
    return f"sm{cc // 10}"


def case_name(probe: cub_truth.PolicyProbe) -> str:
    """`<family> <arch> <type> <op> <offset>` (op and offset only where CUB's hub takes them)."""
    words = [probe.algorithm, arch_name(probe.cc), probe.type + (f":{probe.value}" if probe.value else "")]
    table = cub_truth.TABLES[probe.algorithm]
    if table.takes_op:
        words.append(probe.op)
    if table.takes_offset:
        words.append(f"offset{probe.offset}")
    return " ".join(words)


def out_of_scope(spec: Spec, name: str) -> str | None:
    """The spec's `parity { out_of_scope = […] }` pattern that excuses case ``name``, if any."""
    for pat in spec.parity.out_of_scope:
        if fnmatch.fnmatchcase(name, pat) or fnmatch.fnmatchcase(name, pat + " *"):
            return pat
    return None


def listed_shapes(spec: Spec) -> dict[str, tuple[tuple[int, int], ...]]:
    """Per family: the (size, alignment) of the spec's own `type`s that its algorithms list."""
    out: dict[str, dict] = {}
    for alg in spec.algorithms.values():
        for t in alg.types:
            if t in spec.types:
                out.setdefault(alg.family, {})[(spec.types[t].size, spec.types[t].align)] = None
    return {f: tuple(sorted(shapes)) for f, shapes in out.items()}


def spec_type(spec: Spec, alg, probe_type: str) -> str | None:
    """The spec's name for a probed type: a catalogue type itself; a ``struct<S>a<A>`` case, the first
    type of ``alg.types`` declared with that size and alignment (None if it lists none)."""
    shape = cub_truth.shape_of(probe_type)
    listed = alg.types or DEFAULT_TYPES
    if shape is None:
        return probe_type if probe_type in listed else None
    return next((t for t in listed if t in spec.types and (spec.types[t].size, spec.types[t].align) == shape), None)


def spec_value(spec: Spec, alg, probe_value: str) -> str | None:
    """The spec's name for a probed value type, from the algorithm's `values` (as ``spec_type``)."""
    shape = cub_truth.shape_of(probe_value)
    if shape is None:
        return probe_value if probe_value in alg.values else None
    return next((t for t in alg.values if t in spec.types and (spec.types[t].size, spec.types[t].align) == shape), None)


def expected_probes(spec: Spec) -> list[cub_truth.PolicyProbe]:
    """CUB's case list: every family CUB 3.0.1 tunes, on CUB's arches and the spec's parity arches,
    for every type, operator and offset width its hub distinguishes (cub_truth.policy_probes), user-defined
    types included (CUB's standard shapes, and the shapes of the spec's own types where it lists them)."""
    arches = set(cub_truth.ARCHES) | {spec.hardware[h].compute_capability * 10 for h in parity_hardware(spec)}
    return cub_truth.policy_probes(tuple(sorted(arches)), listed_shapes(spec))


def _hardware_at(spec: Spec, cc: int) -> str | None:
    names = [h for h in parity_hardware(spec) if spec.hardware[h].compute_capability * 10 == cc]
    return names[0] if names else None


def coverage(
    spec: Spec,
) -> tuple[
    list[tuple[cub_truth.PolicyProbe, str]],
    list[tuple[cub_truth.PolicyProbe, str]],
    list[tuple[cub_truth.PolicyProbe, str]],
]:
    """Split CUB's cases into (compared, gaps, excused): each with the algorithm key, why, or the pattern."""
    compared, gaps, excused = [], [], []
    for probe in expected_probes(spec):
        pattern = out_of_scope(spec, case_name(probe))
        hw = _hardware_at(spec, probe.cc)
        akey = f"{probe.algorithm}@{hw}" if hw else None
        alg = spec.algorithms.get(akey) if akey else None
        if hw is not None and alg is not None and probe.value and spec_value(spec, alg, probe.value) is None:
            shape = cub_truth.shape_of(probe.value)
            why = (
                f"`{probe.value}` is not in the `values` of `algorithm {probe.algorithm} on {hw}`"
                if shape is None
                else f"no type of {shape[0]} B aligned to {shape[1]} B in the `values` of `algorithm "
                f"{probe.algorithm} on {hw}`"
            )
        elif hw is None:
            why = f"no hardware with compute_capability = {probe.cc // 10} and cub_parity = true"
        elif alg is None:
            why = f"no `algorithm {probe.algorithm} on {hw}`"
        elif spec_type(spec, alg, probe.type) is None:
            shape = cub_truth.shape_of(probe.type)
            why = (
                f"`{probe.type}` is not in the `types` of `algorithm {probe.algorithm} on {hw}`"
                if shape is None
                else f"no type of {shape[0]} B aligned to {shape[1]} B in the `types` of `algorithm "
                f"{probe.algorithm} on {hw}` (declare `type {probe.type} {{ size = {shape[0]} B  "
                f"align = {shape[1]} B }}` and list it)"
            )
        else:
            compared.append((probe, akey))
            continue
        (excused if pattern else gaps).append((probe, pattern or why))
    return compared, gaps, excused


def _value(policy: ResolvedPolicy, dim: str):
    """muh's value of ``dim`` (``threads``, ``delay.ns``, or ``onesweep/threads`` for a sub-policy) and its rule."""
    sub, _, dim = dim.rpartition("/")
    head, _, field = dim.partition(".")
    resolved = (policy.subs.get(sub, {}) if sub else policy.values).get(head)
    if resolved is None:
        return None, "(not set in the spec)"
    value = resolved.value
    if field:
        value = getattr(value, field)
        value = int(value) if field != "kind" else value
    rule = (
        resolved.rule
        + (f" {resolved.inputs}" if resolved.inputs else "")
        + (f" at {resolved.where}" if resolved.where else "")
    )
    return value, rule


def _truth(cub: dict, field: str):
    for part in field.split("."):
        cub = cub.get(part) if isinstance(cub, dict) else None
    return cub


def policy_parity(spec: Spec, derived: Derived, truth: cub_truth.Truth) -> list[ParityCase]:
    """Every CUB case the spec covers, compared; every case it neither covers nor excuses, a `gap`."""
    compared, gaps, _ = coverage(spec)
    out = []
    for probe, akey in compared:
        name = case_name(probe)
        cub = truth.policies.get(probe.key)
        if cub is None:
            out.append(ParityCase("policy", name, False, "CUB truth has no entry", (("*", "-", "missing", "truth"),)))
            continue
        try:
            alg = spec.algorithms[akey]
            dtype = spec_type(spec, alg, probe.type)
            value = spec_value(spec, alg, probe.value) if probe.value else None
            policy = resolve_query(spec, akey, Query(dtype, probe.op, probe.offset, value))
        except MuhError as err:
            out.append(
                ParityCase(
                    "policy",
                    name,
                    False,
                    "muh resolved no policy: " + err.diagnostics[0].message,
                    (("*", "missing", "-", "derive"),),
                )
            )
            continue
        fails, shown = [], []
        for dim in compared_dims(probe.algorithm):
            mine, rule = _value(policy, dim)
            want = _truth(cub, dim.replace("/", "."))
            shown.append(f"{dim}={want}")
            if mine != want:
                fails.append((dim, mine, want, rule))
        detail = f"CUB Policy{cub['policy']}: " + " ".join(shown)
        out.append(ParityCase("policy", name, not fails, detail, tuple(fails)))
    for probe, why in gaps:
        out.append(ParityCase("gap", case_name(probe), False, why, (("*", "not compared", "a CUB case", why),)))
    return out


def family_counts(spec: Spec) -> dict[str, tuple[int, int, int]]:
    """Per family: (CUB's cases, compared, excused by the spec)."""
    compared, gaps, excused = coverage(spec)
    out: dict[str, list[int]] = {}
    for i, group in enumerate((compared, gaps, excused)):
        for probe, _ in group:
            row = out.setdefault(probe.algorithm, [0, 0, 0])
            row[0] += 1
            if i != 1:
                row[1 if i == 0 else 2] += 1
    return {k: tuple(v) for k, v in out.items()}


def target_rules(spec: Spec, derived: Derived) -> list[ParityCase]:
    out = []
    for akey, alg in sorted(derived.algorithms.items()):
        hw = alg.hardware
        if hw.cub_parity:
            continue
        for key, pol in sorted(alg.policies.items()):
            threads = pol.value("threads")
            if threads is None:
                continue
            fails = []
            if threads % hw.warp_size:
                fails.append(("threads", threads, f"multiple of {hw.warp_size}", "warp multiple"))
            if threads > hw.max_threads_per_block:
                fails.append(("threads", threads, f"<= {hw.max_threads_per_block}", "max_threads_per_block"))
            if FAMILIES[alg.family].stages_tile and pol.smem_bytes and pol.smem_bytes > hw.smem_per_block:
                fails.append(("tile bytes", pol.smem_bytes, f"<= {hw.smem_per_block}", "smem_per_block"))
            detail = f"{threads} threads" + (f", tile {pol.smem_bytes} B" if pol.smem_bytes else "")
            out.append(ParityCase("target", f"{alg.family} {hw.name} {key}", not fails, detail, tuple(fails)))
    return out


# ---- the suite -----------------------------------------------------------------------------------


def reference_spec_path(spec_file: str | None) -> Path | None:
    """``$MUH_PARITY_SPEC``, else ``nvidia.muh`` beside the checked spec, else ``specs/nvidia.muh``,
    else the copy the installed package carries (``muh/check/nvidia.muh``, which the repository's
    specs/nvidia.muh links to: parity works from any folder)."""
    if os.environ.get("MUH_PARITY_SPEC"):
        return Path(os.environ["MUH_PARITY_SPEC"])
    from importlib import resources

    candidates = [Path(spec_file).parent / REFERENCE_SPEC] if spec_file else []
    candidates.append(Path("specs") / REFERENCE_SPEC)
    candidates.append(Path(str(resources.files("muh.check").joinpath(REFERENCE_SPEC))))
    return next((c for c in candidates if c.is_file()), None)


@dataclass(frozen=True)
class ParityReport:
    cases: tuple[ParityCase, ...]
    policy_spec: str | None  # the spec whose NVIDIA hardware was compared, if any
    cub_version: int
    families: tuple[tuple[str, int, int, int], ...] = ()  # (family, CUB's cases, compared, excused)

    @property
    def failed(self) -> list[ParityCase]:
        return [c for c in self.cases if not c.ok]

    @property
    def gaps(self) -> list[ParityCase]:
        return [c for c in self.cases if c.group == "gap"]

    @property
    def ok(self) -> bool:
        return bool(self.cases) and not self.failed


def run_parity(spec: Spec, derived: Derived | None = None, *, use_cache: bool = True) -> ParityReport:
    """Every parity case for ``spec`` (raises MuhError when nvcc or the reference spec fails).

    Fails closed: CUB's case list (``expected_probes``) is compared with what the spec covers, and
    every case neither covered nor excused by the spec's `parity { out_of_scope = […] }` is a gap."""
    derived = derived or derive(spec)
    policy_spec, policy_derived = spec, derived
    if not parity_hardware(spec):
        ref = reference_spec_path(spec.file)
        if ref is not None:
            policy_spec = load(ref.read_text(), str(ref))
            policy_derived = derive(policy_spec)
        else:
            policy_spec = policy_derived = None
    # CUB's whole case list, whatever the spec covers (one program, one cache entry).
    probes = expected_probes(policy_spec if policy_spec is not None else spec)
    truth = cub_truth.load_truth(probes=sorted(probes), use_cache=use_cache)
    cases = scaling_parity(truth)
    families: tuple = ()
    if policy_spec is not None:
        cases += policy_parity(policy_spec, policy_derived, truth)
        families = tuple((f, *n) for f, n in family_counts(policy_spec).items())
    else:
        cases.append(
            ParityCase(
                "gap",
                "policies",
                False,
                "no spec with cub_parity hardware to compare",
                (
                    (
                        "*",
                        "not compared",
                        "every CUB policy",
                        "add NVIDIA hardware with cub_parity = true, or set $MUH_PARITY_SPEC",
                    ),
                ),
            )
        )
    cases += target_rules(spec, derived)
    return ParityReport(
        tuple(cases), policy_spec.file if policy_spec is not None else None, truth.cub_version, families
    )


def _gap_lines(gaps: list[ParityCase]) -> list[str]:
    """Gaps grouped by family and reason, naming the cases (the first few of a large group)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for c in gaps:
        groups.setdefault((c.case.split()[0], c.detail), []).append(c.case)
    out = []
    for (family, why), names in groups.items():
        shown = ", ".join(names[:6]) + (f", … ({len(names) - 6} more)" if len(names) > 6 else "")
        out.append(f"GAP {family}: {len(names)} CUB cases not compared ({why}): {shown}")
    return out


def render(report: ParityReport, *, verbose: bool = False) -> str:
    """Per-family counts, then the table: policy and target cases one per row; scaling cases grouped
    (all rows if verbose); then mismatches and gaps; the last line is the verdict."""
    lines = [
        f"CUB {report.cub_version // 100000}.{report.cub_version // 100 % 1000}.{report.cub_version % 100} "
        f"(CUB_VERSION {report.cub_version}); policies from {report.policy_spec or '(no NVIDIA spec found)'}"
    ]
    if report.families:
        width = max(len(f[0]) for f in report.families)
        lines.append(f"{'family':<{width}}  {'expected':>8}  {'compared':>8}  {'excused':>7}  {'missing':>7}")
        for family, expected, compared, excused in report.families:
            lines.append(
                f"{family:<{width}}  {expected:>8}  {compared:>8}  {excused:>7}  {expected - compared - excused:>7}"
            )
    rows = []
    groups: dict[tuple[str, str], list[int]] = {}
    for c in report.cases:
        if c.group == "gap":
            continue
        if c.group == "scaling" and c.ok and not verbose:
            rule, _, rest = c.case.partition("(")
            size = int(rest.rsplit(",", 1)[1].rstrip("B)"))
            kind = "sizes 1-16 B" if size in cub_truth.STANDARD_SIZES else "odd sizes (char[N])"
            groups.setdefault((rule, kind), []).append(size)
            continue
        rows.append((c.group, c.case, "ok" if c.ok else "FAIL", c.detail))
    rows = [
        ("scaling", f"{rule}, {kind}", "ok", f"{len(sizes)} cases, sizes {','.join(map(str, sorted(set(sizes))))}")
        for (rule, kind), sizes in sorted(groups.items())
    ] + rows
    width = max((len(r[1]) for r in rows), default=10)
    lines.append(f"{'group':<8} {'case':<{width}} {'result':<6} values")
    lines += [f"{g:<8} {case:<{width}} {res:<6} {detail}" for g, case, res, detail in rows]
    for c in report.failed:
        if c.group == "gap":
            continue
        for dim, mine, cub, rule in c.failures:
            lines.append(f"MISMATCH {c.group} {c.case}: {dim}: muh {mine} != CUB {cub} (rule: {rule})")
    lines += _gap_lines(report.gaps)
    compared = sum(c.group != "gap" for c in report.cases)
    expected = sum(f[1] for f in report.families)
    excused = sum(f[3] for f in report.families)
    scope = (
        f"; CUB policy cases: {expected} expected, {expected - excused - len(report.gaps)} compared"
        + (f", {excused} out of scope" if excused else "")
        + (f", {len(report.gaps)} MISSING" if report.gaps else "")
    )
    mismatched = len(report.failed) - len(report.gaps)
    if mismatched:
        lines.append(f"parity: {mismatched} of {compared} cases FAILED{scope}")
    elif report.gaps:
        lines.append(f"parity: FAILED, CUB cases missing ({compared} compared cases equal){scope}")
    else:
        lines.append(f"parity: {compared} cases passed{scope}")
    return "\n".join(lines)


@register("parity")
def check_parity(ctx: BuildContext) -> CheckResult:
    """`muh check SPEC --only parity`: the table of cases, ending with `parity: N cases passed`."""
    try:
        report = run_parity(ctx.spec, ctx.derived, use_cache=not ctx.flags.get("no_cache"))
    except MuhError as err:
        text = [d.render() for d in err.diagnostics]
        return CheckResult("parity", "fail", err.diagnostics[0].message if err.diagnostics else "parity failed", text)
    lines = render(report, verbose=bool(ctx.flags.get("verbose"))).splitlines()
    return CheckResult("parity", "pass" if report.ok else "fail", lines[-1], lines)


__all__ = [
    "ParityCase",
    "ParityReport",
    "run_parity",
    "render",
    "scaling_parity",
    "policy_parity",
    "target_rules",
    "MuhError",
]
