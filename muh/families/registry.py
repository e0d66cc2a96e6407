"""The registry of kernel families: one line per family (see muh/families/__init__.py)."""

from __future__ import annotations

import importlib
from functools import lru_cache

from muh.families.base import COMMON_API, CFunc, KernelConfig, pow2

# The registry: one line per family, in the order the generated files list them.
NAMES = (
    "reduce",
    "scan",
    "transform",
    "topk",
    "histogram",
    "segmented_reduce",
    "radix_sort",
)
# The LLM ops' tunable policies: read into the ops' Policy<T, B> (muh/derive/ops.py), measured
# by `muh tune` like the kernel families; not kernels of their own (``records()`` leaves them out).
OPS = (
    "rms_norm",
    "silu_and_mul",
)


@lru_cache(maxsize=None)
def get(name: str):
    """The record of family ``name`` (KeyError when muh generates no kernels for it)."""
    if name not in NAMES + OPS:
        raise KeyError(name)
    return importlib.import_module(f"muh.families.{name}").RECORD


def __getattr__(name: str):
    """``ALL``: every family with a record (``NAMES + OPS``, read when asked, so the one line in ``NAMES``
    is all a new family adds)."""
    if name == "ALL":
        return NAMES + OPS
    raise AttributeError(name)


def find(name: str):
    """The record of family ``name``, or None where muh has none (a catalogue family it only describes)."""
    return get(name) if name in NAMES + OPS else None


def records() -> list:
    """The kernel families (each generates kernels/<name>.cu)."""
    return [get(n) for n in NAMES]


def ops_records() -> list:
    """The LLM ops' policy families (registry.OPS)."""
    return [get(n) for n in OPS]


def tunable() -> list:
    """Every family `muh tune` can measure: kernel and ops families with a harness."""
    return [r for r in records() + ops_records() if r.tunable and r.harness is not None]


def api() -> list[CFunc]:
    """Every function of the generated C interface: the common entry points, then each family's."""
    return list(COMMON_API) + [f for r in records() for f in r.api]


def validate(cfg: KernelConfig) -> list[str]:
    """Every reason the kernels cannot be generated for ``cfg`` (empty: fine)."""
    errs: list[str] = []
    w, p = cfg.warp_size, cfg.physical
    if not pow2(w) or not pow2(p):
        errs.append(f"warp sizes must be powers of two (logical {w}, physical {p})")
        return errs  # every later rule divides by the warp
    if w > p and w > 8 * p:
        errs.append(f"emulated warp {w} is more than 8 physical warps of {p}")
    if cfg.cxx < 14:
        errs.append("C++14 is the lowest supported language level")
    unknown = sorted(set(cfg.policies) - set(NAMES))
    if unknown:
        errs.append(f"no kernels for famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")
    for rec in records():
        bad = sorted(set(cfg.of(rec.name)) - set(rec.dtypes))
        if bad:
            errs.append(f"{rec.name}: no kernels for {', '.join(bad)} (types: {', '.join(rec.dtypes)})")
        errs += rec.validate(cfg)
    return errs
