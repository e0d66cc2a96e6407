"""The typed model of a spec: hardware, algorithm policies and spaces, deployments."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal, Optional, Union

from pydantic import Field, PrivateAttr, create_model, field_validator

from muh.diagnostics import Diagnostic, Severity, Span
from muh.schema.base import SpecModel as Model
from muh.schema.base import matching
from muh.schema.catalog import DELAY_KINDS, DIMS, Dim
from muh.schema.units import Bandwidth, Bytes, Duration, Frequency

Scalar = Union[bool, int, Decimal, str]


def _name_chars(what: str, v: str | None, pattern: str, example: str) -> str | None:
    """A name that reaches compiler flags, file names or the run file: ``pattern``'s characters only."""
    import re

    if v is not None and not re.fullmatch(pattern, v):
        bad = next((c for c in v if not re.fullmatch(pattern.replace("+$", "").lstrip("^"), c)), "")
        shown = f"`{bad}`" if bad.isprintable() and bad != " " else f"U+{ord(bad):04X}" if bad else "nothing"
        raise ValueError(
            f"{v!r} is not an architecture name: it contains {shown} (names are letters, digits and _ . + -)"
            if v
            else f"{what} is empty; write e.g. {example}"
        )
    return v


def text_problem(value: str) -> str | None:
    """Why a string (a name, a path, a served model name) must not reach a file muh writes, or None:
    line breaks, control characters and invisible format characters (the bidi overrides U+202A…U+202E
    and U+2066…U+2069, zero-width spaces), which make a run file read otherwise than it runs."""
    import unicodedata

    for ch in value:
        if ch in "\n\r":
            return "contains a line break"
        if ord(ch) < 32 and ch != "\t" or ord(ch) == 0x7F or 0x80 <= ord(ch) < 0xA0 or ch in "\u2028\u2029":
            return f"contains the control character U+{ord(ch):04X}"
        if unicodedata.category(ch) == "Cf":
            return f"contains the invisible format character U+{ord(ch):04X} ({unicodedata.name(ch, 'unnamed')})"
    return None


class Toolchain(Model):
    cuda: str
    """CUDA version the device toolchain is compatible with, e.g. "10.2"."""

    @field_validator("cuda")
    @classmethod
    def _cuda_version(cls, v: str) -> str:
        return matching(
            v, r"[0-9]{1,3}(\.[0-9]{1,3}){1,2}", f'{v!r} is not a CUDA version; write e.g. "10.2" or "12.4"'
        )

    @field_validator("arch")
    @classmethod
    def _arch_name(cls, v):
        return _name_chars("toolchain arch", v, r"^[A-Za-z0-9_.+-]+$", '"sm_90"')

    cxx: Literal[11, 14, 17, 20] = 17
    """Highest C++ standard accepted in device code."""
    compiler: Literal["nvcc", "clang"] = "nvcc"
    """Driver used to build device code (the BI-V100 SDK is clang-based)."""
    arch: Optional[str] = None
    """Target architecture flag, e.g. "sm_90" or "ivcore10"."""
    cccl: Optional[str] = None
    """CCCL version of the CUB headers NVIDIA hardware builds with: "3.0" (CUDA 13.0's; the default) gets
    policy hubs for CUB's dispatch, "3.5" (NVIDIA's CCCL wheel) policy selectors for `cuda::execution::tune`
    (docs/parity.md). Every NVIDIA hardware of a spec names the same one."""

    @field_validator("cccl")
    @classmethod
    def _cccl_version(cls, v: str | None) -> str | None:
        if v is None:
            return v
        matching(v, r"[0-9]{1,2}\.[0-9]{1,2}", f'{v!r} is not a CCCL version; write e.g. "3.0" or "3.5"')
        if v not in CCCL_VERSIONS:
            raise ValueError(
                f'muh emits no CUB policies for CCCL {v}: write "3.0" (the CUDA 13.0 toolkit\'s; policy hubs) '
                'or "3.5" (policy selectors for cuda::execution::tune), the versions its checks compile against'
            )
        return v


#: The CCCL versions muh emits CUB policies for, each checked by compiling against it: 3.0 (3.0.1, the CUDA
#: 13.0 toolkit's: policy hubs, muh/codegen/cxx/cub_hub.py) and 3.5 (3.5.0, NVIDIA's nvidia-cuda-cccl
#: 13.3.5.0.6 wheel: policy selectors, muh/codegen/cxx/cub_tune.py). A spec that names none gets the first.
CCCL_VERSIONS = ("3.0", "3.5")
CCCL_DEFAULT = CCCL_VERSIONS[0]


