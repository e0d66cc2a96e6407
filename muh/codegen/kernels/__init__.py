"""Kernel emitter: the warp layer, block collectives and the reduce / scan / transform / topk kernels.

``generate(cfg, header)`` renders the files for one ``KernelConfig``; ``emit(ctx)`` is the registry
entry that builds the config from the core's derived spec (``adapter.from_context``).
"""
from __future__ import annotations

from muh.codegen.kernels.config import KernelConfig, KernelConfigError, validate
from muh.codegen.kernels.emitter import FILES, generate

__all__ = ["FILES", "KernelConfig", "KernelConfigError", "emit", "generate", "validate"]


def emit(ctx):
    from muh.codegen.base import GeneratedFile
    from muh.codegen.kernels.adapter import configs_from_context

    out = []
    for prefix, cfg in configs_from_context(ctx):
        for path, content in generate(cfg, ctx.header):
            out.append(GeneratedFile(f"{prefix}{path}", content))
    return out
