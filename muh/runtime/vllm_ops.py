"""Provider of muh's ops for the vLLM general plugin (``tune { ops_module = … }``).

Importing this module (the plugin does it, inside vLLM, before it rebinds anything):

1. loads muh's kernels (``MUH_OPS_LIB`` / ``MUH_KERNELS_DIR``); when they cannot load, the import
   fails with the reason and the plugin keeps every vLLM op, logging that reason;
2. reads the signature of each stock ``vllm._custom_ops`` function and exports muh's version only
   when it is exactly vLLM 0.6.3's (``ops_llm.VLLM_SIGNATURES``); for any other signature the
   attribute lookup fails with the reason, and the plugin keeps that op (the version guard);
3. each exported op falls back to vLLM's own function, logging why once, for inputs muh's kernels
   refuse (an unsupported dtype, more experts than a warp holds, …).
"""
from __future__ import annotations

import logging

import vllm._custom_ops as _vllm_ops

from muh.runtime import ops_llm
from muh.runtime.errors import MuhRuntimeError

logger = logging.getLogger("vllm.muh_plugin.ops")
MARKER = "muh-ops"

ops_llm.library()  # raises MuhRuntimeError (-> ImportError in the plugin's eyes) when kernels cannot load

_STOCK = {}
_REFUSED = {}
for _name in ops_llm.OPS:
    _fn = getattr(_vllm_ops, _name, None)
    _why = "vllm._custom_ops has no `%s`" % _name if _fn is None else ops_llm.signature_problem(_name, _fn)
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
        return ops_llm.rms_norm(out, input, weight, epsilon)
    except (MuhRuntimeError, TypeError, ValueError) as e:
        return _fallback("rms_norm", e)(out, input, weight, epsilon)


def _fused_add_rms_norm(input, residual, weight, epsilon):  # noqa: A002
    try:
        return ops_llm.fused_add_rms_norm(input, residual, weight, epsilon)
    except (MuhRuntimeError, TypeError, ValueError) as e:
        return _fallback("fused_add_rms_norm", e)(input, residual, weight, epsilon)


def _silu_and_mul(out, x):
    try:
        return ops_llm.silu_and_mul(out, x)
    except (MuhRuntimeError, TypeError, ValueError) as e:
        return _fallback("silu_and_mul", e)(out, x)


def _topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output):
    try:
        return ops_llm.topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output)
    except (MuhRuntimeError, TypeError, ValueError) as e:
        return _fallback("topk_softmax", e)(topk_weights, topk_ids, token_expert_indicies, gating_output)


_IMPL = {"rms_norm": _rms_norm, "fused_add_rms_norm": _fused_add_rms_norm, "silu_and_mul": _silu_and_mul,
         "topk_softmax": _topk_softmax}
for _name, _impl in _IMPL.items():
    _impl.__name__ = _impl.__qualname__ = _name
    if _name in _STOCK:
        globals()[_name] = _impl


def __getattr__(name):
    if name in _REFUSED:
        raise AttributeError(_REFUSED[name])
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
