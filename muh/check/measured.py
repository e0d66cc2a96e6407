"""`measured`: every value set by `muh tune` still matches the hardware it was measured on.

A value whose `@measured(fingerprint = …)` differs from the spec's hardware block and toolchain
(``muh.derive.hardware_fingerprint``) is stale: re-run `muh tune` on that hardware.
"""

from __future__ import annotations

from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext


def measured_values(ctx: BuildContext):
    """(algorithm key, policy key, dim, Resolved) for every resolved value with a measurement."""
    seen = set()
    for akey, alg in sorted(ctx.derived.algorithms.items()):
        for pkey, pol in sorted(alg.policies.items()):
            sized = [(pkey, pol.values)] + [(f"{pkey} [{b.label}]", b.values) for b in pol.buckets]
            for key, values in sized:  # a size bucket's values carry their own evidence
                for dim, r in sorted(values.items()):
                    if r.measured is not None and (akey, r.where, dim) not in seen:
                        seen.add((akey, r.where, dim))
                        yield akey, key, dim, r


@register("measured")
def check_measured(ctx: BuildContext) -> CheckResult:
    vals = list(measured_values(ctx))
    if not vals:
        return CheckResult("measured", "skip", "no @measured values in this spec")
    stale = [(a, p, d, r) for a, p, d, r in vals if r.stale]
    cases = [
        f"{'STALE ' if r.stale else ''}{a} {p}.{d} = {r.value} measured on {r.measured.device} {r.measured.date} "
        f"[{r.measured.variant}] at {r.where}"
        for a, p, d, r in vals
    ]
    if stale:
        return CheckResult(
            "measured",
            "fail",
            f"{len(stale)} of {len(vals)} measured value(s) are stale: the hardware "
            "or toolchain changed since they were measured; re-run `muh tune` on it",
            cases,
        )
    return CheckResult("measured", "pass", f"{len(vals)} measured value(s) match their hardware fingerprint", cases)
