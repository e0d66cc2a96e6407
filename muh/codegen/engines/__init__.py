"""Engine plug-ins: one folder per engine, one line each in ``REGISTRY``.

An engine plug-in (``base.EnginePlugin``) supplies its variants (data), its flag table, the resolve
step (deploy block → plan), the files it adds (plugin, ops provider), the image fragment (required
and optional build steps) and its checks. ``deploy { engine = <name> "<version>" }`` picks one.
"""
from __future__ import annotations

import importlib

from muh.codegen.engines.base import EnginePlugin

REGISTRY: dict[str, str] = {
    "vllm": "muh.codegen.engines.vllm",        # stock vLLM (flag table and anchors from the wheel)
    "enginex": "muh.codegen.engines.enginex",  # the competition's EngineX fork of vLLM 0.6.3 (BI-V100)
}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> EnginePlugin | None:
    path = REGISTRY.get(name)
    return None if path is None else importlib.import_module(path).ENGINE