class Hardware(Model):
    name: str
    """The block's label (`hardware <name> { … }`)."""
    vendor: Literal["nvidia", "iluvatar"] = "nvidia"
    """Whose GPU: `nvidia`, or `iluvatar` (CoreX, CUDA-compatible). muh generates CUDA C++, so other
    vendors (e.g. AMD, which needs HIP) are refused rather than given flags that cannot work."""
    arch: str
    """Architecture name, e.g. "hopper", "ivcore10"."""
    compute_capability: Optional[int] = Field(None, ge=10, le=1300)
    """As CUB writes it: SM×10 (90 for sm_90). Omit for non-NVIDIA hardware."""
    reported_capability: Optional[int] = Field(None, ge=10, le=1300)
    """What the runtime reports as the device's capability (torch.cuda.get_device_capability() as
    major×10+minor), when it differs from `compute_capability` — non-NVIDIA devices report one. It
    only gates what the engine checks against it (vLLM runs bfloat16 from 80); it never selects an
    architecture to compile for."""
    sm_count: int = Field(ge=1, le=4096)
    warp_size: int = Field(ge=1, le=1024)
    """Threads per warp: 32 on NVIDIA, 64 on the BI-V100. A width its vendor never built is an error."""
    smem_per_block: Bytes
    """Shared memory one block may use without opt-in (CUB's 48 KiB)."""
    smem_per_block_optin: Optional[Bytes] = None
    max_threads_per_block: int = Field(1024, ge=1, le=4096)
    l2_cache: Optional[Bytes] = None
    mem_bandwidth: Optional[Bandwidth] = None
    """Measured device-copy bandwidth (bytes read + written per second)."""
    launch_latency: Optional[Duration] = None
    clock: Optional[Frequency] = None
    """SM clock (declared or measured): paces the look-back busy-wait where there is no __nanosleep."""
    gpu_count: int = Field(1, ge=1, le=1024)
    """Devices in one node of the deployment (tensor parallelism can't exceed it)."""
    device_name: Optional[str] = None
    """The name the runtime reports (NVML / torch.cuda.get_device_name)."""
    cub_parity: bool = False
    """Scale policies with CUB's hard-coded 49152 B and 32 threads instead of this hardware's values."""
    toolchain: Toolchain

    @field_validator("arch")
    @classmethod
    def _arch_name(cls, v: str) -> str:
        return _name_chars("arch", v, r"^[A-Za-z0-9_.+-]+$", "`hopper`")

    @field_validator("device_name")
    @classmethod
    def _device_name(cls, v):
        why = text_problem(v) if v is not None else None
        if why:
            raise ValueError(f"device_name {v!r} {why}")
        if v is not None and not v.strip():
            raise ValueError('device_name is empty; write the name the runtime reports, e.g. "NVIDIA H200"')
        return v

    @field_validator("warp_size")
    @classmethod
    def _power_of_two(cls, v: int) -> int:
        if v & (v - 1):
            raise ValueError(f"warp_size must be a power of two, got {v}")
        return v


class Delay(Model):
    kind: Literal[DELAY_KINDS]  # type: ignore[valid-type]
    ns: Duration = Decimal(0)
    l2_write_latency: Duration = Decimal(0)


def _dim_field(d: Dim) -> tuple[object, object]:
    """The model's field of a catalogue dimension (muh/schema/catalog.py DIMS owns the names, kinds,
    choices and bounds; the model is made from it): optional, None when the block does not set it."""
    if d.kind == "int":
        return Optional[int], Field(None, ge=d.lo, le=d.hi)
    if d.kind == "enum":
        return Optional[Literal[d.choices]], None  # type: ignore[valid-type]
    kinds = {"bool": bool, "bytes": Bytes, "delay": Delay}
    return Optional[kinds[d.kind]], None


class _PolicyBase(Model):
    def given(self) -> dict[str, object]:
        """The dimensions this block sets explicitly."""
        return {k: getattr(self, k) for k in self.model_fields_set if k in DIMS}


PolicyValues = create_model(
    "PolicyValues",
    __base__=_PolicyBase,
    __module__=__name__,
    __doc__="One policy block; every dimension optional (inherited from `default` when absent).",
    **{name: _dim_field(d) for name, d in DIMS.items()},
)


