"""The probe's result document (``probe/run.sh RESULT.json``): one versioned schema, in one place.

The CUDA program of the bundle writes the ``hardware`` part, the engine probe (Python) the
``engine`` part. Every measured value carries its method and sample count. Values no card can
have (a zero bandwidth, a warp of 48 lanes) fail validation here, so a broken or forged file is
refused before anything is compared.
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from muh.codegen.probe import SCHEMA, SCHEMA_VERSION  # noqa: F401 - the document's name and version, beside its model

SIZES_MIN, SIZES_MAX = 1 << 20, 1 << 30  # the bandwidth sweep: 1 MiB … 1 GiB, powers of two


class _M(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Fact(_M):
    """One measured value and how it was obtained."""

    value: Union[bool, int, float, str, None]
    method: str = Field(min_length=1)
    samples: int = Field(1, ge=0)
    unit: Optional[str] = None
    note: Optional[str] = None


class IntFact(Fact):
    value: Optional[int]


class StrFact(Fact):
    value: Optional[str]


class BoolFact(Fact):
    value: Optional[bool]


class FloatFact(Fact):
    value: Optional[float]


class SweepPoint(_M):
    bytes: int = Field(ge=1)
    gbps: float = Field(gt=0, lt=100_000)
    """Median over the samples, GB/s (10^9 B/s); copy counts bytes read + written."""
    samples: int = Field(ge=1)


class Bandwidth(_M):
    plateau_gbps: float = Field(gt=0, lt=100_000)
    """Median of the per-size medians at sizes ≥ 4 × L2 (at least the three largest sizes)."""
    method: str
    sweep: list[SweepPoint] = Field(min_length=3)

    @field_validator("sweep")
    @classmethod
    def _sizes(cls, v: list[SweepPoint]) -> list[SweepPoint]:
        sizes = [p.bytes for p in v]
        if sizes != sorted(set(sizes)) or sizes[0] < SIZES_MIN // 2 or sizes[-1] > SIZES_MAX * 2:
            raise ValueError(f"sweep sizes must rise within 1 MiB … 1 GiB, got {sizes}")
        return v


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class WarpLayer(_M):
    """The generated warp layer run on the device (native, or emulated on a narrower warp)."""

    mode: Literal["native", "subwarp", "emulated"]
    logical: int
    physical: int
    lanes_exchanging: IntFact
    """Lanes whose bit reaches every lane through the layer's ballot (≤ logical)."""
    shuffle_ok: BoolFact
    reduce_ok: BoolFact
    syncwarp_orders_smem: BoolFact
    """Shared-memory reduction ordered only by the layer's warp barrier gives the right sum."""


class Hardware(_M):
    device_index: int = Field(ge=0)
    device_count: int = Field(ge=1)
    device_name: StrFact
    device_name_nvml: StrFact
    compute_capability: IntFact
    """major × 10 + minor, as the runtime reports it."""
    arch: StrFact
    """The architecture the bundle was compiled for (the spec's toolchain)."""
    sm_count_attribute: IntFact
    sm_count_kernel: IntFact
    """Distinct %smid values seen by a grid of blocks (nvcc builds; null where the toolchain has no %smid)."""
    sm_count_residency: IntFact
    """Peak of co-resident blocks / occupancy-API blocks per SM."""
    warp_size_attribute: IntFact
    warp_size_kernel: IntFact
    smem_per_block: IntFact
    smem_per_block_optin: IntFact
    smem_dynamic_max_default: IntFact
    smem_dynamic_max_optin: IntFact
    regs_per_block: IntFact
    max_threads_per_block: IntFact
    l2_cache: IntFact
    global_memory: IntFact
    bandwidth_copy: Bandwidth
    bandwidth_read: Bandwidth
    launch_latency_us: FloatFact
    launch_throughput_us: FloatFact
    nanosleep: BoolFact
    atomic_one_address_gops: FloatFact
    warp_layer: WarpLayer

    @model_validator(mode="after")
    def _plausible(self) -> "Hardware":
        bad = []
        for name in ("warp_size_attribute", "warp_size_kernel"):
            v = getattr(self, name).value
            if v is not None and (not _pow2(v) or v > 1024):
                bad.append(f"{name} = {v} (a warp is a power of two ≤ 1024 lanes)")
        for name in ("sm_count_attribute", "smem_per_block", "max_threads_per_block"):
            v = getattr(self, name).value
            if v is None or v <= 0:
                bad.append(f"{name} = {v} (must be positive)")
        if self.sm_count_attribute.value is not None and self.sm_count_attribute.value > 4096:
            bad.append(f"sm_count_attribute = {self.sm_count_attribute.value} (more than 4096 SMs)")
        lat = self.launch_latency_us.value
        if lat is not None and not 0 < lat < 1_000_000:
            bad.append(f"launch_latency_us = {lat}")
        if bad:
            raise ValueError("implausible values: " + "; ".join(bad))
        return self


class Toolkit(_M):
    runtime: int
    """cudaRuntimeGetVersion (e.g. 13000)."""
    driver: int
    compiler: str
    """The compiler's version line, recorded by run.sh."""

    def text(self) -> str:
        def v(n: int) -> str:
            return f"{n // 1000}.{n % 1000 // 10}"

        import re

        m = re.search(r"release [\d.]+, V([\d.]+)", self.compiler)  # nvcc's version line
        compiler = f"nvcc {m.group(1)}" if m else self.compiler
        return f"CUDA runtime {v(self.runtime)}, driver API {v(self.driver)}, {compiler}"


class Origin(_M):
    """What produced the document: muh, the spec and its hardware block, the build."""

    muh_version: str
    spec: str
    """The spec's file name (what the bundle was built from; its hash is in the bundle's manifest.json)."""
    spec_sha256: Optional[str] = None
    """Written by bundles of muh before the bundle's files stopped carrying the spec's hash; never read."""
    hardware: str
    """The spec's hardware block the bundle was generated for."""
    compiler: Literal["nvcc", "clang"]
    cxx: int
    emulated_warp: Optional[int] = None


class Result(_M):
    schema_: Literal["muh.probe.result"] = Field(alias="schema")
    schema_version: int
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
    origin: Origin
    toolkit: Toolkit
    hardware: Hardware
    seconds: float = Field(ge=0)
    engine: Optional[dict] = None
    """The engine probe's report (free-form, for people; not compared with the spec)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @field_validator("schema_version")
    @classmethod
    def _version(cls, v: int) -> int:
        if v != SCHEMA_VERSION:
            raise ValueError(
                f"schema version {v} is not the one this muh reads ({SCHEMA_VERSION}); "
                "regenerate the bundle with this muh (`muh probe SPEC -o DIR`) and run it again"
            )
        return v
