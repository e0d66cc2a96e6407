"""Engine plug-ins: one folder per engine, one line each in ``REGISTRY``.

An engine plug-in (``base.EnginePlugin``) supplies its variants (data), its flag table and the resolve
step (deploy block → plan); its files and checks plug into codegen and check (docs/architecture.md).
``deploy { engine = <name> "<version>" }`` picks one.
"""
from __future__ import annotations

from muh.engines import vllm
from muh.engines.base import EnginePlugin

REGISTRY: dict[str, EnginePlugin] = {
    "vllm": vllm.ENGINE,        # stock vLLM (flag table and anchors from the wheel)
    "enginex": vllm.ENGINEX,    # the competition's EngineX fork of vLLM 0.6.3 (BI-V100): a variant of vllm
}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str) -> EnginePlugin | None:
    return REGISTRY.get(name)
