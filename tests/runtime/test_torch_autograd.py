"""Issue 42: every torch.ops.muh operator says what autograd does with it, as torch.library asks: none is
differentiable, so backward through any of them raises NotDifferentiable with what to do, and
torch.compile no longer warns that an autograd kernel "was not registered … may lead to silently
incorrect behavior". CPU PyTorch is enough: the operators get a stand-in CPU kernel here (the real ones
are CUDA), registered under the schemas and the autograd registration of muh.runtime.operators."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HAVE_TORCH = importlib.util.find_spec("torch") is not None

SCRIPT = textwrap.dedent(
    r"""
    import sys, warnings
    import torch
    from muh.runtime import operators
    from muh.runtime.errors import NotDifferentiable

    operators._define(torch)  # the schemas and fakes `operators.load` registers
    operators.register_autograd(torch, operators._state["lib"])  # the ctypes backend's autograd rule
    cpu = torch.library.Library("muh", "IMPL")
    def gated(x, gate, w, eps):  # stand-ins with the right shapes (the values do not matter here)
        return x * w * torch.sigmoid(gate)
    def combine(routed, shared, gate):
        return routed + shared * torch.sigmoid(gate)
    def route(g, topk, renormalize=False, id_dtype=None):
        v, i = torch.topk(torch.softmax(g.float(), -1), topk)
        return v, i.to(id_dtype or torch.int32)
    def rms(out, x, w, eps):
        out.copy_(x * w)
    def fused(x, res, w, eps, alpha=1.0):
        res.add_(x)
        x.copy_(res * w)
    cpu.impl("gated_rms_norm", gated, "CPU")
    cpu.impl("shared_expert_combine", combine, "CPU")
    cpu.impl("moe_topk_softmax", route, "CPU")
    cpu.impl("rms_norm", rms, "CPU")
    cpu.impl("fused_add_rms_norm", fused, "CPU")
    m = torch.ops.muh

    def calls(x, w):
        out = torch.empty_like(x)
        m.rms_norm(out, x, w, 1e-6)
        res = torch.zeros_like(x)
        h = x * 1.0  # not a leaf: an in-place write on it is allowed
        m.fused_add_rms_norm(h, res, w, 1e-6)
        v, _ = m.moe_topk_softmax(x, 2)
        return {"gated_rms_norm": m.gated_rms_norm(x, x, w, 1e-6), "shared_expert_combine": """
    r"""m.shared_expert_combine(x, x, x),
                "moe_topk_softmax": v, "rms_norm": out, "fused_add_rms_norm": h}

    x = torch.randn(4, 8, requires_grad=True)
    w = torch.randn(8, requires_grad=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for how in ("eager", "compiled"):
            fn = calls if how == "eager" else torch.compile(calls, backend="eager", fullgraph=True)
            outs = fn(x, w)
            for name, y in outs.items():
                try:
                    y.sum().backward()
                except NotDifferentiable as err:
                    assert f"torch.ops.muh.{name} is not differentiable" in str(err) and "torch.no_grad()" """
    r"""in str(err), err
                    print("refused", how, name)
                else:
                    print("NO ERROR", how, name, x.grad)
        with torch.no_grad():  # inference: no autograd, no error, the kernels run
            outs = calls(x, w)
            assert all(not y.requires_grad for y in outs.values())
            print("no_grad ok")
    for wmsg in seen:
        print("WARNING", str(wmsg.message).splitlines()[0][:200])
"""
)


@pytest.mark.torch
@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed (.ci/run installs a CPU build)")
def test_backward_through_any_muh_operator_says_it_is_not_differentiable():
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    names = ("gated_rms_norm", "shared_expert_combine", "moe_topk_softmax", "rms_norm", "fused_add_rms_norm")
    assert sorted(ln for ln in lines if ln.startswith("refused")) == sorted(
        f"refused {how} {n}" for how in ("eager", "compiled") for n in names
    ), proc.stdout
    assert "no_grad ok" in lines
    assert not [ln for ln in lines if ln.startswith(("NO ERROR", "WARNING"))], proc.stdout
    assert "autograd kernel was not registered" not in proc.stderr, proc.stderr[-2000:]


def test_every_operator_has_its_autograd_rule():
    """The rule is chosen per schema: what an operator writes in place is read from its `(a!)` marks."""
    from muh.runtime import operators

    assert operators.mutated(operators.SCHEMAS["fused_add_rms_norm"]) == [0, 1]
    assert operators.mutated(operators.SCHEMAS["topk_softmax"]) == [0, 1, 2]
    assert operators.mutated(operators.SCHEMAS["moe_topk_softmax"]) == []
    assert operators.mutated(operators.SCHEMAS["gated_rms_norm"]) == []
