"""LLM serving ops over muh's generated kernels, with vLLM 0.6.3's exact call signatures.

    from muh.runtime import llm
    llm.load("generated/h200")                 # or MUH_OPS_LIB=/path/libmuh_kernels.so
    llm.rms_norm(out, x, weight, 1e-6)         # == vllm._custom_ops.rms_norm

The functions named in ``VLLM_SIGNATURES`` take exactly the parameters of vLLM 0.6.3.post1's
``vllm/_custom_ops.py`` (names, order, kinds; the table cites file:line), so the general plugin can
rebind them; ``signature_problem`` is the guard that refuses a stock function whose signature is
not the recorded one. ``softmax`` and ``moe_topk_softmax`` are muh's own entry points.

No torch and no compiler stage at import time: torch is imported on first call; the kernels come
from a shared library built from the generated ``kernels/*.cu`` (``muh.runtime.build.build_capi``).
"""

from __future__ import annotations

import ctypes
import inspect
import os
import threading

from . import c_api
from .dtypes import CODE
from .dtypes import OPS as OPS_DTYPES
from .errors import MuhRuntimeError

# vLLM 0.6.3.post1, vllm/_custom_ops.py: parameter names in order (all positional-or-keyword, no
# defaults). `token_expert_indicies` and `gating_output: float` are vLLM's own spelling/annotation.
VLLM_SIGNATURES = {
    "silu_and_mul": (("out", "x"), "vllm/_custom_ops.py:69"),
    "rms_norm": (("out", "input", "weight", "epsilon"), "vllm/_custom_ops.py:205"),
    "fused_add_rms_norm": (("input", "residual", "weight", "epsilon"), "vllm/_custom_ops.py:210"),
    "topk_softmax": (("topk_weights", "topk_ids", "token_expert_indicies", "gating_output"), "vllm/_custom_ops.py:849"),
}
OPS = tuple(VLLM_SIGNATURES)

# Other recorded forms of a stock function that muh's op also serves: name -> (parameters in order,
# the trailing ones optional with these defaults, where). The EngineX fork's fused_add_rms_norm takes a
# 5th `residual_alpha` (default 1.0) pre-multiplying the residual (the competition team's notes on the
# fork's ops, https://github.com/dylanyunlon/project_6).
VLLM_FORMS = {
    "fused_add_rms_norm": (
        ("input", "residual", "weight", "epsilon", "residual_alpha"),
        {"residual_alpha": 1.0},
        "the EngineX fork's _custom_ops.fused_add_rms_norm (as the competition team's notes describe it)",
    ),
}

# vLLM 0.6.3.post1 methods muh serves (the plugin rebinds them on their class): name -> (module,
# "Class.method", parameters in order as (name, default or REQUIRED), where). The adapters live in
# muh.runtime.vllm_provider and take exactly these parameters.
REQUIRED = object()
VLLM_METHODS = {
    "gemma_rms_norm": (
        "vllm.model_executor.layers.layernorm",
        "GemmaRMSNorm.forward_cuda",
        (("self", REQUIRED), ("x", REQUIRED), ("residual", None)),
        "vllm/model_executor/layers/layernorm.py:173",
    ),
}
SERVED = OPS + tuple(VLLM_METHODS)
"""Every vLLM name muh's provider can stand in for."""

_DTYPE_CODE = {d: CODE[d] for d in OPS_DTYPES}  # enum muh_op_dtype (include/muh/ops/ops.h)
# struct muh_op_norm_args / muh_op_gate_add_args and every entry point's restype and argtypes, from
# the ops' one C interface (muh/runtime/c_api.py; include/muh/ops/ops.h is rendered from it)
_STRUCTS = {s.name: c_api.structure(s) for s in c_api.OPS_STRUCTS}
NormArgs, GateAddArgs = _STRUCTS["muh_op_norm_args"], _STRUCTS["muh_op_gate_add_args"]
_SIGNATURES = c_api.signatures([*(f for f in c_api.COMMON_API if f.name == "muh_last_error"), *c_api.OPS_API], _STRUCTS)


def forms(name: str) -> list[tuple[str, ...]]:
    """The parameter lists muh's op serves for vLLM's ``name``: 0.6.3's, then any recorded fork form."""
    out = [VLLM_SIGNATURES[name][0]] if name in VLLM_SIGNATURES else []
    return out + ([VLLM_FORMS[name][0]] if name in VLLM_FORMS else [])


