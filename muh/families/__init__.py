"""The kernel families muh generates, one record each (``muh/families/<name>.py``, see base.py).

Adding a family: write its record and its kernel source (``muh/codegen/kernels/templates/
<name>.cu.j2``, static CUDA in ``<name>.cuh``), then add its name below.
"""
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


@lru_cache(maxsize=None)
def get(name: str):
    """The record of family ``name`` (KeyError when muh generates no kernels for it)."""
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"muh.families.{name}").RECORD


def records() -> list:
    return [get(n) for n in NAMES]


def api() -> list:
    """Every function of the generated C interface: the common entry points, then each family's."""
    from muh.families.base import COMMON_API

    return list(COMMON_API) + [f for r in records() for f in r.api]
