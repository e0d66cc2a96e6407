"""Check: named checks over a built spec, each pass / fail / skip (with a reason)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Literal

from muh.codegen.base import BuildContext

Status = Literal["pass", "fail", "skip"]


@dataclass
class CheckResult:
    name: str
    status: Status
    detail: str = ""
    cases: list[str] = field(default_factory=list)  # lines shown under the table with --verbose
    seconds: float = 0.0


Check = Callable[[BuildContext], CheckResult]
CHECKS: dict[str, Check] = {}


def register(name: str):
    def deco(fn: Check) -> Check:
        CHECKS[name] = fn
        return fn
    return deco


def _load_all() -> dict[str, Check]:
    from muh.check import registry  # noqa: F401  (imports register the checks)

    return CHECKS


def run_checks(ctx: BuildContext, only: list[str] | None = None) -> list[CheckResult]:
    checks = _load_all()
    names = sorted(checks)
    if only:
        names = [n for n in only]
    results = []
    for name in names:
        t0 = time.perf_counter()
        res = checks[name](ctx)
        res.seconds = time.perf_counter() - t0
        results.append(res)
    return results


def available() -> list[str]:
    return sorted(_load_all())
