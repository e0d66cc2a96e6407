"""What the families' Python entry points share: torch (imported on first use), the tensor checks, the
kernels to call, the stream, workspaces. Needs no family record (each entry point passes its types).

Every entry point checks its tensor (CUDA, contiguous, supported dtype) before any kernel runs and raises
TypeError / ValueError naming the op and the fix; kernel-side failures raise MuhRuntimeError.
"""

from __future__ import annotations

from muh.runtime.errors import MuhRuntimeError

API = "muh.families.calls"  # the module users call the entry points through (named in errors)
EPOCH_LIMIT = (1 << 30) - 1


def torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise MuhRuntimeError(f"{API} needs PyTorch: pip install 'muh[runtime]'") from e
    return torch


def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def check_tensor(x, op: str, dtypes: tuple[str, ...]) -> str:
    """Validate ``x`` for ``op`` (supported element types ``dtypes``); returns its dtype name."""
    torch_ = torch()
    if not isinstance(x, torch_.Tensor):
        raise TypeError(f"{API}.{op}: expected a torch.Tensor, got {type(x).__name__}")
    name = dtype_name(x)
    if name not in dtypes:
        raise TypeError(f"{API}.{op}: dtype {x.dtype} is not supported (supported: {', '.join(dtypes)})")
    if not x.is_cuda:
        raise ValueError(f"{API}.{op}: expected a CUDA tensor, got one on {x.device} (use .cuda())")
    if not x.is_contiguous():
        raise ValueError(f"{API}.{op}: expected a contiguous tensor (use .contiguous())")
    return name


def kernels(k):
    """``k``, or the default kernels (``muh.runtime.library.default``; a C library gets the families'
    C interface, ``registry.api``)."""
    if k is not None:
        return k
    from muh.families.registry import api
    from muh.runtime.library import default

    return default(api)


def stream(x) -> int:
    return torch().cuda.current_stream(x.device).cuda_stream


def workspace(k, x, key: str, nbytes: int):
    """A zero-filled byte buffer kept per (device, key) and grown on demand; returns [tensor, epoch]."""
    torch_ = torch()
    slot = (x.device.index, key)
    ws = k.workspaces.get(slot)
    if ws is None or ws[0].numel() < nbytes:
        ws = [torch_.zeros(max(nbytes, 256), dtype=torch_.uint8, device=x.device), 0]
        k.workspaces[slot] = ws
    return ws


def check_out(out, x, numel: int, op: str) -> None:
    if out.dtype != x.dtype or out.device != x.device or not out.is_contiguous() or out.numel() != numel:
        raise ValueError(f"{API}.{op}: out must be a contiguous {x.dtype} tensor of {numel} element(s) on {x.device}")