class Bucket(PolicyValues):
    """A size bucket of a policy (`when elements >= 2^24 { … }`, `when k >= 256 { … }`): its values apply
    to the problem sizes ``lo`` ≤ size < ``hi``; unset ones come from the policy it is written in."""

    size: str = "elements"
    """What is measured (muh/families/base.py ``BUCKET_SIZES``; the family's record says which it
    picks a bucket by): ``elements``, the element count of a kernel's input (an op's rows × hidden);
    ``k``, the values kept per row (topk)."""
    lo: int = Field(0, ge=0)
    hi: Optional[int] = Field(None, ge=1)
    """Exclusive upper bound; None: no upper bound."""

    @property
    def label(self) -> str:
        """The condition as the language writes it, powers of two as ``2^n``."""
        if self.hi is None:
            return f"{self.size} >= {pow2_text(self.lo)}"
        if self.lo == 0:
            return f"{self.size} < {pow2_text(self.hi)}"
        return f"{self.size} in {pow2_text(self.lo)}..{pow2_text(self.hi)}"


def pow2_text(n: int) -> str:
    """``2^k`` for a power of two ≥ 2^10 (as sizes are written), else the number."""
    return f"2^{n.bit_length() - 1}" if n >= 1024 and n & (n - 1) == 0 else str(n)


class Policy(PolicyValues):
    subs: dict[str, PolicyValues] = {}
    """Named sub-policies (e.g. radix_sort's onesweep, histogram …)."""
    buckets: list[Bucket] = []
    """Size buckets (`when elements … { … }`), ascending, disjoint, together covering every size."""

    def bucket_sizes(self) -> list[tuple[int, Optional[int]]]:
        return [(b.lo, b.hi) for b in self.buckets]

    @property
    def bucket_key(self) -> str | None:
        """The size the buckets test (``elements``, ``k`` …); None without buckets."""
        return self.buckets[0].size if self.buckets else None


SUB_SEP = "."
"""A sub-policy's dimension is named ``<sub-policy>.<dim>`` (``onesweep.threads``) in a `space` block, a family
record's ``tunable`` and a `muh tune` variant alike."""


def sub_dim(dim: str) -> tuple[str, str] | None:
    """(sub-policy, dimension) of a sub-policy dimension such as ``onesweep.threads``; None for a top-level one."""
    sub, sep, d = dim.partition(SUB_SEP)
    return (sub, d) if sep and sub and d else None


class Space(Model):
    """What `muh tune` explores: each dimension a list of candidates (ranges are expanded); a sub-policy's
    dimension as ``<sub-policy>.<dim>``."""

    values: dict[str, list[Union[bool, int, str]]]


class Algorithm(Model):
    family: str
    on: str
    policies: dict[str, Policy]
    spaces: dict[str, Space] = {}
    types: list[str] = []
    """Element types generated and checked (default: the family's standard set)."""
    values: list[str] = []
    """By-key families: the value types paired with every key type besides the key's own."""

    @property
    def key(self) -> str:
        return f"{self.family}@{self.on}"


from muh.schema.deploy import Deploy  # noqa: E402  (the deploy block lives there)


class Measured(Model):
    """Evidence for a value set by `muh tune` (written as `@measured(…)` after the value)."""

    device: str
    date: str = ""
    """When it was measured (CCCL's own annotations carry no date)."""
    toolkit: str = ""
    samples: int = 0
    method: str = ""
    """How a hardware fact was measured (`muh probe`: attribute, kernel, sweep …)."""
    variant: str = ""
    """The CCCL-style variant label, e.g. "ipt_16.tpb_256.ipv_2"."""
    score: Optional[float] = None
    min: Optional[float] = None
    mean: Optional[float] = None
    max: Optional[float] = None
    fingerprint: str = ""
    """Hash of the hardware block and toolchain at tuning time (a mismatch marks the value stale)."""
    kept: bool = False
    """The value was measured and *kept*: no challenger beat it beyond noise at every size (CCCL keeps
    an incumbent unless a candidate wins without a regression); ``variant``/``score`` name the best
    challenger."""


#: The largest user-defined element type (bytes), and its largest alignment.
MAX_TYPE_SIZE = 1024


