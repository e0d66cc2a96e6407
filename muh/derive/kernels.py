"""The kernels' configuration derived from a spec: each family's policy read by its record.

``config_from_derived`` is the one place that turns resolved policies into a ``KernelConfig``;
``muh build`` (``targets``: every hardware's config, validated) and ``muh tune`` (a candidate's
policy) both call it, so a policy builds exactly when tune can measure it. The numbers each kernel is
instantiated with are then the records' ``params`` (value, rule, inputs), printed into params.cuh.
Every reason the kernels cannot be generated is a diagnostic made here (E-KERNELS, and E-OPTION for
what only ``--emulate-warp`` causes); codegen renders the configs ``targets`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from muh import families
from muh.diagnostics import Diagnostic
from muh.families.base import KernelConfig
from muh.families.registry import validate

DEFAULT_CLOCK_GHZ = 1.5  # only paces the busy-wait of hardware without __nanosleep


class MissingValue(ValueError):
    """A policy lacks a number the kernels need (reported as a diagnostic by the caller)."""


def has_nanosleep(hw) -> bool:
    """__nanosleep exists on NVIDIA sm_70 and newer; unknown compute capability: assume not."""
    return hw.vendor == "nvidia" and (hw.compute_capability or 0) >= 70


def has_ptx_memory_model(hw) -> bool:
    """ld/st.relaxed.gpu (16-byte vector forms) and .cs cache hints: NVIDIA compute capability 7.0+."""
    return hw.vendor == "nvidia" and (hw.compute_capability or 0) >= 70


def has_bulk_copy(hw) -> bool:
    """cp.async.bulk (global -> shared, completing on an mbarrier): NVIDIA compute capability 9.0+."""
    return hw.vendor == "nvidia" and (hw.compute_capability or 0) >= 90


def hardware_config(hw) -> KernelConfig:
    """The hardware half of the kernels' config (no policies yet)."""
    tc = hw.toolchain
    if hw.clock:
        clock, why = hw.clock / 1e9, f"hardware {hw.name}: clock"
    else:
        clock, why = DEFAULT_CLOCK_GHZ, f"default {DEFAULT_CLOCK_GHZ} GHz: hardware {hw.name} declares no clock"
    return KernelConfig(
        name=hw.name,
        warp_size=hw.warp_size,
        smem_per_block=hw.smem_per_block,
        smem_per_block_optin=None if hw.smem_per_block_optin is None else int(hw.smem_per_block_optin),
        cxx=int(tc.cxx),
        cuda=str(tc.cuda),
        has_nanosleep=has_nanosleep(hw),
        has_ptx_memory_model=has_ptx_memory_model(hw),
        has_bulk_copy=has_bulk_copy(hw),
        clock_ghz=clock,
        clock_from=why,
    )


_REQUIRED = object()


def read_policy(family: str, value, where: str = ""):
    """The record's policy from ``value(dim, default)`` (a resolved policy's or a tune candidate's).

    The record calls ``get(dim)`` for a number it needs (MissingValue when unset) and
    ``get(dim, default)`` for one with a default (``None`` included)."""

    def get(dim, default=_REQUIRED):
        v = value(dim, None)
        if v is None:
            if default is _REQUIRED:
                raise MissingValue(f"{where}: `{dim}` is not set (and has no default)")
            return default
        return v

    return families.get(family).read(get)


def config_from_derived(derived, hw) -> KernelConfig:
    """The kernels' config for hardware ``hw`` (a schema Hardware) from ``derived``.
    Raises MissingValue when a policy lacks a required number."""
    cfg = hardware_config(hw)
    for rec in families.records():
        table, buckets, keys = {}, {}, {}
        for alg in derived.of(rec.name, hw.name):
            for d in rec.dtypes:
                if d in alg.policies:
                    p = alg.for_type(d, rec.op)
                    where = f"{p.family}.{p.key} on {p.hardware}"
                    table[d] = read_policy(rec.name, p.value, where)
                    if p.buckets:
                        buckets[d] = tuple(
                            (b.lo, b.hi, read_policy(rec.name, b.value, f"{where} ({b.label})")) for b in p.buckets
                        )
                        keys[d] = p.buckets[0].size
        if table:
            cfg = cfg.with_policies(rec.name, table, buckets, keys)
    return cfg


