"""The kernel families muh generates, one folder each (``muh/families/<name>/``, see base.py).

A family's folder holds everything of it: its record (``__init__.py``: ``RECORD``), its kernel source
(``<name>.cu.j2``, static CUDA in ``<name>.cuh``) and its fragment of the tuning harness
(``harness.cu.j2``). Adding a family: write that folder, then add its name to ``registry.NAMES``.
``calls`` is the families' Python API over the generated kernels (needs torch at call time).
"""

from __future__ import annotations

from muh.families import registry
from muh.families.registry import api, find, get, ops_records, records, tunable, validate

__all__ = ["ALL", "NAMES", "OPS", "api", "find", "get", "ops_records", "records", "tunable", "validate"]


def __getattr__(name: str):
    """``NAMES``, ``OPS``, ``ALL``: the registry's, read when asked (muh/families/registry.py is their one place)."""
    if name in ("NAMES", "OPS", "ALL"):
        return getattr(registry, name)
    raise AttributeError(name)
