"""The element types of muh: the one table of names, codes, sizes and C types.

Every other module reads this table (the schema's type list, derive's element sizes, the kernels'
`enum muh_dtype`, the LLM ops' `enum muh_op_dtype`, the tuning harness, the ctypes and torch
bindings, the docs); ``tests/test_one_source.py`` fails when a second table appears. It lives in the runtime, the
bottom layer: the runtime (and the ops package copied into serving images) imports it standalone.

Pure Python (no pydantic, no lark, no torch): the runtime imports it on GPU machines that only have
the generated files. ``code`` is the value of ``MUH_<NAME>`` in the generated C headers; codes are
append-only (a code once given keeps its meaning: compiled libraries and Python callers depend on it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str  # muh's spelling (= torch's attribute name)
    code: int  # MUH_<NAME> in the generated C interface
    size: int  # bytes per element
    kind: str  # "float" | "int" | "uint"
    cxx: str  # the C++ type the kernels compute on
    storage: str  # a plain C type of the same bits (host code without CUDA's half/bf16 headers)
    aten: str  # torch's at::ScalarType (the torch bindings' switch)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def std(self) -> str:
        """The <cstdint> spelling of an integer type (the C++ name of a floating-point one)."""
        return self.cxx if self.is_float else f"std::{'u' if self.kind == 'uint' else ''}int{8 * self.size}_t"


_ROWS = (
    # name       code size kind     C++ type              plain storage         at::ScalarType
    ("float32", 0, 4, "float", "float", "float", "Float"),
    ("float64", 1, 8, "float", "double", "double", "Double"),
    ("float16", 2, 2, "float", "__half", "unsigned short", "Half"),
    ("bfloat16", 3, 2, "float", "muh::bf16", "unsigned short", "BFloat16"),
    ("int32", 4, 4, "int", "int", "int", "Int"),
    ("int64", 5, 8, "int", "long long", "long long", "Long"),
    ("int8", 6, 1, "int", "signed char", "signed char", "Char"),
    ("uint8", 7, 1, "uint", "unsigned char", "unsigned char", "Byte"),
    ("int16", 8, 2, "int", "short", "short", "Short"),
    ("uint16", 9, 2, "uint", "unsigned short", "unsigned short", "UInt16"),
    ("uint32", 10, 4, "uint", "unsigned", "unsigned", "UInt32"),
    ("uint64", 11, 8, "uint", "unsigned long long", "unsigned long long", "UInt64"),
)
TABLE: dict[str, DType] = {r[0]: DType(*r) for r in _ROWS}
# The order types are listed in (schema, docs): by size, then signed/unsigned/float.
ORDER = (
    "int8",
    "uint8",
    "int16",
    "uint16",
    "float16",
    "bfloat16",
    "int32",
    "uint32",
    "float32",
    "int64",
    "uint64",
    "float64",
)
SIZE: dict[str, int] = {n: TABLE[n].size for n in ORDER}
CODE: dict[str, int] = {n: TABLE[n].code for n in ORDER}
OPS = ("float32", "float16", "bfloat16")
"""The LLM ops' element types (``enum muh_op_dtype``, include/muh/ops/ops.h), in their one order:
derive's ops policies, the rms_norm/silu_and_mul records, the C and torch bindings and the vLLM
provider read this tuple."""


def by_code() -> list[DType]:
    """Every type in code order (for C enums)."""
    return sorted(TABLE.values(), key=lambda d: d.code)


def of(name: str) -> DType:
    return TABLE[name]
