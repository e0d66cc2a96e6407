"""Engine plug-ins: one folder per engine, one line each in ``REGISTRY``.

An engine plug-in (``base.EnginePlugin``) supplies its variants (data), its flag table and the resolve
step (deploy block → plan). Its folder plugs into the later stages by one convention, ``PARTS``: the
folder's ``codegen`` package exports ``EMITTERS`` (emitter name → emitter) and its ``check`` package
``check(ctx, plan, files)``. Codegen's and check's registries collect them with ``stage_parts(stage)``
for every registered engine, so adding an engine touches no other list; tests/test_layers.py reads the
same convention (a ``stage_parts("codegen")`` call is an import of every engine's codegen package) and
fails when a registered engine's folder lacks a part (docs/architecture.md, "Adding an engine").
``deploy { engine = <name> "<version>" }`` picks one.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from muh.engines import vllm
from muh.engines.base import EnginePlugin

REGISTRY: dict[str, EnginePlugin] = {
    "vllm": vllm.ENGINE,  # stock vLLM (flag table and anchors from the wheel)
    "enginex": vllm.ENGINEX,  # the competition's EngineX fork of vLLM 0.6.3 (BI-V100): a variant of vllm
}

DEFAULT = "vllm"
"""The engine a spec without a deploy block is probed for (the probe bundle's engine part)."""

PARTS: dict[str, str] = {
    "codegen": "EMITTERS",  # muh/engines/<folder>/codegen/__init__.py: EMITTERS = {"<name>": emit, …}
    # muh/engines/<folder>/check/__init__.py: def check(ctx, plan, files) -> (cases, problems, skipped)
    "check": "check",
}
"""A later stage's part of an engine folder → the name its package exports."""


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> EnginePlugin | None:
    return REGISTRY.get(name)


def part_module(plugin: EnginePlugin, stage: str) -> str:
    """The module of ``stage``'s part of the plug-in's folder (``muh.engines.vllm.codegen``)."""
    if stage not in PARTS:
        raise ValueError(f"an engine folder has no `{stage}` part (parts: {', '.join(PARTS)})")
    return f"{plugin.package}.{stage}"


def stage_parts(stage: str) -> dict[str, ModuleType]:
    """Engine name → its folder's ``stage`` package (engines sharing a folder, vllm and enginex, share it).

    The one place muh imports a module by a computed name; tests/test_layers.py adds each call's edges
    (caller → every registered engine's ``<folder>.<stage>``) to its graph, so a call must name the
    stage as a literal string."""
    out = {}
    for name, plugin in sorted(REGISTRY.items()):
        module = importlib.import_module(part_module(plugin, stage))
        if not hasattr(module, PARTS[stage]):
            raise AttributeError(
                f"{module.__name__} lacks `{PARTS[stage]}`: every engine folder's {stage} package "
                f"exports it (muh/engines/__init__.py PARTS)"
            )
        out[name] = module
    return out
