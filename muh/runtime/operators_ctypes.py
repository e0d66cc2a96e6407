"""The ctypes backend of ``torch.ops.muh.*``: CUDA implementations in Python over ``llm``'s library.

Used only where the C++ extension cannot build (``operators.load`` logs why). Same schemas, same
semantics and the same row addressing as ``kernels/bindings/ops_torch.cpp``: rows of the last
dimension, (tokens, heads) with one stride each when two levels address them, else a copy (written
back for outputs).
"""

from __future__ import annotations

import ctypes

from . import llm


def _rows3(t, tokens: int, heads: int, hidden: int):
    v = t.reshape(tokens, heads, hidden)
    if hidden > 1 and v.stride(2) != 1:
        v = v.contiguous()
    return v


def _write_back(t, v) -> None:
    if v.data_ptr() != t.data_ptr():
        t.copy_(v.view(t.shape))


def _split(t) -> tuple[int, int]:
    dims: list[list[int]] = []
    for i in range(t.dim() - 1):
        n, st = t.shape[i], t.stride(i)
        if n == 1:
            continue
        if dims and dims[-1][1] == st * n:
            dims[-1] = [dims[-1][0] * n, st]
        else:
            dims.append([n, st])
    rows = 1
    for n, _ in dims:
        rows *= n
    if len(dims) != 2 or (t.shape[-1] > 1 and t.stride(-1) != 1):
        return rows, 1
    return dims[0][0], dims[1][0]


def _norm_into(op, out, input, weight, gate, eps, offset, single):  # noqa: A002
    lib, code, hidden, _ = llm.norm_rows(
        op, out=out, input=input, weight=weight, **({"gate": gate} if gate is not None else {})
    )
    if input.numel() == 0:
        return
    tokens, heads = _split(input)
    in3, out3, w = _rows3(input, tokens, heads, hidden), _rows3(out, tokens, heads, hidden), weight.contiguous()
    a = llm.NormArgs(
        out=out3.data_ptr(),
        in_=in3.data_ptr(),
        weight=w.data_ptr(),
        tokens=tokens,
        heads=heads,
        hidden=hidden,
        in_stride=in3.stride(0),
        in_head_stride=in3.stride(1),
        out_stride=out3.stride(0),
        out_head_stride=out3.stride(1),
        eps=float(eps),
        weight_offset=offset,
        residual_alpha=1.0,
        single_rounding=single,
    )
    if gate is not None:
        g3 = _rows3(gate, tokens, heads, hidden)
        a.gate, a.gate_stride, a.gate_head_stride = g3.data_ptr(), g3.stride(0), g3.stride(1)
    llm._check(lib, lib.norm(code, ctypes.byref(a), llm._stream(input)))
    _write_back(out, out3)


def _fused(op, input, residual, weight, eps, alpha, offset, single):  # noqa: A002
    lib, code, hidden, rows = llm.norm_rows(op, input=input, residual=residual, weight=weight)
    if input.numel() == 0:
        return
    x3, r3, w = _rows3(input, rows, 1, hidden), _rows3(residual, rows, 1, hidden), weight.contiguous()
    a = llm.NormArgs(
        out=x3.data_ptr(),
        in_=x3.data_ptr(),
        residual=r3.data_ptr(),
        weight=w.data_ptr(),
        tokens=rows,
        heads=1,
        hidden=hidden,
        in_stride=x3.stride(0),
        out_stride=x3.stride(0),
        residual_stride=r3.stride(0),
        eps=float(eps),
        weight_offset=offset,
        residual_alpha=float(alpha),
        single_rounding=single,
    )
    llm._check(lib, lib.norm(code, ctypes.byref(a), llm._stream(input)))
    _write_back(input, x3)
    _write_back(residual, r3)


def rms_norm(out, input, weight, epsilon):  # noqa: A002
    _norm_into("rms_norm", out, input, weight, None, epsilon, 0.0, 0)


