"""The C interfaces' shapes, and the one table of the LLM ops' C interface (every ``muh_op_*``).

``OPS_API`` (the entry points: name, return type, parameters with their C types) and ``OPS_STRUCTS``
(their argument structs) are the single owner of the ops' signatures: include/muh/ops/ops.h is
rendered from them (muh/codegen/ops/templates/ops.h.j2), the ops families' records read their entry
points here (``ops``), and the runtime's ctypes types (``signatures``, ``structure``: muh/runtime/llm.py)
are derived from them. ``COMMON_API`` is the same for the entry points every kernel build has
(kernels/common.cu). A kernel family declares its own functions in its record (muh/families/), as
``CFunc``s of this module.

It lives in the runtime, the bottom layer, beside dtypes.py (the ops' element types): the runtime
imports it standalone on GPU machines (and the ops package copied into serving images carries it).
Pure Python: ctypes and dataclasses only.
"""

from __future__ import annotations

import ctypes
import keyword
from dataclasses import dataclass


def wrap(head: str, parts: list[str], tail: str, indent: int | None = None, width: int = 120) -> str:
    """``head`` + comma-separated ``parts`` + ``tail``, broken after commas to stay within ``width``
    (continuation lines indented to ``indent``, default: under the first part)."""
    one = head + ", ".join(parts) + tail
    if len(one) <= width:
        return one
    pad = " " * (len(head.split("\n")[-1]) if indent is None else indent)
    lines, cur = [], head
    for i, p in enumerate(parts):
        piece = p + ("," if i < len(parts) - 1 else tail)
        if cur != head and len(cur) + 1 + len(piece) > width:
            lines.append(cur)
            cur = pad + piece
        else:
            cur = cur + ("" if cur == head else " ") + piece
    lines.append(cur)
    return "\n".join(lines)


def _comment(doc: str) -> str:
    """``/* doc */``, a line of ``doc`` a line, continuations under its first word."""
    return "/* " + "\n   ".join(doc.split("\n")) + " */"


@dataclass(frozen=True)
class CFunc:
    """One function of a generated C interface (api.h / ops.h, the torch bindings and ctypes read it)."""

    name: str
    ret: str  # "int" | "size_t" | "const char*"
    args: tuple[tuple[str, str], ...] = ()  # (C type, name)
    doc: str = ""  # lines joined by "\n"

    def decl(self) -> str:
        return wrap(f"{self.ret} {self.name}(", self._params(), ");")

    def define(self) -> str:
        """The head of its C definition, up to the body's ``{`` (the parameters named as declared)."""
        return wrap(f'extern "C" {self.ret} {self.name}(', self._params(), ") {")

    def comment(self) -> str:
        return _comment(self.doc) if self.doc else ""

    def _params(self) -> list[str]:
        return [f"{t} {n}" for t, n in self.args] or ["void"]


@dataclass(frozen=True)
class CStruct:
    """One argument struct of a C interface: its members as declared, a line each (C type, names)."""

    name: str
    lines: tuple[tuple[str, tuple[str, ...]], ...]
    doc: str = ""

    def __post_init__(self):
        for t, names in self.lines:
            if len(names) > 1 and t.endswith("*"):
                raise ValueError(f"struct {self.name}: pointer members {names} need a line each")

    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """(C type, name) of every member, in order."""
        return tuple((t, n) for t, names in self.lines for n in names)

    def decl(self) -> str:
        body = "".join(f"  {t} {', '.join(names)};\n" for t, names in self.lines)
        return f"struct {self.name} {{\n{body}}};"

    def comment(self) -> str:
        return _comment(self.doc) if self.doc else ""


# ---- the entry points every kernel build has (kernels/common.cu) ---------------------------------

COMMON_API = (
    CFunc("muh_last_error", "const char*", (), "what the last failing call said"),
    CFunc("muh_spec_name", "const char*", (), "the spec the kernels were generated from"),
    CFunc("muh_warp_size", "int", (), "logical warp of the kernels"),
    CFunc("muh_physical_warp_size", "int", (), "warp of the GPU they were built for"),
    CFunc("muh_check_device", "int", (), "MUH_ERR_WARP when the current device's warp width does not match"),
)

