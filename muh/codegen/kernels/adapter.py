"""The kernels' configs of a build: derive's config per hardware, plus the emulation build."""
from __future__ import annotations

from muh import families
from muh.derive.kernels import MissingValue, config_from_derived
from muh.families.base import KernelConfig
from muh.families.registry import validate


def configs_from_context(ctx) -> list[tuple[str, KernelConfig]]:
    """(path prefix, config) for every hardware with kernel algorithms, plus the emulation build
    (``ctx.options['emulate_warp']``: that logical warp on a 32-lane GPU) under ``emu<W>/``.
    Configs the kernels cannot be generated for become diagnostics on the hardware's span."""
    return [(prefix, cfg) for prefix, _, cfg in targets(ctx)]


def targets(ctx, report: bool = True) -> list[tuple[str, object, KernelConfig]]:
    """(path prefix, schema Hardware, config) as ``configs_from_context``; with ``report=False`` the
    configs that cannot be generated are skipped silently (for emitters built on the kernels', which
    report them once)."""
    from muh.diagnostics import Diagnostic

    hws = sorted({a.hardware.name: a.hardware for a in ctx.derived.algorithms.values()
                  if a.family in families.NAMES}.items())
    out = []
    emulate = ctx.options.get("emulate_warp")
    for name, hw in hws:
        base = "" if len(hws) == 1 else f"{name}/"
        try:
            cfg = config_from_derived(ctx.derived, hw)
        except (MissingValue, TypeError, ValueError) as e:
            if report:
                ctx.diagnostics.append(Diagnostic("E-KERNELS", f"kernels for `{name}` cannot be generated: {e}",
                                                  ctx.spec.span_of(("hardware", name))))
            continue
        cands = [(base, cfg)]
        if emulate is not None:
            cands.append((f"{base}emu{emulate}/", cfg.emulated(int(emulate), 32)))
        for prefix, c in cands:
            errs = validate(c)
            if c is not cfg and errs:  # the emulation build: what only the option causes is the option's error
                own = [e for e in errs if e not in validate(cfg)]
                if own and report:
                    powers = ", ".join(str(2 ** i) for i in range(0, 9))
                    width = "power" in own[0] or "physical warps" in own[0]
                    ctx.diagnostics.append(Diagnostic(
                        "E-OPTION", f"--emulate-warp {emulate}: {own[0]}" + (f" (and {len(own) - 1} more)" if len(own) > 1 else ""), None,
                        hint=f"a logical warp is a power of two up to 8 physical warps of 32: {powers}" if width else
                        "the policies' threads must be multiples of the emulated warp: pick a smaller --emulate-warp, or change the policy"))
                    continue
            if errs and report:
                ctx.diagnostics.append(Diagnostic(
                    "E-KERNELS", f"kernels for `{c.name}` cannot be generated: " + "; ".join(errs),
                    ctx.spec.span_of(("hardware", name)),
                    hint="change the policy (threads a multiple of the warp, tiles within smem_per_block)"))
            elif not errs:
                out.append((prefix, hw, c))
    return out
