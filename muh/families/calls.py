"""Python API over the generated kernels. Needs torch (imported on first use, not at import).

Every op checks its tensor (CUDA, contiguous, supported dtype) before any kernel runs and raises
TypeError / ValueError naming the op and the fix; kernel-side failures raise MuhRuntimeError.
"""
from __future__ import annotations

from muh import families
from muh.runtime.dtypes import CODE as DTYPE_CODES
from muh.runtime.errors import MuhRuntimeError

# The family records own the types, codes and operators (muh/families/; api.h prints the same).
SUPPORTED = {r.name: r.dtypes for r in families.records()}
REDUCE_OPS = families.get("reduce").operators
TRANSFORM_OPS = families.get("transform").operators
_EPOCH_LIMIT = (1 << 30) - 1


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise MuhRuntimeError("muh.families.calls needs PyTorch: pip install 'muh[runtime]'") from e
    return torch


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def check_tensor(x, op: str) -> str:
    """Validate ``x`` for ``op``; returns its dtype name."""
    torch = _torch()
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"muh.families.calls.{op}: expected a torch.Tensor, got {type(x).__name__}")
    name = _dtype_name(x)
    if name not in SUPPORTED[op]:
        raise TypeError(f"muh.families.calls.{op}: dtype {x.dtype} is not supported "
                        f"(supported: {', '.join(SUPPORTED[op])})")
    if not x.is_cuda:
        raise ValueError(f"muh.families.calls.{op}: expected a CUDA tensor, got one on {x.device} (use .cuda())")
    if not x.is_contiguous():
        raise ValueError(f"muh.families.calls.{op}: expected a contiguous tensor (use .contiguous())")
    return name


def _kernels(kernels):
    if kernels is not None:
        return kernels
    from muh.runtime.library import default

    return default()


def _stream(x) -> int:
    return _torch().cuda.current_stream(x.device).cuda_stream


def workspace(k, x, key: str, nbytes: int):
    """A zero-filled byte buffer kept per (device, key) and grown on demand; returns [tensor, epoch]."""
    torch = _torch()
    slot = (x.device.index, key)
    ws = k.workspaces.get(slot)
    if ws is None or ws[0].numel() < nbytes:
        ws = [torch.zeros(max(nbytes, 256), dtype=torch.uint8, device=x.device), 0]
        k.workspaces[slot] = ws
    return ws


def _check_out(out, x, numel: int, op: str) -> None:
    if out.dtype != x.dtype or out.device != x.device or not out.is_contiguous() or out.numel() != numel:
        raise ValueError(f"muh.families.calls.{op}: out must be a contiguous {x.dtype} tensor of {numel} "
                         f"element(s) on {x.device}")


def reduce(x, op: str = "sum", *, out=None, kernels=None):
    """op over all elements of ``x`` (CUB semantics: the result has x's dtype); a 0-dim tensor
    (or ``out``, one element of x's dtype). Empty input gives the op's identity."""
    torch = _torch()
    name = check_tensor(x, "reduce")
    if op not in REDUCE_OPS:
        raise ValueError(f"muh.families.calls.reduce: unknown op `{op}` (one of {', '.join(REDUCE_OPS)})")
    k = _kernels(kernels)
    out = torch.empty((), dtype=x.dtype, device=x.device) if out is None else out
    _check_out(out, x, 1, "reduce")
    nbytes = int(k.raw("muh_reduce_workspace_bytes")())
    ws = workspace(k, x, "reduce", nbytes)
    with torch.cuda.device(x.device):
        k.call("muh_reduce", REDUCE_OPS[op], DTYPE_CODES[name], x.data_ptr(), x.numel(), out.data_ptr(),
               ws[0].data_ptr(), ws[0].numel(), _stream(x))
    return out


def scan(x, exclusive: bool = False, *, out=None, kernels=None):
    """Inclusive (or exclusive) prefix sum over the elements of ``x`` in memory order; x's shape."""
    torch = _torch()
    name = check_tensor(x, "scan")
    k = _kernels(kernels)
    out = torch.empty_like(x) if out is None else out
    _check_out(out, x, x.numel(), "scan")
    nbytes = int(k.raw("muh_scan_workspace_bytes")(DTYPE_CODES[name], x.numel()))
    ws = workspace(k, x, f"scan{x.element_size()}", nbytes)
    ws[1] = ws[1] % _EPOCH_LIMIT + 1
    with torch.cuda.device(x.device):
        k.call("muh_scan", int(bool(exclusive)), DTYPE_CODES[name], x.data_ptr(), out.data_ptr(), x.numel(),
               ws[0].data_ptr(), ws[0].numel(), ws[1], _stream(x))
    return out


def transform(x, op: str = "scale", alpha: float = 1.0, *, out=None, kernels=None):
    """Element-wise ``op`` (scale: alpha*x, relu, silu) into a new tensor (or ``out``)."""
    torch = _torch()
    name = check_tensor(x, "transform")
    if op not in TRANSFORM_OPS:
        raise ValueError(f"muh.families.calls.transform: unknown op `{op}` (one of {', '.join(TRANSFORM_OPS)})")
    k = _kernels(kernels)
    out = torch.empty_like(x) if out is None else out
    _check_out(out, x, x.numel(), "transform")
    with torch.cuda.device(x.device):
        k.call("muh_transform", TRANSFORM_OPS[op], DTYPE_CODES[name], x.data_ptr(), out.data_ptr(), x.numel(),
               float(alpha), _stream(x))
    return out


def topk(x, k: int, *, out=None, kernels=None):
    """The ``k`` largest of each row of a 2-D (or 1-D) tensor: (values, int64 indices), sorted
    descending, equal values in ascending index order."""
    torch = _torch()
    name = check_tensor(x, "topk")
    if x.dim() not in (1, 2):
        raise ValueError(f"muh.families.calls.topk: expected a 1-D or 2-D tensor, got {x.dim()}-D")
    rows, cols = (1, x.shape[0]) if x.dim() == 1 else tuple(x.shape)
    if not 0 <= k <= cols:
        raise ValueError(f"muh.families.calls.topk: k={k} outside 0..{cols}")
    kern = _kernels(kernels)
    if out is None:
        vals = torch.empty((rows, k), dtype=x.dtype, device=x.device)
        idx = torch.empty((rows, k), dtype=torch.int64, device=x.device)
    else:
        vals, idx = out
        _check_out(vals, x, rows * k, "topk")
        if idx.dtype != torch.int64 or not idx.is_contiguous() or idx.numel() != rows * k or idx.device != x.device:
            raise ValueError(f"muh.families.calls.topk: out indices must be a contiguous int64 tensor of {rows * k} "
                             f"elements on {x.device}")
    with torch.cuda.device(x.device):
        kern.call("muh_topk", DTYPE_CODES[name], x.data_ptr(), rows, cols, k, vals.data_ptr(), idx.data_ptr(),
                  _stream(x))
    if x.dim() == 1:
        return vals[0], idx[0]
    return vals, idx


def __getattr__(name: str):
    """The Python entry points the family records add (e.g. ``histogram_even``)."""
    for rec in families.records():
        if name in rec.python_ops:
            return rec.python_ops[name]
    raise AttributeError(name)
