"""The kernels' configuration derived from a spec: each family's policy read by its record.

``config_from_derived`` is the one place that turns resolved policies into a ``KernelConfig``;
``muh build`` (codegen/kernels) and ``muh tune`` (a candidate's policy) both call it, so a policy
builds exactly when tune can measure it. The numbers each kernel is instantiated with are then
the records' ``params`` (value, rule, inputs), printed into params.cuh.
"""
from __future__ import annotations

from muh import families
from muh.families.base import KernelConfig

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
    return KernelConfig(name=hw.name, warp_size=hw.warp_size, smem_per_block=hw.smem_per_block,
                        smem_per_block_optin=None if hw.smem_per_block_optin is None else int(hw.smem_per_block_optin),
                        cxx=int(tc.cxx), cuda=str(tc.cuda), has_nanosleep=has_nanosleep(hw),
                        has_ptx_memory_model=has_ptx_memory_model(hw), has_bulk_copy=has_bulk_copy(hw),
                        clock_ghz=clock, clock_from=why)


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
                        buckets[d] = tuple((b.lo, b.hi, read_policy(rec.name, b.value, f"{where} ({b.label})"))
                                           for b in p.buckets)
                        keys[d] = p.buckets[0].size
        if table:
            cfg = cfg.with_policies(rec.name, table, buckets, keys)
    return cfg
