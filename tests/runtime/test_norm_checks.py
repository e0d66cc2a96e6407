"""The norms' argument checks are one function (``llm.norm_rows``) for the ctypes ops and the ctypes
operators: the operators refuse what the C++ binding refuses (a weight or gate of another dtype, a gate
of another shape) before anything reaches the library. CPU tensors, a stand-in library: no GPU."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (.ci/run installs a CPU build)")

from muh.runtime import llm, operators_ctypes  # noqa: E402


class _Lib:
    """Records the calls that reach the library."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *a: self.calls.append(name) or 0


@pytest.fixture
def lib(monkeypatch):
    fake = _Lib()
    monkeypatch.setattr(llm, "library", lambda: fake)
    monkeypatch.setattr(llm, "_code", lambda t, op: 3)  # past the CUDA-tensor check: CPU tensors here
    monkeypatch.setattr(llm, "_stream", lambda t: 0)
    return fake


def test_a_good_call_reaches_the_library(lib):
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    operators_ctypes.rms_norm(torch.empty_like(x), x, torch.randn(64, dtype=torch.bfloat16), 1e-6)
    operators_ctypes.gated_rms_norm(x, torch.randn_like(x), torch.randn(64, dtype=torch.bfloat16), 1e-6)
    operators_ctypes.fused_add_rms_norm(x, torch.randn_like(x), torch.randn(64, dtype=torch.bfloat16), 1e-6)
    assert lib.calls == ["norm", "norm", "norm"]


@pytest.mark.parametrize("op", ("rms_norm", "gemma_rms_norm", "fused_add_rms_norm", "gated_rms_norm"))
def test_a_weight_of_another_dtype_is_refused(lib, op):
    x = torch.randn(4, 64, dtype=torch.bfloat16)
    w = torch.randn(64, dtype=torch.float32)  # read as bf16 by the kernel: garbage, so refused
    args = {
        "rms_norm": (torch.empty_like(x), x, w, 1e-6),
        "gemma_rms_norm": (x, w, 1e-6),
        "fused_add_rms_norm": (x, torch.randn_like(x), w, 1e-6),
        "gated_rms_norm": (x, torch.randn_like(x), w, 1e-6),
    }[op]
    with pytest.raises(TypeError, match=f"muh ops: {op}: mixed dtypes torch.bfloat16 and torch.float32"):
        getattr(operators_ctypes, op)(*args)
    assert lib.calls == []


def test_a_gate_of_another_shape_or_dtype_is_refused(lib):
    x, w = torch.randn(4, 64, dtype=torch.float16), torch.randn(64, dtype=torch.float16)
    with pytest.raises(
        ValueError,
        match=r"muh ops: gated_rms_norm: shapes out \(4, 64\), input \(4, 64\), "
        r"weight \(64,\), gate \(2, 128\)",
    ):
        operators_ctypes.gated_rms_norm(x, torch.randn(2, 128, dtype=torch.float16), w, 1e-6)
    with pytest.raises(TypeError, match="mixed dtypes"):
        operators_ctypes.gated_rms_norm(x, torch.randn(4, 64, dtype=torch.float32), w, 1e-6)
    assert lib.calls == []


def test_the_ctypes_ops_say_the_same(lib):
    x = torch.randn(4, 64, dtype=torch.float16)
    with pytest.raises(ValueError, match=r"muh ops: rms_norm: shapes out \(4, 32\), input \(4, 64\), weight \(64,\)"):
        llm.rms_norm(torch.empty(4, 32, dtype=torch.float16), x, torch.randn(64, dtype=torch.float16), 1e-6)
    with pytest.raises(
        ValueError,
        match=r"muh ops: fused_add_rms_norm: shapes input \(4, 64\), residual \(4, 64\), "
        r"weight \(32,\)",
    ):
        llm.fused_add_rms_norm(x, torch.randn_like(x), torch.randn(32, dtype=torch.float16), 1e-6)
    assert lib.calls == []