def signature_problem(name: str, fn) -> str | None:
    """Why ``fn`` (vLLM's stock ``name``) must not be replaced, or None when its signature is the 0.6.3 one."""
    if name not in VLLM_SIGNATURES:
        return f"muh has no implementation of `{name}`"
    want, where = VLLM_SIGNATURES[name]
    fn = getattr(fn, "__muh_stock__", fn)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as e:
        return f"signature of vLLM's `{name}` cannot be read ({e})"
    got = tuple(p.name for p in params)
    odd = [p.name for p in params if p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty]
    form = VLLM_FORMS.get(name)
    if form is not None and got == form[0]:  # the fork's form: its optional parameters may carry their default
        odd = [
            p.name
            for p in params
            if p.kind is not p.POSITIONAL_OR_KEYWORD
            or p.default is not p.empty
            and form[1].get(p.name, p.empty) != p.default
        ]
        if not odd:
            return None
    if got != want or odd:
        return (
            f"vLLM's `{name}{inspect.signature(fn)}` is not the recorded 0.6.3 signature "
            f"({', '.join(want)}) of {where}; keeping vLLM's"
        )
    return None


def method_problem(name: str, fn) -> str | None:
    """Why ``fn`` (vLLM's stock method ``name`` of ``VLLM_METHODS``) must not be replaced, or None when
    its parameters (names, order, kinds, defaults) are the recorded 0.6.3 ones."""
    if name not in VLLM_METHODS:
        return f"muh has no implementation of `{name}`"
    _module, attr, want, where = VLLM_METHODS[name]
    fn = getattr(fn, "__muh_stock__", fn)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as e:
        return f"signature of vLLM's `{attr}` cannot be read ({e})"
    got = [(p.name, REQUIRED if p.default is p.empty else p.default) for p in params]
    odd = [p.name for p in params if p.kind is not p.POSITIONAL_OR_KEYWORD]
    if got != list(want) or odd:
        shown = ", ".join(n if d is REQUIRED else f"{n}={d!r}" for n, d in want)
        return (
            f"vLLM's `{attr}{inspect.signature(fn)}` is not the recorded 0.6.3 signature ({shown}) of "
            f"{where}; keeping vLLM's"
        )
    return None


# ---- the library ---------------------------------------------------------------------------------


class _Lib:
    def __init__(self, cdll, origin: str):
        self.cdll, self.origin = cdll, origin
        for name, (res, args) in _SIGNATURES.items():
            f = getattr(cdll, name)
            f.restype, f.argtypes = res, args
            if name.startswith("muh_op_"):
                setattr(self, name[len("muh_op_") :], f)
        self.warp = int(self.warp_size())
        self.max_experts = int(self.max_experts())

    def error(self) -> str:
        msg = self.cdll.muh_last_error()
        return msg.decode() if isinstance(msg, bytes) else str(msg)


_lib: _Lib | None = None
_lock = threading.Lock()


def load(source=None, *, arch: str | None = None, std: str | None = None) -> _Lib:
    """Load the ops: ``source`` is a built ``.so``, a generated folder (built with nvcc, cached), or
    None (``MUH_OPS_LIB``, else ``MUH_KERNELS_DIR``). Becomes the default of every op."""
    global _lib
    source = source or os.environ.get("MUH_OPS_LIB") or os.environ.get("MUH_KERNELS_DIR")
    if not source:
        raise MuhRuntimeError(
            "muh ops: no kernels: call muh.runtime.llm.load(<generated dir or .so>) "
            "or set MUH_OPS_LIB / MUH_KERNELS_DIR"
        )
    path = str(source)
    if os.path.isdir(path):
        if arch is None:
            import torch

            major, minor = torch.cuda.get_device_capability()
            arch = f"sm_{major}{minor}"
        path = build(path, arch=arch, std=std or "c++17")
    try:
        cdll = ctypes.CDLL(path)
        lib = _Lib(cdll, path)
    except (OSError, AttributeError) as e:
        raise MuhRuntimeError(f"muh ops: cannot load {path}: {e}") from e
    with _lock:
        _lib = lib
    return lib


