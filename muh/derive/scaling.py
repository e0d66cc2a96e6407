"""CUB's policy scaling rules, generalised to the hardware (pure integer arithmetic).

CUB (cub/util_arch.cuh, CCCL 3.0.1) stores *nominal 4-byte* policies and scales them by the element
size with a fixed 48 KiB shared-memory budget and 32-thread rounding. muh takes both from the
hardware: ``smem`` (bytes) and ``warp`` (threads). With smem=49152, warp=32 these equal CUB's
MemBoundScaling / RegBoundScaling / Nominal4BItemsToItems / Nominal8BItemsToItems exactly (checked by
the parity suite).
"""

from __future__ import annotations

from typing import NamedTuple

CUB_SMEM = 48 * 1024
CUB_WARP = 32


class Scaled(NamedTuple):
    threads: int
    items: int


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _threads(t4: int, items: int, size: int, smem: int, warp: int) -> int:
    # CUB: min(T4, ceil_div(smem / (size * items), 32) * 32), with C++ integer division.
    return min(t4, _ceil_div(smem // (size * items), warp) * warp)


def mem_bound(t4: int, i4: int, size: int, smem: int = CUB_SMEM, warp: int = CUB_WARP) -> Scaled:
    """Memory-bound: items = max(1, min(4·I4/size, 2·I4)); threads capped by the smem tile."""
    items = max(1, min(i4 * 4 // size, i4 * 2))
    return Scaled(_threads(t4, items, size, smem, warp), items)


def reg_bound(t4: int, i4: int, size: int, smem: int = CUB_SMEM, warp: int = CUB_WARP) -> Scaled:
    """Register-bound: items = max(1, 4·I4 / max(4, size)); threads capped by the smem tile."""
    items = max(1, i4 * 4 // max(4, size))
    return Scaled(_threads(t4, items, size, smem, warp), items)


def nominal_4b_items(i4: int, size: int) -> int:
    """CUB's Nominal4BItemsToItems: clamp(4·I4/size, 1, I4) (select/unique/partition family)."""
    return min(i4, max(1, i4 * 4 // size))


def nominal_8b_items(i8: int, size: int) -> int:
    """CUB's Nominal8BItemsToItems: I8 for items up to 8 bytes, else clamp(ceil(8·I8/size), 1, I8)
    (adjacent_difference)."""
    if size <= 8:
        return i8
    return min(i8, max(1, _ceil_div(i8 * 8, size)))


def combined_items(i4: int, key: int, value: int, *, ceil: bool) -> int:
    """Items of a by-key policy from the sizes of both inputs: I4 while neither is wider than 8 bytes,
    else clamp(8·I4 / (key + value), 1, I4) — rounded down as CUB's Nominal4BItemsToItemsCombined
    (scan by key), up as the defaults of reduce by key and run-length encode."""
    if max(key, value) <= 8:
        return i4
    both = key + value
    return min(i4, max(1, _ceil_div(8 * i4, both) if ceil else 8 * i4 // both))


def no_scaling(t4: int, i4: int, size: int, smem: int = CUB_SMEM, warp: int = CUB_WARP) -> Scaled:
    return Scaled(t4, i4)


RULES = {
    "mem_bound": mem_bound,
    "reg_bound": reg_bound,
    "nominal_4b": lambda t4, i4, size, smem=CUB_SMEM, warp=CUB_WARP: Scaled(t4, nominal_4b_items(i4, size)),
    "nominal_8b": lambda t8, i8, size, smem=CUB_SMEM, warp=CUB_WARP: Scaled(t8, nominal_8b_items(i8, size)),
    "none": no_scaling,
    # By-key rules: ``size`` is the key's, ``value`` the second input's (CUB combines both sizes).
    "combined": lambda t4, i4, size, smem=CUB_SMEM, warp=CUB_WARP, value=None: Scaled(
        t4, combined_items(i4, size, size if value is None else value, ceil=False)
    ),
    "combined_ceil": lambda t4, i4, size, smem=CUB_SMEM, warp=CUB_WARP, value=None: Scaled(
        t4, combined_items(i4, size, size if value is None else value, ceil=True)
    ),
}
#: Rules that read the size of a second input (``value``) besides the element's.
COMBINED = ("combined", "combined_ceil")

FORMULAS = {
    "mem_bound": "items = max(1, min(4*I4/size, 2*I4)); threads = min(T4, ceil(smem/(size*items)/warp)*warp)",
    "reg_bound": "items = max(1, 4*I4/max(4, size)); threads = min(T4, ceil(smem/(size*items)/warp)*warp)",
    "nominal_4b": "items = min(I4, max(1, 4*I4/size)); threads = T4",
    "nominal_8b": "items = I8 if size <= 8 else min(I8, max(1, ceil(8*I8/size))); threads = T8",
    "none": "threads = T4; items = I4",
    "combined": "items = I4 if max(key, value) <= 8 else min(I4, max(1, 8*I4/(key+value))); threads = T4",
    "combined_ceil": "items = I4 if max(key, value) <= 8 else min(I4, max(1, ceil(8*I4/(key+value)))); threads = T4",
}
