"""Kernel emitter: the warp layer, block collectives and one kernel source per family (muh/families/).

``generate(cfg, header)`` renders the files for one ``KernelConfig``; ``emit(ctx)`` is the registry
entry that builds the configs from the derived spec (``adapter.configs_from_context``).
"""
from __future__ import annotations

from muh.families.base import KernelConfig, KernelConfigError
from muh.families.registry import validate
from muh.codegen.kernels.emitter import files, generate

__all__ = ["KernelConfig", "KernelConfigError", "emit", "files", "generate", "validate"]


def emit(ctx):
    from muh.codegen.base import GeneratedFile
    from muh.codegen.kernels.adapter import configs_from_context

    out = []
    for prefix, cfg in configs_from_context(ctx):
        for path, content in generate(cfg, ctx.header):
            out.append(GeneratedFile(f"{prefix}{path}", content))
    return out
