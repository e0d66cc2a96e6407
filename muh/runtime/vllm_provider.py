"""Provider of muh's ops for the vLLM general plugin (``tune { ops_module = … }``).

Importing this module (the plugin does it, inside vLLM, before it rebinds anything):

1. loads muh's kernels (``MUH_OPS_LIB`` / ``MUH_KERNELS_DIR``); when they cannot load, the import
   fails with the reason and the plugin keeps every vLLM op, logging that reason;
2. reads the signature of each stock ``vllm._custom_ops`` function and exports muh's version only
   when it is exactly vLLM 0.6.3's (``llm.VLLM_SIGNATURES``); for any other signature the
   attribute lookup fails with the reason, and the plugin keeps that op (the version guard);
3. each exported op falls back to vLLM's own function, logging why once per op, for inputs muh's
   kernels refuse (an unsupported dtype, more experts than a warp holds, …) and on any other failure
   (a kernel error, torch operators that cannot register on this torch): an op never raises what the
   engine's own function would not.

Methods (``llm.VLLM_METHODS``) are served the same way: ``gemma_rms_norm`` stands in for
``GemmaRMSNorm.forward_cuda`` (the plugin rebinds it on the class), guarded by the recorded signature
and falling back to the stock method per input.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os

import vllm._custom_ops as _vllm_ops

from . import llm, operators_ctypes
from .errors import MuhRuntimeError

logger = logging.getLogger("vllm.muh_plugin.ops")
MARKER = "muh-ops"

llm.library()  # raises MuhRuntimeError (-> ImportError in the plugin's eyes) when kernels cannot load

_STOCK = {}
_REFUSED = {}
for _name in llm.OPS:
    _fn = getattr(_vllm_ops, _name, None)
    _why = "vllm._custom_ops has no `%s`" % _name if _fn is None else llm.signature_problem(_name, _fn)
    if _why:
        _REFUSED[_name] = _why
    else:
        _STOCK[_name] = getattr(_fn, "__muh_stock__", _fn)
for _name, (_module, _attr, _params, _where) in llm.VLLM_METHODS.items():
    try:
        _fn = importlib.import_module(_module)
        for _part in _attr.split("."):
            _fn = getattr(_fn, _part)
    except Exception as _e:  # noqa: BLE001 - no such class here: the plugin keeps whatever there is
        _REFUSED[_name] = "%s.%s cannot be read (%s: %s)" % (_module, _attr, type(_e).__name__, _e)
        continue
    _why = llm.method_problem(_name, _fn)
    if _why:
        _REFUSED[_name] = _why
    else:
        _STOCK[_name] = getattr(_fn, "__muh_stock__", _fn)
_warned = set()


def _fallback(name, err):
    if name not in _warned:
        _warned.add(name)
        logger.warning("%s: %s: falling back to vLLM's op for this input: %s", MARKER, name, err)
    return _STOCK[name]


def _rms_norm(out, input, weight, epsilon):  # noqa: A002 - vLLM's parameter names
    try:
        return llm.rms_norm(out, input, weight, epsilon)
    except Exception as e:  # noqa: BLE001 - any failure: the engine's op
        return _fallback("rms_norm", e)(out, input, weight, epsilon)


def _fused_add_rms_norm(input, residual, weight, epsilon):  # noqa: A002
    try:
        return llm.fused_add_rms_norm(input, residual, weight, epsilon)
    except Exception as e:  # noqa: BLE001 - any failure: the engine's op
        return _fallback("fused_add_rms_norm", e)(input, residual, weight, epsilon)


def _fused_add_rms_norm_alpha(input, residual, weight, epsilon, residual_alpha=1.0):  # noqa: A002
    """The fork's form (``llm.VLLM_FORMS``): ``residual = T(input + T(α · residual))``; α = 1 is vLLM's."""
    try:
        if float(residual_alpha) == 1.0:
            return llm.fused_add_rms_norm(input, residual, weight, epsilon)
        return operators_ctypes.fused_add_rms_norm(input, residual, weight, epsilon, float(residual_alpha))
    except Exception as e:  # noqa: BLE001 - any failure: the engine's op
        return _fallback("fused_add_rms_norm", e)(input, residual, weight, epsilon, residual_alpha)


def _silu_and_mul(out, x):
    try:
        return llm.silu_and_mul(out, x)
    except Exception as e:  # noqa: BLE001 - any failure: the engine's op
        return _fallback("silu_and_mul", e)(out, x)


def _topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output):
    try:
        return llm.topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output)
    except Exception as e:  # noqa: BLE001 - any failure: the engine's op
        return _fallback("topk_softmax", e)(topk_weights, topk_ids, token_expert_indicies, gating_output)


_TORCH_OPS = []


def _muh_torch_ops():
    """``torch.ops.muh``, registered on first use over the kernels loaded above: the C++ extension
    when they came from a generated folder (``MUH_KERNELS_DIR``, development), else the ctypes
    backend over the built library (``MUH_OPS_LIB``; the image ships the library only)."""
    if not _TORCH_OPS:
        import torch

        from . import operators

        folder = None if os.environ.get("MUH_OPS_LIB") else os.environ.get("MUH_KERNELS_DIR")
        try:
            if operators.loaded() is None:
                if folder and os.path.isdir(folder):
                    operators.load(folder)
                else:
                    operators.load(llm.library().origin, backend="ctypes")
            _TORCH_OPS.append(torch.ops.muh)
        except Exception as e:  # noqa: BLE001 - remembered: later calls do not retry the registration
            _TORCH_OPS.append(MuhRuntimeError("%s: %s" % (type(e).__name__, e)))
    if isinstance(_TORCH_OPS[0], Exception):
        raise _TORCH_OPS[0]
    return _TORCH_OPS[0]


_FLOATS = llm.OPS_DTYPES


def _gemma_problem(x, weight, residual) -> str | None:
    """Why muh's gemma ops cannot take this call (checked before anything is written), or None."""
    if str(x.dtype).rpartition(".")[2] not in _FLOATS:
        return "dtype %s is not supported (%s)" % (x.dtype, ", ".join(_FLOATS))
    if weight.dtype != x.dtype:
        return "weight dtype %s differs from the input's %s" % (weight.dtype, x.dtype)
    if not x.is_cuda or not weight.is_cuda:
        return "expected CUDA tensors, got the input on %s" % x.device
    if x.dim() == 0 or weight.dim() != 1 or weight.numel() != x.shape[-1]:
        return "shape: input %s, weight %s (a 1-D weight of the last dimension)" % (tuple(x.shape), tuple(weight.shape))
    if x.shape[-1] > 0 and x.stride(-1) != 1:
        return "the input's last dimension is strided (stride %d)" % x.stride(-1)
    if residual is not None:
        if residual.shape != x.shape or residual.dtype != x.dtype or residual.device != x.device:
            return "residual %s %s does not match the input %s %s" % (
                tuple(residual.shape),
                residual.dtype,
                tuple(x.shape),
                x.dtype,
            )
        if not x.is_contiguous() or not residual.is_contiguous():
            return "the fused form works in place: input and residual must be contiguous"
    return None


