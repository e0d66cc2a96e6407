"""Units are part of the language: sizes, bandwidths, durations, frequencies, converted exactly.

A number written with a unit arrives here as a ``Quantity``; a field typed ``Bytes`` (or
``Bandwidth``, ``Duration``) accepts only quantities of its dimension and stores an exact integer
in the base unit (bytes, bytes per second, picoseconds kept as nanoseconds with Decimal).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

SIZE = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
TIME_NS = {"ns": Decimal(1), "us": Decimal(1000), "ms": Decimal(10**6), "s": Decimal(10**9)}
FREQ = {"MHz": 10**6, "GHz": 10**9}

DIMENSION_OF_UNIT: dict[str, str] = {
    **{u: "size" for u in SIZE},
    **{f"{u}/s": "bandwidth" for u in SIZE},
    **{u: "time" for u in TIME_NS},
    **{u: "frequency" for u in FREQ},
}
PREFERRED = {"size": "KiB", "bandwidth": "GB/s", "time": "us", "frequency": "GHz"}
UNITS_BY_DIMENSION = {
    "size": "B, KB, MB, GB, KiB, MiB, GiB",
    "bandwidth": "GB/s, TB/s, MB/s (or KiB/s …)",
    "time": "ns, us, ms, s",
    "frequency": "MHz, GHz",
}


INT_MAX = 2**31 - 1
"""The largest value of the C++ ``int`` that muh emits sizes and counts as."""

# The physical range of each dimension, in its base unit (bytes, bytes/s, ns, Hz), checked once here
# for every field of that dimension. Sizes are emitted as C++ ``int`` (tuning headers, kernel params).
LIMITS: dict[str, tuple[object, object, str]] = {
    "size": (1, INT_MAX, "1 B … 2 GiB − 1 B (muh emits sizes as a C++ int)"),
    "bandwidth": (1, 10**16, "1 B/s … 10 PB/s"),
    "time": (Decimal(0), Decimal(10**9), "0 ns … 1 s"),
    "frequency": (10**6, 10**11, "1 MHz … 100 GHz"),
}


_MAX_EXPONENT = 40
"""A written value above 10^40 is out of every dimension's range whatever its unit (checked before
converting: Decimal arithmetic overflows at 10^999999)."""


@dataclass(frozen=True)
class Quantity:
    value: Decimal
    unit: str

    @property
    def dimension(self) -> str:
        return DIMENSION_OF_UNIT[self.unit]

    def __str__(self) -> str:
        return f"{self.value} {self.unit}"


def _exact_int(x: Decimal, what: str) -> int:
    if x != x.to_integral_value():
        raise ValueError(f"{what} must be a whole number of bytes, got {x}")
    return int(x)


def _in_range(dimension: str, value, written: Quantity):
    lo, hi, text = LIMITS[dimension]
    if not lo <= value <= hi:
        raise ValueError(f"{written} is out of range: a {dimension} is {text}")
    return value


def _to(dimension: str):
    def convert(v):
        if isinstance(v, Quantity):
            if v.dimension != dimension:
                raise ValueError(f"expected a {dimension} ({UNITS_BY_DIMENSION[dimension]}), got {v} (a {v.dimension})")
            if not v.value.is_finite():
                raise ValueError(f"{v} is not a number")
            if v.value.adjusted() > _MAX_EXPONENT:  # 1e999999999 B: out of range before any arithmetic overflows
                lo, hi, text = LIMITS[dimension]
                raise ValueError(f"{v} is out of range: a {dimension} is {text}")
            if dimension == "size":
                return _in_range(dimension, _exact_int(v.value * SIZE[v.unit], "a size"), v)
            if dimension == "bandwidth":
                return _in_range(dimension, _exact_int(v.value * SIZE[v.unit[:-2]], "a bandwidth"), v)
            if dimension == "time":
                return _in_range(dimension, v.value * TIME_NS[v.unit], v)
            return _in_range(dimension, _exact_int(v.value * FREQ[v.unit], "a frequency"), v)
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
            raise ValueError(f"expected a {dimension} with a unit ({UNITS_BY_DIMENSION[dimension]})")
        if v == 0 and dimension == "time":
            return Decimal(0)
        raise ValueError(f"a {dimension} needs a unit: write e.g. `{v} {PREFERRED[dimension]}`")

    return convert


Bytes = Annotated[int, BeforeValidator(_to("size"))]
"""A size in bytes (written with B, KiB, MiB, GiB, KB, MB, GB)."""
Bandwidth = Annotated[int, BeforeValidator(_to("bandwidth"))]
"""Bytes per second (written GB/s, TB/s, …)."""
Duration = Annotated[Decimal, BeforeValidator(_to("time")), PlainSerializer(lambda d: float(d), return_type=float)]
"""Nanoseconds (written ns, us, ms, s)."""
Frequency = Annotated[int, BeforeValidator(_to("frequency"))]


def fmt_bytes(n: int) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        if n >= SIZE[unit] and n % (SIZE[unit] // 1024 or 1) == 0:
            v = n / SIZE[unit]
            return f"{v:g} {unit}"
    return f"{n} B"
