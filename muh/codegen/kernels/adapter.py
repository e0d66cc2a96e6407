"""Build KernelConfigs from the core's derived spec (the one place that reads ``Derived``)."""
from __future__ import annotations

from muh.codegen.kernels import config as C

FAMILIES = ("reduce", "scan", "transform", "topk")


def _delay_kind(kind: str) -> str:
    return kind if kind in ("no_delay", "fixed") else f"exponential_{kind}"


class MissingValue(ValueError):
    """A policy lacks a number the kernels need (reported as a diagnostic by the caller)."""


def _int(p, dim: str, default=None) -> int:
    v = p.value(dim, default)
    if v is None:
        raise MissingValue(f"{p.family}.{p.key} on {p.hardware}: `{dim}` is not set (and has no default)")
    return int(v)


def scan_policy(get, where: str = "scan") -> C.ScanPolicy:
    """The scan kernels' policy from a policy's dims (``get(dim, default)``): the spec adapter and the
    tuner's compile units both build it here. ``modifier`` is the load's cache modifier,
    ``store_modifier`` the store's; ``window`` 0 (unset) is one predecessor per lane of the warp."""
    kw = {}
    delay = get("delay", None)
    if delay is not None:
        kw = dict(delay=_delay_kind(delay.kind), delay_ns=int(delay.ns), l2_write_ns=int(delay.l2_write_latency))
    for dim, key, default in (("vec", "vec", 16), ("window", "window", 0)):
        v = get(dim, None)
        kw[key] = default if v is None else int(v)
    kw["load"] = str(get("modifier", None) or "default")
    kw["store"] = str(get("store_modifier", None) or "default")
    threads, items = get("threads", None), get("items", None)
    if threads is None or items is None:
        raise MissingValue(f"{where}: `threads` and `items` must be set")
    return C.ScanPolicy(int(threads), int(items), **kw)


def has_ptx_memory_model(hw) -> bool:
    """ld/st.relaxed.gpu (16-byte vector forms) and .cs cache hints: NVIDIA compute capability 7.0+."""
    return hw.vendor == "nvidia" and (hw.compute_capability or 0) >= 70


def config_from_derived(derived, hw) -> C.KernelConfig:
    """The kernels' config for hardware ``hw`` (a schema Hardware) from ``derived``.
    Raises MissingValue when a policy lacks a required number."""
    tc = hw.toolchain
    reduce, scan, transform, topk = {}, {}, {}, {}
    for alg in derived.of("reduce", hw.name):
        for d in C.REDUCE_DTYPES:
            if d in alg.policies:
                p = alg.for_type(d, "plus")
                reduce[d] = C.ReducePolicy(_int(p, "threads"), _int(p, "items"), _int(p, "vec", 1),
                                           str(p.value("modifier", "ldg")))
    for alg in derived.of("scan", hw.name):
        for d in C.SCAN_DTYPES:
            if d in alg.policies:
                p = alg.for_type(d, "plus")
                _int(p, "threads"), _int(p, "items")  # a clean diagnostic when unset
                scan[d] = scan_policy(p.value, f"{p.family}.{p.key} on {p.hardware}")
    for alg in derived.of("transform", hw.name):
        for d in C.TRANSFORM_DTYPES:
            if d in alg.policies:
                p = alg.for_type(d)
                transform[d] = C.TransformPolicy(_int(p, "threads", 256), _int(p, "bytes_in_flight", C.DEFAULT_BYTES_IN_FLIGHT))
    for alg in derived.of("topk", hw.name):
        for d in C.TOPK_DTYPES:
            if d in alg.policies:
                p = alg.for_type(d)
                topk[d] = C.TopkPolicy(_int(p, "threads", 512), _int(p, "items", 4), _int(p, "bits_per_pass", 11))
    return C.KernelConfig(
        name=hw.name, warp_size=hw.warp_size, smem_per_block=hw.smem_per_block,
        cxx=int(tc.cxx), cuda=str(tc.cuda),
        has_nanosleep=hw.vendor == "nvidia" and (hw.compute_capability or 0) >= 70,
        has_ptx_memory_model=has_ptx_memory_model(hw),
        reduce=reduce, scan=scan, transform=transform, topk=topk,
    )


def configs_from_context(ctx) -> list[tuple[str, C.KernelConfig]]:
    """(path prefix, config) for every hardware with kernel algorithms, plus the emulation build
    (``ctx.options['emulate_warp']``: that logical warp on a 32-lane GPU) under ``emu<W>/``.
    Configs the kernels cannot be generated for become diagnostics on the hardware's span."""
    return [(prefix, cfg) for prefix, _, cfg in targets(ctx)]


def targets(ctx, report: bool = True) -> list[tuple[str, object, C.KernelConfig]]:
    """(path prefix, schema Hardware, config) as ``configs_from_context``; with ``report=False`` the
    configs that cannot be generated are skipped silently (for emitters built on the kernels', which
    report them once)."""
    from muh.diagnostics import Diagnostic

    hws = sorted({a.hardware.name: a.hardware for a in ctx.derived.algorithms.values()
                  if a.family in FAMILIES}.items())
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
            errs = C.validate(c)
            if c is not cfg and errs:  # the emulation build: what only the option causes is the option's error
                own = [e for e in errs if e not in C.validate(cfg)]
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
