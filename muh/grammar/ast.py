"""The syntax tree of a .muh file: small frozen nodes, each with its source span.

The tree is generic (blocks, assignments, values); meaning is given by muh/schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Union

from muh.diagnostics import Span


@dataclass(frozen=True)
class Number:
    value: Decimal
    text: str  # as written, e.g. "0.92" (kept for formatting)
    unit: str | None
    span: Span

    def __str__(self) -> str:
        return f"{self.text} {self.unit}" if self.unit else self.text


@dataclass(frozen=True)
class Str:
    value: str
    raw: str  # with quotes and escapes, as written
    span: Span

    def __str__(self) -> str:
        return self.raw


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True)
class Ident:
    """A bare name (an enum value such as ``ldg``) or a dotted reference (``hardware.smem_per_block``)."""

    path: tuple[str, ...]
    span: Span

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ListV:
    items: tuple["Value", ...]
    span: Span

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"


@dataclass(frozen=True)
class Range:
    """``start..stop [step n]``; both ends inclusive (CCCL's %RANGE% convention)."""

    start: Number
    stop: Number
    step: Number | None
    span: Span

    def __str__(self) -> str:
        s = f"{self.start}..{self.stop}"
        return f"{s} step {self.step}" if self.step is not None else s


@dataclass(frozen=True)
class Arg:
    name: str | None
    value: "Value"
    span: Span

    def __str__(self) -> str:
        return f"{self.name} = {self.value}" if self.name else str(self.value)


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Arg, ...]
    span: Span

    def __str__(self) -> str:
        return f"{self.name}(" + ", ".join(str(a) for a in self.args) + ")"


@dataclass(frozen=True)
class Tagged:
    """``vllm "0.6.3"``: a name qualified by a string."""

    tag: str
    value: Str
    span: Span

    def __str__(self) -> str:
        return f"{self.tag} {self.value}"


Value = Union[Number, Str, Bool, Ident, ListV, Range, Call, Tagged]


@dataclass(frozen=True)
class Condition:
    """A size bucket's condition: ``elements < 2^24``, ``elements >= 2^24``, ``elements in 2^16..2^24``
    (the range half-open: its stop belongs to the next bucket)."""

    size: str  # the problem size it tests (``elements``)
    op: str  # "<", ">=" or "in"
    bound: Union[Number, Range]
    size_span: Span
    span: Span

    def __str__(self) -> str:
        return f"{self.size} {self.op} {self.bound}"


@dataclass(frozen=True)
class Assign:
    key: tuple[str, ...]
    value: Value
    key_span: Span
    span: Span
    annotation: Call | None = None  # `@measured(...)`: where a value came from

    @property
    def name(self) -> str:
        return ".".join(self.key)


@dataclass(frozen=True)
class Block:
    kind: str
    label: str | None
    target: str | None
    members: tuple["Member", ...]
    kind_span: Span
    label_span: Span | None
    target_span: Span | None
    span: Span
    condition: Condition | None = None  # `when <condition> { … }` (kind "when")

    def assigns(self) -> list[Assign]:
        return [m for m in self.members if isinstance(m, Assign)]

    def blocks(self, kind: str | None = None) -> list["Block"]:
        return [m for m in self.members if isinstance(m, Block) and (kind is None or m.kind == kind)]


Member = Union[Assign, Block]


@dataclass(frozen=True)
class Comment:
    text: str
    line: int
    col: int


@dataclass(frozen=True)
class Module:
    version: int | None
    version_span: Span | None
    members: tuple[Member, ...]
    comments: tuple[Comment, ...]
    file: str
    source: str
