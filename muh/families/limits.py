"""The hardware limits a block is held to: the one place the rules are written.

A policy's block of ``threads`` threads (each ``items`` items of ``size`` bytes) fits a hardware when

- ``warp``: threads is a whole number of warps — not asked of a hardware that keeps CUB's own
  policies (``cub_parity``: CUB takes any count, e.g. 96);
- ``block``: threads is at most the hardware's ``max_threads_per_block``;
- ``tile``: a family that stages its tile in shared memory (the catalogue's ``stages_tile``) fits the
  tile, threads × items × size bytes, in ``smem_per_block``.

A hardware itself is consistent when its ``max_threads_per_block`` is a whole number of its warps.
validate (E-WARP, E-THREADS), derive (E-SMEM), the kernels' checks (muh/families/base.py
``warp_checks``, the ops' targets) and the generated ``static_assert``s (muh/codegen/cxx/tuning.py)
ask here; each words its own message. Pure Python (the runtime may import it).
"""

from __future__ import annotations

#: The limits, in the order they are checked and asserted.
LIMITS = ("warp", "block", "tile")

#: Each limit as a C++ condition over the names the generated header gives the values.
CXX = {
    "warp": "{threads} % {warp_size} == 0",
    "block": "{threads} <= {max_threads_per_block}",
    "tile": "{threads} * {items} * {size} <= {smem_per_block}",
}


def applying(cub_parity: bool, stages_tile: bool) -> tuple[str, ...]:
    """The limits a family's policies are held to on a hardware."""
    return tuple(n for n in LIMITS if not (n == "warp" and cub_parity) and not (n == "tile" and not stages_tile))


def whole_warps(threads: int, warp_size: int) -> bool:
    """``warp``: ``threads`` is a whole number of warps."""
    return threads % warp_size == 0


def warp_neighbours(threads: int, warp_size: int) -> tuple[int, int]:
    """The whole-warp counts on either side of ``threads`` (at least one warp): the fix to suggest."""
    lo = max(warp_size, threads // warp_size * warp_size)
    return lo, lo + warp_size


def block_fits(threads: int, max_threads_per_block: int) -> bool:
    """``block``: at most ``max_threads_per_block`` threads."""
    return threads <= max_threads_per_block


def tile_bytes(threads: int, items: int, size: int) -> int:
    """Shared memory of a staged tile: threads × items × size bytes."""
    return threads * items * size


def tile_fits(threads: int, items: int, size: int, smem_per_block: int) -> bool:
    """``tile``: the staged tile fits ``smem_per_block``."""
    return tile_bytes(threads, items, size) <= smem_per_block


def largest_items(threads: int, size: int, smem_per_block: int) -> int:
    """The most items per thread whose tile fits at ``threads`` (0: not even one)."""
    return smem_per_block // (threads * size)
