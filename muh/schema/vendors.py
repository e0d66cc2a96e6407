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
    warp_sizes: tuple[int, ...]
    """The warp widths the vendor's devices have (a `warp_size` of another width is no device of it)."""
    warp_source: str
    """Where that is said or measured."""


VENDORS: dict[str, Vendor] = {
    "nvidia": Vendor(
        1024,
        "CUDA C++ Programming Guide, 'Features and Technical Specifications': at most 1024 "
        "threads per block on every compute capability",
        (32,),
        "CUDA C++ Programming Guide, 'Features and Technical Specifications': warp size 32 on every compute capability",
    ),
    "iluvatar": Vendor(
        None,
        "no documented limit (Iluvatar publishes none)",
        (64,),
        "the BI-V100 (CoreX) runs 64-lane warps: measured with `warpSize` inside a kernel "
        "(not in the vendor's public documents)",
    ),
}
