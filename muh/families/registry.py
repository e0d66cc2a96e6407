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


@lru_cache(maxsize=None)
def get(name: str):
    """The record of family ``name`` (KeyError when muh generates no kernels for it)."""
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"muh.families.{name}").RECORD


def records() -> list:
    return [get(n) for n in NAMES]
