"""Policy keys: which calls a `policy <key> { … }` block applies to.

A key is `default` or `<type>[.<value type>][.<operator or operator class>][.<offset width>]`:

* the type is an element type of the catalogue (``float32``), a user-defined `type` of the spec, or
  the type class ``record``: every user-defined type (CUB's ``!is_primitive<T>``: what CUB gives a
  struct it cannot classify, e.g. the look-back delay of its untuned default);
* the value type (by-key families only: reduce_by_key, scan_by_key, unique_by_key, radix_sort_pairs)
  names the values' type where it differs from the keys' (``int32.int64``: int32 keys, int64 values;
  ``int32.record``: int32 keys, any user-defined value). A key without one covers calls whose values
  are of the key's type (CUB's hubs key on both types: a tuning for int32 keys and values is not one
  for int32 keys and int64 values); only ``default`` covers every pair;
* a type or value part may also be a size class ``prim<N>`` (``prim1``, ``prim2``, ``prim4``, ``prim8``):
  every catalogue type of N bytes — CUB's by-key hubs classify keys and values by size and whether
  they are primitives (``prim4.prim8.primitive``: 4-byte keys, 8-byte values, a basic operator);
* the operator is one of ``OPS`` (``float32.plus``) or an operator class, the way CUB classifies
  operators when it picks a tuning (CCCL 3.0.1 ``basic_binary_op_t`` / ``is_min_or_max``):
  ``primitive`` = plus, min, max; ``min_or_max`` = min, max;
* the offset width is ``offset32`` or ``offset64`` (the width of ``num_items``' offset type, which
  CUB's reduce, scan and radix sort hubs key on).

A call is a ``Query``: (type, operator, offset width, value type). Every key that *covers* the query
applies, the more specific over the less specific (``rank``): the type part first (none < ``record`` <
a type; ``prim<N>`` ranks with ``record``: a type is in at most one class), then the value part
(likewise), then the operator part (none < class < operator; ``min_or_max`` is inside ``primitive``), then the
offset part. For one query the covering
keys are totally ordered, so the layering is unambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from muh.schema.catalog import DTYPES, OPS

#: Operator classes: name -> the operators in it (CUB's classification, CCCL 3.0.1).
OP_CLASSES: dict[str, tuple[str, ...]] = {
    "primitive": ("plus", "min", "max"),  # cub::detail::basic_binary_op_t
    "min_or_max": ("min", "max"),  # cub::detail::reduce::is_min_or_max
}
#: Offset widths (bits) a key can name.
OFFSETS: dict[str, int] = {"offset32": 32, "offset64": 64}
DEFAULT_OFFSET = 32  # `int num_items`
#: The type class of every user-defined type (a type name outside the catalogue).
RECORD = "record"
#: Size classes: every catalogue type of N bytes (CUB's primitives, classified by size).
SIZE_CLASSES: dict[str, int] = {f"prim{n}": n for n in sorted(set(DTYPES.values()))}
CLASSES = (RECORD, *SIZE_CLASSES)
_CLASSES = ", ".join(f"{c} ({'/'.join(o)})" for c, o in OP_CLASSES.items())


@dataclass(frozen=True, order=True)
class Query:
    """One call: element (key) type, operator, offset width (bits) and, for by-key families, the
    values' type where it differs from the key's (None: the key's)."""

    dtype: str
    op: str = "plus"
    offset: int = DEFAULT_OFFSET
    value: str | None = None

    @property
    def pair(self) -> str | None:
        """The values' type when it is not the key's."""
        return self.value if self.value not in (None, self.dtype) else None


@dataclass(frozen=True)
class PolicyKey:
    dtype: str | None  # None: `default`
    op: str | None = None  # an operator or an operator class
    offset: int | None = None  # 32 | 64
    value: str | None = None  # the values' type (or `record`) where it differs from the key's

    @property
    def ops(self) -> tuple[str, ...]:
        """The operators the key covers."""
        if self.op is None:
            return OPS
        return OP_CLASSES.get(self.op, (self.op,))

    @property
    def rank(self) -> tuple[int, int, int]:
        op_rank = 0 if self.op is None else (3 if self.op in OPS else 1 + list(OP_CLASSES).index(self.op))
        type_rank = 0 if self.dtype is None else (1 if self.dtype in CLASSES else 2)
        value_rank = 0 if self.value is None else (1 if self.value in CLASSES else 2)
        return (type_rank, value_rank, op_rank, self.offset is not None)

    @staticmethod
    def _match(part: str | None, dtype: str | None) -> bool:
        if part is None or part == dtype:
            return True
        if dtype is None:
            return False
        if part == RECORD:
            return dtype not in DTYPES
        return part in SIZE_CLASSES and DTYPES.get(dtype) == SIZE_CLASSES[part]

    def _types(self, dtype: str | None, value: str | None) -> bool:
        """Key type ``dtype`` with values of ``value`` (None: the key's type)."""
        if self.dtype is None:
            return True  # `default`: every call
        if not self._match(self.dtype, dtype):
            return False
        if self.value is None:
            return value is None
        return value is not None and self._match(self.value, value)

    def covers(self, q: Query) -> bool:
        return self._types(q.dtype, q.pair) and q.op in self.ops and (self.offset is None or self.offset == q.offset)

    def generalises(self, other: PolicyKey) -> bool:
        """Every query ``other`` covers, this key covers too."""
        if other.dtype is None:
            return (
                self.dtype is None
                and set(other.ops) <= set(self.ops)
                and (self.offset is None or self.offset == other.offset)
            )
        types = self.dtype is None or (
            self._match(self.dtype, other.dtype)
            and (
                (self.value is None and other.value is None)
                or (self.value is not None and other.value is not None and self._match(self.value, other.value))
            )
        )
        return types and set(other.ops) <= set(self.ops) and (self.offset is None or self.offset == other.offset)


def parse(key: str, dtypes) -> tuple[PolicyKey | None, list[tuple[str, str]]]:
    """(the key, []) or (None, [(problem, hint)])."""
    if key == "default":
        return PolicyKey(None), []
    parts = key.split(".")
    dtype, rest = parts[0], parts[1:]
    problems = []
    if dtype not in dtypes and dtype not in CLASSES:
        problems.append(
            (
                f"`{dtype}` is not an element type",
                f"policy keys are `default`, a type ({', '.join(dtypes)}), `{RECORD}` (every user-defined "
                f"type), a size class ({', '.join(SIZE_CLASSES)}), `type.op`, `type.offset64` …",
            )
        )
    op = offset = value = None
    for i, part in enumerate(rest):
        if part in OFFSETS and offset is None:
            offset = OFFSETS[part]
        elif (part in OPS or part in OP_CLASSES) and op is None and offset is None:
            op = part
        elif i == 0 and (part in dtypes or part in CLASSES) and not problems:
            if part == dtype and dtype not in CLASSES:
                problems.append(
                    (
                        f"policy key `{key}` names `{dtype}` as both key and value type",
                        f"write `{'.'.join([dtype] + rest[1:])}`: a key without a value type covers "
                        "values of the key's type",
                    )
                )
                break
            value = part
        else:
            problems.append(
                (
                    f"`{part}` cannot follow `{'.'.join(parts[: i + 1])}` in policy key `{key}`",
                    f"write `type[.value type][.op][.offset32|.offset64]`; operators: {', '.join(OPS)}; "
                    "operator classes: " + _CLASSES,
                )
            )
            break
    return (None if problems else PolicyKey(dtype, op, offset, value)), problems


@lru_cache(maxsize=None)
def key_of(key: str) -> PolicyKey:
    """A key known to be valid (validation ran)."""
    got, problems = parse(key, _AnyType())
    if got is None:
        raise ValueError(problems[0][0])
    return got


class _AnyType:
    def __contains__(self, item) -> bool:
        return True

    def __iter__(self):
        return iter(())


def query_key(q: Query) -> str:
    return ".".join([q.dtype] + ([q.pair] if q.pair else []) + [q.op, f"offset{q.offset}"])


def covering(keys, q: Query) -> list[str]:
    """The keys (strings) that cover ``q``, least specific first."""
    parsed = [(k, key_of(k)) for k in keys]
    return [k for k, p in sorted(((k, p) for k, p in parsed if p.covers(q)), key=lambda kp: kp[1].rank)]
