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
}

DEFAULT = "computility"
"""The platform of a deploy block that names none."""


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> PlatformPlugin | None:
    return REGISTRY.get(name)


def stage_parts(stage: str) -> dict[str, ModuleType]:
    """Platform name → its folder's ``stage`` package (``codegen``), which exports ``EMITTERS``.

    Like ``muh.engines.stage_parts``: tests/test_layers.py reads each call as imports of every registered
    platform's ``<package>.<stage>``, so a call names the stage as a literal string."""
    if stage != "codegen":
        raise ValueError(f"a platform folder has no `{stage}` part (parts: codegen)")
    out = {}
    for name, plugin in sorted(REGISTRY.items()):
        module = importlib.import_module(f"{plugin.package}.{stage}")
        if not hasattr(module, "EMITTERS"):
            raise AttributeError(f"{module.__name__} lacks `EMITTERS`: every platform folder's codegen package exports it")
        out[name] = module
    return out
