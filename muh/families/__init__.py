"""The kernel families muh generates, one record each (``muh/families/<name>.py``, see base.py).

Adding a family: write its record and its kernel source (``muh/codegen/kernels/templates/
<name>.cu.j2``, static CUDA in ``<name>.cuh``), then add its name to ``registry.NAMES``; to tune it,
its record's ``harness`` names its fragment of the tuning harness (``templates/<name>.harness.cu.j2``).
"""
from __future__ import annotations

from muh.families.base import api
from muh.families.registry import ALL, NAMES, OPS, find, get, ops_records, records, tunable

__all__ = ["ALL", "NAMES", "OPS", "api", "find", "get", "ops_records", "records", "tunable"]
