"""Kernel emitter: the warp layer, block collectives and one kernel source per family (muh/families/).

``generate(cfg, header)`` renders the files for one ``KernelConfig``; ``emit(ctx)`` is the registry
entry: it renders the configs derive made and validated once (``Derived.kernels``,
muh/derive/kernels.py) and passes on derive's diagnostics for those that cannot be generated.
"""

from __future__ import annotations

from muh.codegen.kernels.emitter import files, generate
from muh.families.base import KernelConfig, KernelConfigError
from muh.families.registry import validate

__all__ = ["KernelConfig", "KernelConfigError", "builds", "emit", "files", "generate", "targets", "validate"]


def builds(ctx):
    """derive's kernel builds (``Derived.kernels``) with this build's ``--emulate-warp``: a
    ``muh.derive.kernels.KernelBuilds``, what every emitter and check of the kernels reads."""
    return ctx.derived.kernels.with_emulation(ctx.options.get("emulate_warp"))


def targets(ctx, report: bool = False):
    """The builds' targets (``muh.derive.kernels.Target``: prefix, hardware, config); ``report``: add
    derive's diagnostics to the build's (the kernels emitter does, once)."""
    found = builds(ctx)
    if report:
        ctx.diagnostics.extend(found.diagnostics)
    return list(found.targets)


def emit(ctx):
    from muh.codegen.base import GeneratedFile

    out = []
    for t in targets(ctx, report=True):
        for path, content in generate(t.config, ctx.header):
            out.append(GeneratedFile(f"{t.prefix}{path}", content))
    return out
