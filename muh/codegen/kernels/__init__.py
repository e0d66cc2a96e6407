"""Kernel emitter: the warp layer, block collectives and one kernel source per family (muh/families/).

``generate(cfg, header)`` renders the files for one ``KernelConfig``; ``emit(ctx)`` is the registry
entry: it renders the configs derive validated (``muh.derive.kernels.targets``) and passes on
derive's diagnostics for those that cannot be generated.
"""

from __future__ import annotations

from muh.codegen.kernels.emitter import files, generate
from muh.families.base import KernelConfig, KernelConfigError
from muh.families.registry import validate

__all__ = ["KernelConfig", "KernelConfigError", "emit", "files", "generate", "targets", "validate"]


def targets(ctx, report: bool = False):
    """derive's kernel builds of this build (``muh.derive.kernels.targets`` with its ``--emulate-warp``);
    ``report``: add derive's diagnostics to the build's (the kernels emitter does, once)."""
    from muh.derive.kernels import targets as derived_targets

    found, diags = derived_targets(ctx.spec, ctx.derived, ctx.options.get("emulate_warp"))
    if report:
        ctx.diagnostics.extend(diags)
    return found


def emit(ctx):
    from muh.codegen.base import GeneratedFile

    out = []
    for t in targets(ctx, report=True):
        for path, content in generate(t.config, ctx.header):
            out.append(GeneratedFile(f"{t.prefix}{path}", content))
    return out
