"""What a check is and the registry the checks add themselves to (imported by every check)."""

from __future__ import annotations

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
RENAMED: dict[str, str] = {}  # an old check name -> its name now (`--only OLD` still runs it)


def register(name: str, *, formerly: tuple[str, ...] = ()):
    def deco(fn: Check) -> Check:
        CHECKS[name] = fn
        RENAMED.update({old: name for old in formerly})
        return fn

    return deco


def canonical(name: str) -> str:
    """The registered name of a check given by its name or a former one (unknown names come back as given)."""
    return RENAMED.get(name, name)
