"""The kernels' configuration derived from a spec: each family's policy read by its record.

``config_from_derived`` is the one place that turns resolved policies into a ``KernelConfig``;
``muh build`` (``targets``: every hardware's config, validated) and ``muh tune`` (a candidate's
policy) both call it, so a policy builds exactly when tune can measure it. The numbers each kernel is
instantiated with are then the records' ``params`` (value, rule, inputs), printed into params.cuh.
Every reason the kernels cannot be generated is a diagnostic made here (E-KERNELS, and E-OPTION for
what only ``--emulate-warp`` causes); codegen renders the configs ``targets`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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


class PolicyReader:
    """What a family record's ``read(get)`` receives: the one path from a resolved policy (or a tune
    candidate) to the record.

    ``get(dim)`` is a number the record needs (MissingValue when unset), ``get(dim, default)`` one with a
    default (``None`` included); ``get.sub(name)`` reads sub-policy ``name`` (a block inside the policy,
    ``onesweep { … }``; the catalogue's ``Tuning.subs``) the same way, and ``get.origin(dim)`` is a value's
    provenance (its ``Resolved``: origin, rule, inputs, source; None for a value a tune candidate varies
    — its sub-policies are the spec's resolved ones — or an unset one)."""

    def __init__(self, value, where: str = "", subs: dict | None = None, origin=None, sub: str | None = None):
        self._value = value  # (dim, default) -> value
        self._origin = origin or (lambda dim: None)  # dim -> Resolved | None
        self._subs = subs or {}  # sub-policy -> {dim: Resolved}
        self._where = where
        self._sub = sub

    def __call__(self, dim: str, default=_REQUIRED):
        v = self._value(dim, None)
        if v is None:
            if default is _REQUIRED:
                what = f"{self._sub}.{dim}" if self._sub else dim
                raise MissingValue(f"{self._where}: `{what}` is not set (and has no default)")
            return default
        return v

    def origin(self, dim: str):
        return self._origin(dim)

    def sub(self, name: str) -> "PolicyReader":
        """Sub-policy ``name``'s values (none set: every ``get`` answers its default)."""
        return PolicyReader(
            _values(self._subs.get(name) or {}), self._where, origin=(self._subs.get(name) or {}).get, sub=name
        )

    @classmethod
    def of(cls, policy, where: str = "", subs: dict | None = None) -> "PolicyReader":
        """The reader of a resolved policy or size bucket (``values``: dim → Resolved) with its
        sub-policies (``subs``; a bucket's are its policy's)."""
        return cls(
            _values(policy.values),
            where,
            getattr(policy, "subs", None) if subs is None else subs,
            origin=policy.values.get,
        )


def _values(resolved: dict):
    """``(dim, default) -> value`` over ``{dim: Resolved}``."""
    return lambda dim, default=None: resolved[dim].value if dim in resolved else default


def read_policy(family: str, value, where: str = "", subs: dict | None = None):
    """The record's policy from a ``PolicyReader`` (a resolved policy's) or from ``value(dim, default)``
    (a tune candidate's values; ``subs``: its sub-policies, {name: {dim: Resolved}})."""
    get = value if isinstance(value, PolicyReader) else PolicyReader(value, where, subs)
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
                    table[d] = read_policy(rec.name, PolicyReader.of(p, where))
                    if p.buckets:
                        buckets[d] = tuple(
                            (b.lo, b.hi, read_policy(rec.name, PolicyReader.of(b, f"{where} ({b.label})", p.subs)))
                            for b in p.buckets
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

    @property
    def native(self) -> bool:
        """Built for the hardware's own warp (not an emulation build, a test device)."""
        return self.config.warp_size == self.hardware.warp_size


@dataclass(frozen=True)
class KernelBuilds:
    """The kernels' configs of a spec, made once by derive (``Derived.kernels``) and read by every later
    stage: the kernels, ops and ops-package emitters, the probe, the clang_cuda check.

    ``configs``: each hardware with kernel families, its config as read from the policies (before
    validation: the probe sizes its own blocks from it); ``errors``: why a hardware's config could not be
    read; ``targets``: the validated builds, in order; ``diagnostics``: why the others are left out
    (E-KERNELS on the hardware's span). ``with_emulation(w)`` adds the emulation builds."""

    configs: dict = field(default_factory=dict)  # hardware name -> KernelConfig
    hardware: dict = field(default_factory=dict)  # hardware name -> schema Hardware
    errors: dict = field(default_factory=dict)  # hardware name -> why its config cannot be read
    spans: dict = field(default_factory=dict)  # hardware name -> its span in the spec (E-KERNELS points there)
    targets: tuple = ()  # Target, …
    diagnostics: tuple = ()  # Diagnostic, …
    _emulated: dict = field(default_factory=dict, compare=False, repr=False)

    def native(self) -> list[Target]:
        """The builds for each hardware's own warp (no emulation build)."""
        return [t for t in self.targets if t.native]

    def prefix_for(self, hardware: str) -> str | None:
        """The folder prefix of ``hardware``'s native build, or None when there is none."""
        return next((t.prefix for t in self.native() if t.hardware.name == hardware), None)

    def with_emulation(self, emulate_warp: int | None) -> "KernelBuilds":
        """These builds plus, after each hardware's, its emulation build (``emulate_warp``: that logical
        warp on a 32-lane GPU) under ``<prefix>emu<W>/``; what only the emulation causes is an E-OPTION."""
        if emulate_warp is None:
            return self
        w = int(emulate_warp)
        if w not in self._emulated:
            self._emulated[w] = _emulate(self, w)
        return self._emulated[w]


def kernel_builds(spec, derived) -> KernelBuilds:
    """The kernel builds of ``spec`` (every hardware with kernel algorithms), each config read once."""
    hws = sorted(
        {a.hardware.name: a.hardware for a in derived.algorithms.values() if a.family in families.NAMES}.items()
    )
    configs, errors, out, diags = {}, {}, [], []
    for name, hw in hws:
        base = "" if len(hws) == 1 else f"{name}/"
        try:
            cfg = config_from_derived(derived, hw)
        except (MissingValue, TypeError, ValueError) as e:
            errors[name] = str(e)
            diags.append(
                Diagnostic(
                    "E-KERNELS", f"kernels for `{name}` cannot be generated: {e}", spec.span_of(("hardware", name))
                )
            )
            continue
        configs[name] = cfg
        errs = validate(cfg)
        if errs:
            diags.append(
                Diagnostic(
                    "E-KERNELS",
                    f"kernels for `{cfg.name}` cannot be generated: " + "; ".join(errs),
                    spec.span_of(("hardware", name)),
                    hint="change the policy (threads a multiple of the warp, tiles within smem_per_block)",
                )
            )
        else:
            out.append(Target(base, hw, cfg))
    spans = {name: spec.span_of(("hardware", name)) for name, _ in hws}
    return KernelBuilds(configs, dict(hws), errors, spans, tuple(out), tuple(diags))


def _emulate(builds: KernelBuilds, emulate_warp: int) -> KernelBuilds:
    out, diags = [], list(builds.diagnostics)
    by_name = {t.hardware.name: t for t in builds.targets}
    multi = len(builds.hardware) > 1
    for name, hw in sorted(builds.hardware.items()):
        if name not in builds.configs:
            continue
        cfg = builds.configs[name]
        base = f"{name}/" if multi else ""
        if name in by_name:
            out.append(by_name[name])
        c = cfg.emulated(emulate_warp, 32)
        errs = validate(c)
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
                    else "the policies' threads must be multiples of the emulated warp: "
                    "pick a smaller --emulate-warp, or change the policy",
                )
            )
        elif errs:
            diags.append(
                Diagnostic(
                    "E-KERNELS",
                    f"kernels for `{c.name}` cannot be generated: " + "; ".join(errs),
                    builds.spans.get(name),
                    hint="change the policy (threads a multiple of the warp, tiles within smem_per_block)",
                )
            )
        else:
            out.append(Target(f"{base}emu{emulate_warp}/", hw, c))
    return replace(builds, targets=tuple(out), diagnostics=tuple(diags), _emulated={})


def targets(spec, derived, emulate_warp: int | None = None) -> tuple[list[Target], list[Diagnostic]]:
    """The kernel builds of ``derived`` (``Derived.kernels``, made by derive) with the emulation build
    (``emulate_warp``), and the diagnostics of the configs that cannot be generated (those are left out)."""
    builds = derived.kernels.with_emulation(emulate_warp)
    return list(builds.targets), list(builds.diagnostics)


PROBE_THREADS = 256
"""Threads per block of the probe's warp-layer tests (whole logical warps at 16…128 lanes)."""


def probe_config(derived, hw, emulate: int | None = None) -> KernelConfig:
    """The kernels' config of ``hw`` sized for the probe's blocks (the warp layer's exchange buffer holds one slot
    per thread of the largest block); ``emulate``: that logical warp on a 32-lane GPU. Raises ValueError (why not)."""
    from dataclasses import replace

    from muh.families import reduce

    builds = derived.kernels  # derive's config of each hardware with kernels (made once there)
    if hw.name in builds.errors:  # a policy the kernels need is incomplete
        raise ValueError(builds.errors[hw.name])
    cfg = builds.configs.get(hw.name) or hardware_config(hw)
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
