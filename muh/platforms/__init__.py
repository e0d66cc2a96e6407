"""Platform plug-ins: one folder per platform, one line each in ``REGISTRY``.

A platform (``base.PlatformPlugin``) is where a deploy plan's server runs: its facts are data
(``<folder>/platform.json``) and its folder's ``codegen`` package exports ``EMITTERS`` that render the plan's
``launch`` into the platform's files. Engines plug into every platform through ``DeployPlan.launch``; a platform
knows no engine. ``deploy { platform = <name> }`` picks one (default ``computility``); docs/architecture.md,
"Adding a platform".
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from muh.platforms.base import PlatformPlugin

_HERE = Path(__file__).parent

REGISTRY: dict[str, PlatformPlugin] = {
    "computility": PlatformPlugin("computility", "muh.platforms.computility", _HERE / "computility"),
    "kubernetes": PlatformPlugin("kubernetes", "muh.platforms.kubernetes", _HERE / "kubernetes"),
}

PARTS: dict[str, str] = {"codegen": "EMITTERS", "check": "check"}
"""A later stage's part of a platform folder → the name its package exports (``check`` is optional)."""

DEFAULT = "computility"
"""The platform of a deploy block that names none."""


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> PlatformPlugin | None:
    return REGISTRY.get(name)


def stage_parts(stage: str) -> dict[str, ModuleType]:
    """Platform name → its folder's ``stage`` package: ``codegen`` (every platform's; exports ``EMITTERS``) or
    ``check`` (where the platform has one; exports ``check(ctx, plan, files) -> (cases, problems, skipped)``).

    Like ``muh.engines.stage_parts``: tests/test_layers.py reads each call as imports of every registered
    platform's ``<package>.<stage>``, so a call names the stage as a literal string."""
    if stage not in PARTS:
        raise ValueError(f"a platform folder has no `{stage}` part (parts: {', '.join(PARTS)})")
    out = {}
    for name, plugin in sorted(REGISTRY.items()):
        try:
            module = importlib.import_module(f"{plugin.package}.{stage}")
        except ModuleNotFoundError as err:
            if stage == "check" and err.name == f"{plugin.package}.{stage}":
                continue  # a platform without checks of its own
            raise
        if not hasattr(module, PARTS[stage]):
            raise AttributeError(
                f"{module.__name__} lacks `{PARTS[stage]}`: a platform folder's {stage} package exports it"
            )
        out[name] = module
    return out