def build(gen_dir, arch: str, std: str = "c++17") -> str:
    """Compile only the ops (``kernels/ops.cu`` + the kernels' ``common.cu``) into a cached shared
    library; one nvcc call (the full ``build.build_capi`` also compiles reduce/scan/topk)."""
    import subprocess
    from pathlib import Path

    from . import build as B
    from .errors import MuhBuildError
    from .toolchain import Toolchain

    gen = Path(gen_dir)
    flags = Toolchain.lab(arch, std).shared_library().flags  # the image's recipe for nvcc, without a warp define
    out = B.cache_root() / f"ops-{B.content_hash(gen, 'ops', *flags)[:16]}" / "libmuh_ops.so"
    if out.exists():
        return str(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    cmd = [
        B.nvcc(),
        *flags,
        "-I",
        str(gen / "include"),
        "-o",
        str(tmp),
        str(gen / "kernels" / "common.cu"),
        str(gen / "kernels" / "ops.cu"),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise MuhBuildError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    os.replace(tmp, out)
    return str(out)


def library() -> _Lib:
    return _lib if _lib is not None else load()


# ---- argument checks (cheap: these run on every decode step) -------------------------------------

_BY_DTYPE: dict = {}  # torch.dtype -> muh_op_dtype code (filled on first use: no torch at import)


def _code(t, op: str) -> int:
    code = _BY_DTYPE.get(t.dtype)
    if code is None and not _BY_DTYPE:
        import torch

        _BY_DTYPE.update({getattr(torch, name): c for name, c in _DTYPE_CODE.items()})
        code = _BY_DTYPE.get(t.dtype)
    if code is None:
        raise TypeError(f"muh ops: {op}: dtype {t.dtype} is not supported ({', '.join(OPS_DTYPES)})")
    if not t.is_cuda:
        raise ValueError(f"muh ops: {op}: expected CUDA tensors, got one on {t.device}")
    return code


def _row_stride(t, n: int):
    """Elements between rows when ``t`` is rows of ``n`` contiguous elements, else None."""
    if t.is_contiguous():
        return n
    if t.dim() == 2 and t.stride(1) == 1:
        return t.stride(0)
    return None


def _stream(t) -> int:
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(t.get_device())
    return torch.cuda.current_stream(t.device).cuda_stream


def _same(op: str, *ts) -> None:
    d = ts[0].dtype
    for t in ts[1:]:
        if t.dtype != d:
            raise TypeError(f"muh ops: {op}: mixed dtypes {d} and {t.dtype}")


def _check(lib: _Lib, rc: int) -> None:
    if rc:
        raise MuhRuntimeError(lib.error())


def norm_rows(op: str, **tensors):
    """(library, dtype code, hidden, rows) of a norm over the last dimension of ``tensors["input"]``, after
    the checks every norm makes (here and in the ctypes operators): CUDA tensors of one supported dtype,
    a ``weight`` of hidden elements, every other tensor shaped like the input (named in the given order)."""
    x, w = tensors["input"], tensors["weight"]
    lib = library()
    code = _code(x, op)
    _same(op, *tensors.values())
    hidden = x.shape[-1]
    if w.numel() != hidden or any(t.shape != x.shape for n, t in tensors.items() if n != "weight"):
        raise ValueError(f"muh ops: {op}: shapes " + ", ".join(f"{n} {tuple(t.shape)}" for n, t in tensors.items()))
    return lib, code, hidden, x.numel() // hidden if hidden else 0


# ---- vLLM 0.6.3 signatures ---------------------------------------------------------------------


def rms_norm(out, input, weight, epsilon):  # noqa: A002 - vLLM's parameter name
    """out = T(T(x · rsqrt(mean(x²) + ε)) · weight) over the last dimension (vLLM 0.6.3 semantics)."""
    lib, code, hidden, rows = norm_rows("rms_norm", out=out, input=input, weight=weight)
    si, so = _row_stride(input, hidden), _row_stride(out, hidden)
    if si is None:
        input, si = input.contiguous(), hidden
    if so is None or not weight.is_contiguous():
        raise ValueError("muh ops: rms_norm: `out` must be rows of contiguous elements and `weight` contiguous")
    _check(
        lib,
        lib.rms_norm(
            code,
            out.data_ptr(),
            input.data_ptr(),
            weight.data_ptr(),
            rows,
            hidden,
            si,
            so,
            float(epsilon),
            _stream(input),
        ),
    )


def fused_add_rms_norm(input, residual, weight, epsilon):  # noqa: A002
    """In place: residual = T(input + residual); input = rms_norm(residual) · weight (vLLM 0.6.3)."""
    lib, code, hidden, rows = norm_rows("fused_add_rms_norm", input=input, residual=residual, weight=weight)
    sx, sr = _row_stride(input, hidden), _row_stride(residual, hidden)
    if sx is None or sr is None or not weight.is_contiguous():
        # in place on tensors the kernel cannot address: compute on copies, write back
        x2, r2 = input.contiguous(), residual.contiguous()
        fused_add_rms_norm(x2, r2, weight.contiguous(), epsilon)
        input.copy_(x2)
        residual.copy_(r2)
        return
    _check(
        lib,
        lib.fused_add_rms_norm(
            code,
            input.data_ptr(),
            residual.data_ptr(),
            weight.data_ptr(),
            rows,
            hidden,
            sx,
            sr,
            float(epsilon),
            _stream(input),
        ),
    )


def silu_and_mul(out, x):
    """out = T(T(silu(x[..., :d])) · x[..., d:]), d = x.shape[-1] // 2 (vLLM 0.6.3)."""
    lib = library()
    code = _code(x, "silu_and_mul")
    _same("silu_and_mul", out, x)
    d = x.shape[-1] // 2
    if out.shape[-1] != d or out.numel() * 2 != x.numel():
        raise ValueError(
            f"muh ops: silu_and_mul: out {tuple(out.shape)} is not x {tuple(x.shape)} with half the last dim"
        )
    rows = x.numel() // x.shape[-1] if x.shape[-1] else 0
    si, so = _row_stride(x, 2 * d), _row_stride(out, d)
    if si is None:
        x, si = x.contiguous(), 2 * d
    if so is None:
        raise ValueError("muh ops: silu_and_mul: `out` must be rows of contiguous elements")
    _check(lib, lib.silu_and_mul(code, out.data_ptr(), x.data_ptr(), rows, d, si, so, _stream(x)))


def topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output):
    """vLLM 0.6.3's MoE routing: top-k of softmax(gating_output) per token into the given tensors
    (float32 weights, int32 ids, int32 source rows ``j · tokens + t``); no renormalisation (vLLM
    renormalises in Python)."""
    _topk(topk_weights, topk_ids, token_expert_indicies, gating_output, False)


def _topk(w, ids, src, gating, renormalize: bool) -> None:
    import torch

    lib = library()
    code = _code(gating, "topk_softmax")
    if w.dtype != torch.float32 or ids.dtype != torch.int32 or src.dtype != torch.int32:
        raise TypeError(
            f"muh ops: topk_softmax: expected float32 weights and int32 ids / indices, got "
            f"{w.dtype}, {ids.dtype}, {src.dtype}"
        )
    experts = gating.shape[-1]
    rows = gating.numel() // experts if experts else 0
    k = w.shape[-1]
    for name, t in (("topk_weights", w), ("topk_ids", ids), ("token_expert_indicies", src)):
        if t.numel() != rows * k or not t.is_contiguous():
            raise ValueError(f"muh ops: topk_softmax: {name} {tuple(t.shape)} is not a contiguous [{rows}, {k}]")
    if not gating.is_contiguous():
        gating = gating.contiguous()
    _check(
        lib,
        lib.topk_softmax(
            code,
            w.data_ptr(),
            ids.data_ptr(),
            src.data_ptr(),
            gating.data_ptr(),
            rows,
            experts,
            k,
            int(bool(renormalize)),
            _stream(gating),
        ),
    )


# ---- muh's own entry points --------------------------------------------------------------------


def moe_topk_softmax(gating_output, topk: int, renormalize: bool = False):
    """(weights float32 [T, k], ids int32 [T, k]) = top-k of softmax(gating_output), renormalised
    to sum 1 per token when ``renormalize`` (vLLM's ``fused_topk`` in one launch)."""
    import torch

    rows = gating_output.numel() // gating_output.shape[-1]
    w = torch.empty(rows, topk, dtype=torch.float32, device=gating_output.device)
    ids = torch.empty(rows, topk, dtype=torch.int32, device=gating_output.device)
    src = torch.empty(rows, topk, dtype=torch.int32, device=gating_output.device)
    _topk(w, ids, src, gating_output, renormalize)
    return w, ids


def softmax(out, x):
    """out = softmax(x) over the last dimension (float accumulation, one launch)."""
    lib = library()
    code = _code(x, "softmax")
    _same("softmax", out, x)
    cols = x.shape[-1]
    if out.shape != x.shape:
        raise ValueError(f"muh ops: softmax: out {tuple(out.shape)} vs x {tuple(x.shape)}")
    rows = x.numel() // cols if cols else 0
    si, so = _row_stride(x, cols), _row_stride(out, cols)
    if si is None:
        x, si = x.contiguous(), cols
    if so is None:
        raise ValueError("muh ops: softmax: `out` must be rows of contiguous elements")
    _check(lib, lib.softmax(code, out.data_ptr(), x.data_ptr(), rows, cols, si, so, _stream(x)))
