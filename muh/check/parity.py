"""The CCCL parity check: muh's derivation against what the installed CUB computes.

Three groups of cases, each compared value by value:

* ``scaling`` — muh's scaling rules (muh/derive/scaling.py) with CUB's budget (49152 B, 32 threads)
  against ``MemBoundScaling`` / ``RegBoundScaling`` / ``Nominal4BItemsToItems`` /
  ``Nominal8BItemsToItems`` for a seeded set of nominal policies and element sizes
  (cub_truth.scaling_cases);
* ``policy`` — for every NVIDIA hardware with ``cub_parity = true`` (the checked spec's, or the
  reference spec ``specs/nvidia.muh`` when it has none), the derived policy of every family in
  ``COMPARED`` (sub-policies included) and every probe-able element type against the policy CUB's
  ``policy_hub`` chain selects for that arch;
* ``target`` — for other hardware, the rules CUB's constants stand for, in the hardware's own
  terms: threads a multiple of the warp size, within the block limit, and a staged tile that fits
  ``smem_per_block``.

Ground truth is compiled, never typed in: see cub_truth.py and docs/parity.md.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from muh.check import CheckResult, cub_truth, register
from muh.codegen.base import BuildContext
from muh.derive import Derived, derive, scaling
from muh.derive.model import ResolvedPolicy
from muh.diagnostics import MuhError
from muh.schema import Spec, load
from muh.schema.catalog import DEFAULT_TYPES, FAMILIES

REFERENCE_SPEC = "nvidia.muh"
_LOOKBACK = (("threads", "threads"), ("items", "items"), ("load", "load"), ("modifier", "modifier"),
             ("block", "block"), ("delay.kind", "delay"), ("delay.ns", "delay_ns"),
             ("delay.l2_write_latency", "l2_write_latency"))
_SCAN = (("threads", "threads"), ("items", "items"), ("load", "load"), ("store", "store"),
         ("modifier", "modifier"), ("block", "block"), ("delay.kind", "delay"),
         ("delay.ns", "delay_ns"), ("delay.l2_write_latency", "l2_write_latency"))
_TILE = (("threads", "threads"), ("items", "items"), ("load", "load"), ("store", "store"), ("modifier", "modifier"))


def _subs(*spec: tuple[str, tuple[str, ...]]) -> tuple[tuple[str, str], ...]:
    """Sub-policy dimensions: (``sub/dim``, ``sub.field``) pairs."""
    return tuple((f"{sub}/{dim}", f"{sub}.{dim}") for sub, dims in spec for dim in dims)


_RADIX = _subs(("onesweep", ("threads", "items", "radix_bits")),
               ("downsweep", ("threads", "items", "radix_bits", "rank", "load", "modifier")),
               ("single_tile", ("threads", "items", "radix_bits", "rank", "load", "modifier")),
               ("upsweep", ("threads", "items", "radix_bits", "modifier")),
               ("histogram", ("threads", "items", "radix_bits")),
               ("exclusive_sum", ("threads", "radix_bits")))
#: Dimensions compared per family: (muh dimension, CUB truth field). The order is the table's.
COMPARED = {
    "reduce": (("threads", "threads"), ("items", "items"), ("vec", "vec"), ("block", "block"),
               ("modifier", "modifier")),
    "scan": _SCAN,
    "select_if": _LOOKBACK,
    "for_each": (("threads", "threads"), ("items", "items")),
    "partition": _LOOKBACK,
    "transform": (("threads", "threads"), ("bytes_in_flight", "bytes_in_flight"), ("algorithm", "algorithm")),
    "merge_sort": _TILE,
    "merge": _TILE,
    "radix_sort": _RADIX,
    "histogram": (("threads", "threads"), ("pixels_per_thread", "pixels_per_thread"), ("vec", "vec"),
                  ("load", "load"), ("modifier", "modifier"), ("rle_compress", "rle_compress"),
                  ("memory", "memory"), ("work_stealing", "work_stealing")),
    "select_flagged": _LOOKBACK,
    "unique": _LOOKBACK,
    "unique_by_key": _LOOKBACK,
    "three_way_partition": _LOOKBACK,
    "reduce_by_key": _LOOKBACK,
    "scan_by_key": _SCAN,
    "rle_encode": _LOOKBACK,
    "rle_non_trivial_runs": _LOOKBACK + (("store_time_slicing", "store_time_slicing"),),
    "radix_sort_pairs": _RADIX,
    "segmented_sort": _subs(("large", ("threads", "items", "radix_bits", "rank", "load", "modifier", "block")),
                            ("small", ("threads", "threads_per_segment", "items", "load", "modifier")),
                            ("medium", ("threads", "threads_per_segment", "items", "load", "modifier"))),
    "batch_memcpy": _subs(("small", ("threads", "buffers_per_thread", "bytes_per_thread", "prefer_pow2_bits",
                                     "block_tile", "warp_threshold", "block_threshold")),
                          ("large", ("threads", "bytes_per_thread"))),
    "adjacent_difference": _TILE,
    "segmented_reduce": (("threads", "threads"), ("items", "items"), ("vec", "vec"), ("block", "block"),
                         ("modifier", "modifier")),
    "segmented_radix_sort": _subs(*((sub, ("threads", "items", "radix_bits", "rank", "load", "modifier"))
                                    for sub in ("segmented", "alt_segmented"))),
}


@dataclass(frozen=True)
class ParityCase:
    group: str          # scaling | policy | target
    case: str           # what was compared, e.g. "scan sm90 float64"
    ok: bool
    detail: str = ""    # the values compared (all of them when ok, the differing ones otherwise)
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


def _compared(spec: Spec) -> list[tuple[str, str, str]]:
    """(family, hardware, element type) of every policy the spec lets CUB be asked about, sorted."""
    out = []
    for alg in spec.algorithms.values():
        hw = spec.hardware[alg.on]
        if alg.family in COMPARED and hw.name in parity_hardware(spec):
            for dtype in sorted(set(alg.types or DEFAULT_TYPES) & set(cub_truth.ALGORITHMS.get(alg.family, ()))):
                out.append((alg.family, hw.name, dtype))
    order = {name: i for i, name in enumerate(sorted(spec.hardware, key=lambda n: (spec.hardware[n].compute_capability or 0, n)))}
    return sorted(out, key=lambda c: (list(COMPARED).index(c[0]), order[c[1]], c[2]))


def probes_for(spec: Spec) -> list[cub_truth.PolicyProbe]:
    return sorted({cub_truth.PolicyProbe(f, spec.hardware[h].compute_capability * 10, t) for f, h, t in _compared(spec)})


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
    rule = resolved.rule + (f" {resolved.inputs}" if resolved.inputs else "") + (f" at {resolved.where}" if resolved.where else "")
    return value, rule


def _truth(cub: dict, field: str):
    for part in field.split("."):
        cub = cub.get(part) if isinstance(cub, dict) else None
    return cub


def policy_parity(spec: Spec, derived: Derived, truth: cub_truth.Truth) -> list[ParityCase]:
    out = []
    for family, hw_name, dtype in _compared(spec):
        probe = cub_truth.PolicyProbe(family, spec.hardware[hw_name].compute_capability * 10, dtype)
        alg = derived.algorithms[f"{family}@{hw_name}"]
        name = f"{family} {hw_name} {dtype}"
        cub = truth.policies.get((probe.algorithm, probe.cc, probe.type))
        if cub is None:
            out.append(ParityCase("policy", name, False, "CUB truth has no entry", (("*", "-", "missing", "truth"),)))
            continue
        try:
            policy = alg.for_type(probe.type, "plus")
        except KeyError:
            out.append(ParityCase("policy", name, False, "muh resolved no policy for this type",
                                  (("*", "missing", "-", "derive"),)))
            continue
        fails, shown = [], []
        for dim, field in COMPARED[probe.algorithm]:
            mine, rule = _value(policy, dim)
            want = _truth(cub, field)
            shown.append(f"{dim}={want}")
            if mine != want:
                fails.append((dim, mine, want, rule))
        detail = f"CUB Policy{cub['policy']}: " + " ".join(shown)
        out.append(ParityCase("policy", name, not fails, detail, tuple(fails)))
    return out


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
    """``$MUH_PARITY_SPEC``, else ``nvidia.muh`` beside the checked spec, else ``specs/nvidia.muh``."""
    if os.environ.get("MUH_PARITY_SPEC"):
        return Path(os.environ["MUH_PARITY_SPEC"])
    candidates = [Path(spec_file).parent / REFERENCE_SPEC] if spec_file else []
    candidates.append(Path("specs") / REFERENCE_SPEC)
    return next((c for c in candidates if c.is_file()), None)


@dataclass(frozen=True)
class ParityReport:
    cases: tuple[ParityCase, ...]
    policy_spec: str | None  # the spec whose NVIDIA hardware was compared, if any
    cub_version: int

    @property
    def failed(self) -> list[ParityCase]:
        return [c for c in self.cases if not c.ok]

    @property
    def ok(self) -> bool:
        return bool(self.cases) and not self.failed


def run_parity(spec: Spec, derived: Derived | None = None) -> ParityReport:
    """Every parity case for ``spec`` (raises MuhError when nvcc or the reference spec fails)."""
    derived = derived or derive(spec)
    policy_spec, policy_derived = spec, derived
    if not parity_hardware(spec):
        ref = reference_spec_path(spec.file)
        if ref is not None:
            policy_spec = load(ref.read_text(), str(ref))
            policy_derived = derive(policy_spec)
        else:
            policy_spec = policy_derived = None
    # The standard probes plus any the spec adds (another arch): standard specs share one cached program.
    probes = set(cub_truth.policy_probes()) | set(probes_for(policy_spec) if policy_spec is not None else ())
    truth = cub_truth.load_truth(probes=sorted(probes))
    cases = scaling_parity(truth)
    if policy_spec is not None:
        cases += policy_parity(policy_spec, policy_derived, truth)
    cases += target_rules(spec, derived)
    return ParityReport(tuple(cases), policy_spec.file if policy_spec is not None else None, truth.cub_version)


def render(report: ParityReport, *, verbose: bool = False) -> str:
    """The table: policy and target cases one per row; scaling cases grouped (all rows if verbose)."""
    lines = [f"CUB {report.cub_version // 100000}.{report.cub_version // 100 % 1000}.{report.cub_version % 100} "
             f"(CUB_VERSION {report.cub_version}); policies from {report.policy_spec or '(no NVIDIA spec found)'}"]
    rows = []
    groups: dict[tuple[str, str], list[int]] = {}
    for c in report.cases:
        if c.group == "scaling" and c.ok and not verbose:
            rule, _, rest = c.case.partition("(")
            size = int(rest.rsplit(",", 1)[1].rstrip("B)"))
            kind = "sizes 1-16 B" if size in cub_truth.STANDARD_SIZES else "odd sizes (char[N])"
            groups.setdefault((rule, kind), []).append(size)
            continue
        rows.append((c.group, c.case, "ok" if c.ok else "FAIL", c.detail))
    rows = [("scaling", f"{rule}, {kind}", "ok", f"{len(sizes)} cases, sizes {','.join(map(str, sorted(set(sizes))))}")
            for (rule, kind), sizes in sorted(groups.items())] + rows
    width = max((len(r[1]) for r in rows), default=10)
    lines.append(f"{'group':<8} {'case':<{width}} {'result':<6} values")
    lines += [f"{g:<8} {case:<{width}} {res:<6} {detail}" for g, case, res, detail in rows]
    for c in report.failed:
        for dim, mine, cub, rule in c.failures:
            lines.append(f"MISMATCH {c.group} {c.case}: {dim}: muh {mine} != CUB {cub} (rule: {rule})")
    n = len(report.cases)
    if report.failed:
        lines.append(f"parity: {len(report.failed)} of {n} cases FAILED")
    else:
        lines.append(f"parity: {n} cases passed")
    return "\n".join(lines)


@register("parity")
def check_parity(ctx: BuildContext) -> CheckResult:
    """`muh check SPEC --only parity`: the table of cases, ending with `parity: N cases passed`."""
    try:
        report = run_parity(ctx.spec, ctx.derived)
    except MuhError as err:
        text = [d.render() for d in err.diagnostics]
        return CheckResult("parity", "fail", err.diagnostics[0].message if err.diagnostics else "parity failed", text)
    lines = render(report, verbose=bool(ctx.options.get("verbose"))).splitlines()
    return CheckResult("parity", "pass" if report.ok else "fail", lines[-1], lines)


__all__ = ["ParityCase", "ParityReport", "run_parity", "render", "scaling_parity", "policy_parity", "target_rules",
           "MuhError"]
