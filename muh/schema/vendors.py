"""What each vendor documents about its GPUs: the one table the hardware checks read.

A hardware block states its own facts (``max_threads_per_block``, …); a fact beyond what its vendor
documents for every device is refused at its line, since kernels launched with it fail at run time.
"""

from __future__ import annotations

from typing import NamedTuple, Optional


class Vendor(NamedTuple):
    max_threads_per_block: Optional[int]
    """The most threads one block may have on every device of the vendor (None: not documented)."""
    source: str
    """Where the vendor says so."""


VENDORS: dict[str, Vendor] = {
    "nvidia": Vendor(
        1024,
        "CUDA C++ Programming Guide, 'Features and Technical Specifications': at most 1024 "
        "threads per block on every compute capability",
    ),
    "iluvatar": Vendor(None, "no documented limit in the project's facts (shared/facts/target-bi100.md)"),
}
