"""Check: named checks over a built spec, each pass / fail / skip (with a reason)."""

from __future__ import annotations

import time

from muh.check.base import CHECKS, Check, CheckResult, Status, canonical, register
from muh.codegen.base import BuildContext

__all__ = ["CHECKS", "Check", "CheckResult", "Status", "available", "canonical", "known", "register", "run_checks"]


def _load_all() -> dict[str, Check]:
    from muh.check import registry  # noqa: F401  (imports register the checks)

    return CHECKS


def run_checks(ctx: BuildContext, only: list[str] | None = None) -> list[CheckResult]:
    checks = _load_all()
    names = sorted(checks)
    if only:
        names = list(dict.fromkeys(canonical(n) for n in only))  # a former name runs the check once
    results = []
    for name in names:
        t0 = time.perf_counter()
        res = checks[name](ctx)
        res.seconds = time.perf_counter() - t0
        results.append(res)
    return results


def available() -> list[str]:
    return sorted(_load_all())


def known(name: str) -> bool:
    """A check's name or a former name of one (what `--only` accepts)."""
    _load_all()
    return canonical(name) in CHECKS