@dataclass(frozen=True)
class Target:
    """One kernel build of a spec: its folder prefix, the schema Hardware and the validated config."""

    prefix: str  # "" for a single hardware, "<name>/" for several; "<…>emu<W>/" for the emulation build
    hardware: object
    config: KernelConfig


def targets(spec, derived, emulate_warp: int | None = None) -> tuple[list[Target], list[Diagnostic]]:
    """The kernel builds of ``spec`` for every hardware with kernel algorithms, plus the emulation build
    (``emulate_warp``: that logical warp on a 32-lane GPU) under ``emu<W>/``; and the diagnostics of the
    configs that cannot be generated (those are left out): E-KERNELS on the hardware's span, E-OPTION
    for what only the emulation causes."""
    hws = sorted(
        {a.hardware.name: a.hardware for a in derived.algorithms.values() if a.family in families.NAMES}.items()
    )
    out: list[Target] = []
    diags: list[Diagnostic] = []
    for name, hw in hws:
        base = "" if len(hws) == 1 else f"{name}/"
        try:
            cfg = config_from_derived(derived, hw)
        except (MissingValue, TypeError, ValueError) as e:
            diags.append(
                Diagnostic(
                    "E-KERNELS", f"kernels for `{name}` cannot be generated: {e}", spec.span_of(("hardware", name))
                )
            )
            continue
        cands = [(base, cfg)]
        if emulate_warp is not None:
            cands.append((f"{base}emu{emulate_warp}/", cfg.emulated(int(emulate_warp), 32)))
        for prefix, c in cands:
            errs = validate(c)
            if c is not cfg and errs:  # the emulation build: what only the option causes is the option's error
                own = [e for e in errs if e not in validate(cfg)]
                if own:
                    powers = ", ".join(str(2**i) for i in range(0, 9))
                    width = "power" in own[0] or "physical warps" in own[0]
                    diags.append(
                        Diagnostic(
                            "E-OPTION",
                            f"--emulate-warp {emulate_warp}: {own[0]}"
                            + (f" (and {len(own) - 1} more)" if len(own) > 1 else ""),
                            None,
                            hint=f"a logical warp is a power of two up to 8 physical warps of 32: {powers}"
                            if width
                            else "the policies' threads must be multiples of the emulated warp: pick a smaller "
                            "--emulate-warp, or change the policy",
                        )
                    )
                    continue
            if errs:
                diags.append(
                    Diagnostic(
                        "E-KERNELS",
                        f"kernels for `{c.name}` cannot be generated: " + "; ".join(errs),
                        spec.span_of(("hardware", name)),
                        hint="change the policy (threads a multiple of the warp, tiles within smem_per_block)",
                    )
                )
            else:
                out.append(Target(prefix, hw, c))
    return out, diags


PROBE_THREADS = 256
"""Threads per block of the probe's warp-layer tests (whole logical warps at 16…128 lanes)."""


def probe_config(derived, hw, emulate: int | None = None) -> KernelConfig:
    """The kernels' config of ``hw`` sized for the probe's blocks (the warp layer's exchange buffer holds one slot
    per thread of the largest block); ``emulate``: that logical warp on a 32-lane GPU. Raises ValueError (why not)."""
    from dataclasses import replace

    from muh.families import reduce

    try:
        cfg = config_from_derived(derived, hw)
    except (MissingValue, TypeError, ValueError) as e:  # a policy the kernels need is incomplete
        raise ValueError(str(e)) from None
    cfg = replace(cfg, name=f"{hw.name}-probe", policies={"reduce": {"float32": reduce.Policy(PROBE_THREADS, 1, 1)}})
    return cfg.emulated(int(emulate), 32) if emulate else cfg


def probe_problems(spec, derived) -> list[str]:
    """Why no probe bundle can be built for ``spec`` (empty: one can): it measures one card, whose warp layer must
    generate."""
    hws = list(spec.hardware.values())
    if len(hws) != 1:
        return [f"a probe bundle is for one hardware block; the spec has {len(hws)}"]
    try:
        cfg = probe_config(derived, hws[0])
    except ValueError as e:
        return [f"the probe's kernels for `{hws[0].name}` cannot be generated: {e}"]
    errs = validate(cfg)
    return [f"the warp layer for `{hws[0].name}` cannot be generated: " + "; ".join(errs)] if errs else []