# ---- the LLM ops (include/muh/ops/ops.h; kernels/ops.cu defines them) -----------------------------

_LL, _S = "long long", "void* stream"
OPS_STRUCTS = (
    CStruct(
        "muh_op_norm_args",
        (
            ("void*", ("out",)),
            ("const void*", ("in",)),
            ("void*", ("residual",)),
            ("const void*", ("weight",)),
            ("const void*", ("gate",)),
            (_LL, ("tokens",)),
            ("int", ("heads",)),
            ("int", ("hidden",)),
            (
                _LL,
                (
                    "in_stride",
                    "in_head_stride",
                    "out_stride",
                    "out_head_stride",
                    "residual_stride",
                    "gate_stride",
                    "gate_head_stride",
                ),
            ),
            ("float", ("eps", "weight_offset", "residual_alpha")),
            ("int", ("single_rounding",)),
        ),
        "The general row norm (rms_norm, fused add, GemmaRMSNorm, head-wise, gated): rows are `tokens` x `heads`,\n"
        "row (t, h) starts at t * *_stride + h * *_head_stride; residual != NULL: residual = T(x + T(alpha * "
        "residual))\n"
        "(alpha == 1: T(x + residual)) and the norm reads it (heads == 1, no gate); out = T(y) where\n"
        "y = x * inv * (weight_offset + w) when single_rounding, else T(x * inv) * (weight_offset + w); gate != NULL:\n"
        "out = T(T(y) * silu(gate)).",
    ),
    CStruct(
        "muh_op_gate_add_args",
        (
            ("void*", ("out",)),
            ("const void*", ("routed",)),
            ("const void*", ("shared",)),
            ("const void*", ("gate",)),
            (_LL, ("rows",)),
            ("int", ("d",)),
            (_LL, ("out_stride", "routed_stride", "shared_stride", "gate_stride")),
        ),
        "out[r, :] = T(routed[r, :] + T(T(sigmoid(gate[r])) * shared[r, :])) (the shared expert's sigmoid gate);\n"
        "out may be routed",
    ),
)

OPS_API = (
    CFunc("muh_op_warp_size", "int"),
    CFunc("muh_op_max_experts", "int"),
    CFunc(
        "muh_op_rms_norm",
        "int",
        (
            ("int", "dtype"),
            ("void*", "out"),
            ("const void*", "in"),
            ("const void*", "weight"),
            (_LL, "rows"),
            ("int", "hidden"),
            (_LL, "in_stride"),
            (_LL, "out_stride"),
            ("float", "eps"),
            ("void*", "stream"),
        ),
        "out[r, :] = T(T(x * rsqrt(mean(x^2) + eps)) * weight), x = in[r, :] in float",
    ),
    CFunc(
        "muh_op_fused_add_rms_norm",
        "int",
        (
            ("int", "dtype"),
            ("void*", "x"),
            ("void*", "residual"),
            ("const void*", "weight"),
            (_LL, "rows"),
            ("int", "hidden"),
            (_LL, "x_stride"),
            (_LL, "residual_stride"),
            ("float", "eps"),
            ("void*", "stream"),
        ),
        "residual = T(x + residual); x = T(T(residual * rsqrt(mean(residual^2) + eps)) * weight), in place",
    ),
    CFunc(
        "muh_op_silu_and_mul",
        "int",
        (
            ("int", "dtype"),
            ("void*", "out"),
            ("const void*", "in"),
            (_LL, "rows"),
            ("int", "d"),
            (_LL, "in_stride"),
            (_LL, "out_stride"),
            ("void*", "stream"),
        ),
        "out[r, :] = T(T(silu(in[r, :d])) * in[r, d:])",
    ),
    CFunc(
        "muh_op_softmax",
        "int",
        (
            ("int", "dtype"),
            ("void*", "out"),
            ("const void*", "in"),
            (_LL, "rows"),
            ("int", "cols"),
            (_LL, "in_stride"),
            (_LL, "out_stride"),
            ("void*", "stream"),
        ),
        "out[r, :] = softmax(in[r, :]) (float accumulation)",
    ),
    CFunc("muh_op_norm", "int", (("int", "dtype"), ("const struct muh_op_norm_args*", "args"), ("void*", "stream"))),
    CFunc(
        "muh_op_gate_add",
        "int",
        (("int", "dtype"), ("const struct muh_op_gate_add_args*", "args"), ("void*", "stream")),
    ),
    CFunc(
        "muh_op_moe_route",
        "int",
        (
            ("int", "dtype"),
            ("float*", "weights"),
            ("void*", "ids"),
            ("int", "ids_int64"),
            ("int*", "token_expert_indices"),
            ("const void*", "gating"),
            (_LL, "rows"),
            ("int", "experts"),
            (_LL, "gating_stride"),
            ("int", "k"),
            ("int", "renormalize"),
            ("void*", "stream"),
        ),
        "muh_op_topk_softmax with int64 ids when `ids_int64`, token_expert_indices optional (NULL), a gating row "
        "stride",
    ),
    CFunc(
        "muh_op_topk_softmax",
        "int",
        (
            ("int", "dtype"),
            ("float*", "weights"),
            ("int*", "ids"),
            ("int*", "token_expert_indices"),
            ("const void*", "gating"),
            (_LL, "rows"),
            ("int", "experts"),
            ("int", "k"),
            ("int", "renormalize"),
            ("void*", "stream"),
        ),
        "weights[r, j], ids[r, j]: the k largest of softmax(gating[r, :]) (ties: lower expert first), renormalised\n"
        "to sum 1 when `renormalize`; token_expert_indices[r, j] = j * rows + r (vLLM's source rows)",
    ),
)