def fused_add_rms_norm(input, residual, weight, epsilon, residual_alpha=1.0):  # noqa: A002
    _fused("fused_add_rms_norm", input, residual, weight, epsilon, residual_alpha, 0.0, 0)


def gemma_rms_norm(input, weight, epsilon):  # noqa: A002
    out = input.new_empty(input.shape)
    _norm_into("gemma_rms_norm", out, input, weight, None, epsilon, 1.0, 1)
    return out


def gemma_fused_add_rms_norm(input, residual, weight, epsilon, residual_alpha=1.0):  # noqa: A002
    _fused("gemma_fused_add_rms_norm", input, residual, weight, epsilon, residual_alpha, 1.0, 1)


def gated_rms_norm(input, gate, weight, epsilon):  # noqa: A002
    out = input.new_empty(input.shape)
    _norm_into("gated_rms_norm", out, input, weight, gate, epsilon, 0.0, 0)
    return out


def silu_and_mul(out, x):
    if x.numel():
        llm.silu_and_mul(out.view(-1, out.shape[-1]) if out.is_contiguous() else out, x)


def shared_expert_combine(routed, shared, gate):
    lib = llm.library()
    code = llm._code(routed, "shared_expert_combine")
    out = routed.new_empty(routed.shape)
    if routed.numel() == 0:
        return out
    d = routed.shape[-1]
    rows = routed.numel() // d
    r2, s2, g2 = _rows3(routed, rows, 1, d), _rows3(shared, rows, 1, d), gate.reshape(rows)
    a = llm.GateAddArgs(
        out=out.data_ptr(),
        routed=r2.data_ptr(),
        shared=s2.data_ptr(),
        gate=g2.data_ptr(),
        rows=rows,
        d=d,
        out_stride=d,
        routed_stride=r2.stride(0),
        shared_stride=s2.stride(0),
        gate_stride=g2.stride(0),
    )
    llm._check(lib, lib.gate_add(code, ctypes.byref(a), llm._stream(routed)))
    return out


def _route(op, w, ids, src, gating, renormalize):
    import torch

    lib = llm.library()
    code = llm._code(gating, op)
    experts = gating.shape[-1]
    rows = gating.numel() // experts if experts else 0
    if rows == 0:
        return
    g2 = _rows3(gating, rows, 1, experts)
    llm._check(
        lib,
        lib.moe_route(
            code,
            w.data_ptr(),
            ids.data_ptr(),
            int(ids.dtype == torch.int64),
            src.data_ptr() if src is not None else None,
            g2.data_ptr(),
            rows,
            experts,
            g2.stride(0),
            w.shape[-1],
            int(bool(renormalize)),
            llm._stream(gating),
        ),
    )


def topk_softmax(topk_weights, topk_ids, token_expert_indicies, gating_output):
    _route("topk_softmax", topk_weights, topk_ids, token_expert_indicies, gating_output, False)


def moe_topk_softmax(gating_output, topk, renormalize=False, id_dtype=None):
    import torch

    experts = gating_output.shape[-1]
    rows = gating_output.numel() // experts if experts else 0
    w = gating_output.new_empty((rows, topk), dtype=torch.float32)
    ids = gating_output.new_empty((rows, topk), dtype=id_dtype or torch.int32)
    _route("moe_topk_softmax", w, ids, None, gating_output, renormalize)
    return w, ids


def softmax(out, x):
    if x.numel():
        llm.softmax(out, x)


IMPLS = {
    f.__name__: f
    for f in (
        rms_norm,
        fused_add_rms_norm,
        gemma_rms_norm,
        gemma_fused_add_rms_norm,
        gated_rms_norm,
        silu_and_mul,
        shared_expert_combine,
        topk_softmax,
        moe_topk_softmax,
        softmax,
    )
}


def register(lib) -> None:
    """The CUDA implementations of every schema on ``lib`` (a torch.library.Library of namespace muh)."""
    for name, fn in IMPLS.items():
        lib.impl(name, fn, "CUDA")
