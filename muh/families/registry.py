"""The registry of kernel families: one line per family (see muh/families/__init__.py)."""
from __future__ import annotations

import importlib
from functools import lru_cache

# The registry: one line per family, in the order the generated files list them.
NAMES = (
    "reduce",
    "scan",
    "transform",
    "topk",
    "histogram",
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
    if name not in ALL:
        raise KeyError(name)
    return importlib.import_module(f"muh.families.{name}").RECORD


ALL = NAMES + OPS  # every family with a record


def find(name: str):
    """The record of family ``name``, or None where muh has none (a catalogue family it only describes)."""
    return get(name) if name in ALL else None


def records() -> list:
    """The kernel families (each generates kernels/<name>.cu)."""
    return [get(n) for n in NAMES]


def ops_records() -> list:
    """The LLM ops' policy families (registry.OPS)."""
    return [get(n) for n in OPS]


def tunable() -> list:
    """Every family `muh tune` can measure: kernel and ops families with a harness."""
    return [r for r in records() + ops_records() if r.tunable and r.harness is not None]