def ops(*names: str) -> tuple[CFunc, ...]:
    """The ops' entry points ``names`` (KeyError naming the ones OPS_API lacks)."""
    found = {f.name: f for f in OPS_API}
    missing = [n for n in names if n not in found]
    if missing:
        raise KeyError(f"the ops' C interface (muh/runtime/c_api.py OPS_API) has no {', '.join(missing)}")
    return tuple(found[n] for n in names)


# ---- ctypes --------------------------------------------------------------------------------------

_c = ctypes
# C type -> ctypes type; any other pointer is a void* (a struct pointer: its Structure's, see ctype)
CTYPES = {
    "int": _c.c_int,
    "unsigned": _c.c_uint,
    "long long": _c.c_longlong,
    "size_t": _c.c_size_t,
    "float": _c.c_float,
    "double": _c.c_double,
    "const char*": _c.c_char_p,
}


def py_name(name: str) -> str:
    """A C member's name as a Python attribute (``in`` -> ``in_``)."""
    return name + "_" if keyword.iskeyword(name) else name


def structure(s: CStruct) -> type:
    """The ctypes Structure of ``s`` (members as ``py_name`` spells them)."""
    return type(
        s.name,
        (ctypes.Structure,),
        {
            "__doc__": f"struct {s.name} (muh/runtime/c_api.py)",
            "_fields_": [(py_name(n), ctype(t)) for t, n in s.fields],
        },
    )


def ctype(t: str, structs: dict | None = None):
    """The ctypes type of the C type ``t``: a pointer to a struct of ``structs`` ({C name: Structure})
    is a POINTER to it, any other pointer a void* (None: a type this table does not know)."""
    got = CTYPES.get(t)
    if got is not None:
        return got
    if not t.endswith("*"):
        return None
    base = t[:-1].strip().removeprefix("const ").strip().removeprefix("struct ").strip()
    if structs and base in structs:
        return ctypes.POINTER(structs[base])
    return _c.c_void_p


def signatures(api, structs: dict | None = None) -> dict:
    """{function: (restype, argtypes)} of the C interface ``api`` (CFuncs)."""
    return {f.name: (ctype(f.ret, structs), [ctype(t, structs) for t, _ in f.args]) for f in api}