def _gemma_rms_norm(self, x, residual=None):
    """``GemmaRMSNorm.forward_cuda(self, x, residual=None)`` of vLLM 0.6.3 on muh's ops, with the
    semantics of its ``forward_native``: with a residual, ``x = x + residual`` in x's dtype and
    ``residual = x``; then ``x · rsqrt(mean(x²) + ε) · (1 + w)`` in float32 over the last dimension,
    rounded once to x's dtype; returns ``x``, or ``(x, residual)`` when a residual was given.

    * no residual: ``torch.ops.muh.gemma_rms_norm`` → a new tensor. A q/k norm input
      ``[tokens, heads, head_dim]`` (a strided view of the fused qkv projection, head_dim 256 in
      Qwen3.6) is the head-wise norm: the op addresses its rows as (tokens, heads) with one stride
      each, no copy;
    * residual: ``torch.ops.muh.gemma_fused_add_rms_norm``, in place like the stock RMSNorm's fused
      path (``x`` becomes the normalised output, ``residual`` the sum; vLLM's decoder layers rebind
      both from the return value);
    * anything the ops do not take (dtype, a weight of another dtype, CPU tensors, shapes,
      non-contiguous tensors for the in-place form, kernels that cannot load, torch operators that
      cannot register on this torch) and any error out of the op: vLLM's own method, the reason
      logged once. Inputs are checked before anything is written.
    """
    try:
        weight = self.weight.data
        why = _gemma_problem(x, weight, residual)
        if why is None:
            try:
                ops = _muh_torch_ops()
            except Exception as e:  # noqa: BLE001
                why = "muh's torch operators are unavailable: %s" % e
        if why is None:
            if residual is None:
                return ops.gemma_rms_norm(x, weight, self.variance_epsilon)
            ops.gemma_fused_add_rms_norm(x, residual, weight, self.variance_epsilon, 1.0)
            return x, residual
    except Exception as e:  # noqa: BLE001 - a kernel error: the engine's own method serves the call
        why = "%s: %s" % (type(e).__name__, e)
    return _fallback("gemma_rms_norm", why)(self, x, residual)


_IMPL = {
    "rms_norm": _rms_norm,
    "fused_add_rms_norm": _fused_add_rms_norm,
    "silu_and_mul": _silu_and_mul,
    "topk_softmax": _topk_softmax,
    "gemma_rms_norm": _gemma_rms_norm,
}
if (
    "fused_add_rms_norm" in _STOCK
    and tuple(inspect.signature(_STOCK["fused_add_rms_norm"]).parameters) == llm.VLLM_FORMS["fused_add_rms_norm"][0]
):
    _IMPL["fused_add_rms_norm"] = (
        _fused_add_rms_norm_alpha  # the provider takes exactly the parameters it stands in for
    )
for _name, _impl in _IMPL.items():
    _impl.__name__ = _impl.__qualname__ = _name
    if _name in _STOCK:
        globals()[_name] = _impl


def __getattr__(name):
    if name in _REFUSED:
        raise AttributeError(_REFUSED[name])
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
