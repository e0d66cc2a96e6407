"""The LLM ops' size buckets on a GPU: a spec whose rms_norm and silu_and_mul policies differ on each
side of their bucket bounds (tests/fixtures/ops/buckets.muh), built as `muh build` builds it, run at
rows × hidden just below, at and above each bound against a float64 reference with vLLM's roundings
(the host's bucket choice and every bucket's kernels: a wrong pick or a broken instantiation shows)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("no CUDA device: the ops' GPU tests need one", allow_module_level=True)

from muh.runtime import llm  # noqa: E402

pytestmark = pytest.mark.gpu

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "ops" / "buckets.muh"
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
# (tokens, hidden): rows × hidden below / at / above 2^16 and 2^20; 4097: unvectorised rows
SHAPES = [(15, 4096), (16, 4096), (17, 4096), (1, 4097), (255, 4096), (256, 4096), (300, 4097)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    from muh.pipeline import build

    out, _ = build(SPEC, tmp_path_factory.mktemp("ops-buckets") / "out")
    major, minor = torch.cuda.get_device_capability()
    return llm.load(llm.build(out, arch=f"sm_{major}{minor}"))


def close(out, ref, dtype, what):
    tol = TOL[dtype]
    o = out.double()
    assert torch.isfinite(o).all(), f"{what}: unwritten or non-finite outputs"
    err = (o - ref).abs() - tol * (1 + ref.abs())
    assert err.max().item() <= 0, f"{what}: max |diff| {(o - ref).abs().max().item():.3g}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("tokens,hidden", SHAPES)
def test_rms_norm_and_silu_and_mul_on_both_sides_of_each_bound(lib, dtype, tokens, hidden):
    torch.manual_seed(tokens * 131 + hidden)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype)
    w = torch.rand(hidden, device="cuda", dtype=dtype) + 0.5
    out = torch.full_like(x, float("nan"))
    llm.rms_norm(out, x, w, 1e-6)
    x64 = x.double()
    ref = (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-6)).to(dtype).double() * w.double()
    close(out, ref, dtype, f"rms_norm {tokens}x{hidden}")
    y = torch.randn(tokens, 2 * hidden, device="cuda", dtype=dtype)
    o2 = torch.full((tokens, hidden), float("nan"), device="cuda", dtype=dtype)
    llm.silu_and_mul(o2, y)
    g, u = y[:, :hidden].double(), y[:, hidden:].double()
    close(o2, (g / (1 + torch.exp(-g))).to(dtype).double() * u, dtype, f"silu_and_mul {tokens}x{hidden}")