class ElementType(Model):
    """`type <name> { size = 12 B  align = 4 B }`: an element type known by its size and alignment
    (a struct, a pair, a key-value tuple), as CUB sees a user type: its policies scale by the size."""

    name: str
    """The block's label (`type <name> { … }`): the name `types = […]` and policy keys use."""
    size: Bytes
    """`sizeof` of the type: 1 B … 1 KiB, a multiple of `align`."""
    align: Bytes
    """`alignof` of the type: a power of two, at most `size`."""


class ParityScope(Model):
    """What the CCCL parity check may leave out (muh/check/parity.py)."""

    out_of_scope: list[str] = []
    """Glob patterns over case names `<family> <arch> <type> <op> <offset>` (e.g. `"scan sm100 * * offset64"`);
    a pattern with fewer words matches every case that starts with them."""


class Acknowledged(Model):
    """A warning the spec keeps knowingly, at the line that gives it (`@acknowledged(warning = "W-…",
    reason = "…")` after a value): the build does not print it, and says so when the line no longer gives it."""

    warning: str
    """The warning's code (muh/codes.py, a `W-` code)."""
    reason: str
    """Why the spec keeps the value that gives it."""


class Spec(Model):
    version: int = 1
    parity: ParityScope = ParityScope()
    types: dict[str, ElementType] = {}
    """User-defined element types (`type <name> { size = …  align = … }`)."""
    hardware: dict[str, Hardware] = {}
    algorithms: dict[str, Algorithm] = {}
    deploys: dict[str, Deploy] = {}
    measured: dict[str, Measured] = {}
    """Evidence per value path (``algorithms.<family>@<hw>.policies.<key>.<dim>``)."""
    acknowledged: dict[str, Acknowledged] = {}
    """Warnings kept knowingly, per value path (the line of that value)."""
    file: str = "<input>"
    sha256: str = ""
    """sha256 of the spec's text."""
    _spans: dict[tuple, Span] = PrivateAttr(default_factory=dict)
    _key_spans: dict[tuple, Span] = PrivateAttr(default_factory=dict)

    def span_of(self, path: tuple, key: bool = False) -> Span | None:
        """Source span of the value (or block) at ``path`` — of its key or label if ``key`` —
        or of the nearest enclosing one when ``path`` has none."""
        path = tuple(path)
        while path:
            if key and path in self._key_spans:
                return self._key_spans[path]
            if path in self._spans:
                return self._spans[path]
            path = path[:-1]
        return None

    def acknowledge(self, warnings: list[Diagnostic]) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """``warnings`` split into (those to print, those the spec acknowledges at their line); an
        acknowledgment no warning matches is printed as a warning of its own (it keeps nothing)."""
        shown, acked, used = [], [], set()
        places = {key: self.span_of(("acknowledged", key)) for key in self.acknowledged}
        for d in warnings:
            key = next(
                (
                    k
                    for k, a in self.acknowledged.items()
                    if a.warning == d.code
                    and d.span is not None
                    and places[k] is not None
                    and d.span.file == places[k].file
                    and places[k].line <= d.span.line <= places[k].end_line
                ),
                None,
            )
            if key is None or d.is_error:
                shown.append(d)
            else:
                acked.append(d)
                used.add(key)
        for key, a in self.acknowledged.items():
            if key not in used:
                shown.append(
                    Diagnostic(
                        "W-ACK-UNUSED",
                        f'`@acknowledged(warning = "{a.warning}")`: this line gives no {a.warning} warning',
                        places[key],
                        hint="remove the annotation: the warning it kept is gone (or moved to another line)",
                        severity=Severity.warning,
                    )
                )
        return shown, acked

    @property
    def cccl(self) -> str:
        """The CCCL version the spec's CUB policies are written for: what its NVIDIA hardware's toolchains
        say (validate makes them agree), else ``CCCL_DEFAULT``. The one owner of that version."""
        named = [h.toolchain.cccl for _, h in sorted(self.hardware.items()) if h.vendor == "nvidia"]
        return next((v for v in named if v), CCCL_DEFAULT)

    def element_sizes(self) -> dict[str, int]:
        """Every element type the spec can name, catalogue first: name -> size in bytes."""
        from muh.schema.catalog import DTYPES

        return {**DTYPES, **{n: t.size for n, t in self.types.items() if n not in DTYPES}}

    @property
    def name(self) -> str:
        from pathlib import PurePath

        return PurePath(self.file).stem
