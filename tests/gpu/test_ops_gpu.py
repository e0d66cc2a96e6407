"""The LLM serving ops on a GPU against a float64 PyTorch reference of vLLM 0.6.3's semantics.

Two builds: the H200 profile (native 32-lane warp) and the BI-V100 profile (64-lane logical warp,
C++14) run in warp emulation on the same GPU — the kernels must not assume 32 lanes. Inputs are
fresh random numbers (never zeros), outputs are poisoned with NaN first.

Tolerances (max |out - ref| <= atol + rtol * |ref|, element-wise; the reference rounds where vLLM
rounds): float32 rtol 1e-5 / atol 1e-5; float16 rtol 2e-3 / atol 2e-3; bfloat16 rtol 1.6e-2 /
atol 1.6e-2 (about two units in the last place of each format: the kernel and the reference may
round an intermediate value to opposite neighbours). topk_softmax: the ids select the k largest
probabilities of a float64 softmax, descending, ties to the lower expert; weights with the float32
tolerance.
"""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("no CUDA device: the ops' GPU tests need one", allow_module_level=True)

from bench import presets  # noqa: E402
from muh.runtime import llm  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}
BUILDS = {"h200": ("h200", None, "c++17"), "bi100-emu64": ("bi100", 64, "c++14")}
HIDDEN = (128, 130, 1000, 2048, 4097, 8192)  # 130: unvectorised rows in registers; 4097: odd, streaming
TOKENS = (1, 7, 64)


@pytest.fixture(scope="module", params=sorted(BUILDS))
def lib(request, tmp_path_factory):
    preset, emulate, std = BUILDS[request.param]
    root = tmp_path_factory.mktemp(request.param)
    presets.write_ops(preset, root, emulate)
    major, minor = torch.cuda.get_device_capability()
    so = llm.build(root, arch=f"sm_{major}{minor}", std=std)
    loaded = llm.load(so)
    assert loaded.warp == (emulate or 32)
    return request.param


def close(out, ref, dtype, what):
    rtol, atol = TOL[dtype]
    o = out.double()
    assert torch.isfinite(o).all(), f"{what}: unwritten or non-finite outputs"
    err = (o - ref).abs() - (atol + rtol * ref.abs())
    assert err.max().item() <= 0, (
        f"{what}: max excess {err.max().item():.3g}, max |diff| {(o - ref).abs().max().item():.3g}"
    )


def rms_ref(x, w, eps, dtype):
    x64 = x.double()
    inv = torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)
    return (x64 * inv).to(dtype).double() * w.double()


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", HIDDEN)
@pytest.mark.parametrize("tokens", TOKENS)
def test_rms_norm(lib, dtype, hidden, tokens):
    dt = DTYPES[dtype]
    x = torch.randn(tokens, hidden, device="cuda", dtype=dt) * 3
    w = torch.rand(hidden, device="cuda", dtype=dt) + 0.5
    out = torch.full_like(x, float("nan"))
    llm.rms_norm(out, x, w, 1e-6)
    close(out, rms_ref(x, w, 1e-6, dt), dt, f"rms_norm {tokens}x{hidden} {dtype}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", HIDDEN)
@pytest.mark.parametrize("tokens", TOKENS)
def test_fused_add_rms_norm(lib, dtype, hidden, tokens):
    dt = DTYPES[dtype]
    x = torch.randn(tokens, hidden, device="cuda", dtype=dt)
    r = torch.randn(tokens, hidden, device="cuda", dtype=dt)
    w = torch.rand(hidden, device="cuda", dtype=dt) + 0.5
    z = (x.double() + r.double()).to(dt)  # vLLM: residual = T(x + residual)
    ref_x = rms_ref(z, w, 1e-5, dt)
    xi, ri = x.clone(), r.clone()
    llm.fused_add_rms_norm(xi, ri, w, 1e-5)
    close(ri, z.double(), dt, f"fused_add_rms_norm residual {tokens}x{hidden} {dtype}")
    close(xi, ref_x, dt, f"fused_add_rms_norm x {tokens}x{hidden} {dtype}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("d", HIDDEN)
@pytest.mark.parametrize("tokens", TOKENS)
def test_silu_and_mul(lib, dtype, d, tokens):
    dt = DTYPES[dtype]
    x = torch.randn(tokens, 2 * d, device="cuda", dtype=dt) * 4
    out = torch.full((tokens, d), float("nan"), device="cuda", dtype=dt)
    llm.silu_and_mul(out, x)
    a, b = x[:, :d].double(), x[:, d:].double()
    ref = (a / (1 + torch.exp(-a))).to(dt).double() * b  # vLLM: T(silu(x)) * y
    close(out, ref, dt, f"silu_and_mul {tokens}x{d} {dtype}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("cols", HIDDEN + (32000,))
@pytest.mark.parametrize("tokens", (1, 33))
def test_softmax(lib, dtype, cols, tokens):
    dt = DTYPES[dtype]
    x = (torch.randn(tokens, cols, device="cuda", dtype=torch.float32) * 5).to(dt)
    out = torch.full_like(x, float("nan"))
    llm.softmax(out, x)
    ref = torch.softmax(x.double(), -1)
    close(out, ref, dt, f"softmax {tokens}x{cols} {dtype}")


def check_topk(g, w, ids, k, renormalize=False):
    """ids pick the k largest probabilities, in descending order, ties to the lower expert; weights match."""
    p = torch.softmax(g.double(), -1)
    ref_w, _ = torch.topk(p, k, dim=-1)
    got = p.gather(1, ids.long())
    assert torch.equal(got, ref_w), "ids do not select the k largest probabilities"
    a, b = got[:, :-1], got[:, 1:]
    ia, ib = ids[:, :-1], ids[:, 1:]
    assert bool(((a > b) | ((a == b) & (ia < ib))).all()), "not descending with ties to the lower expert"
    want = ref_w / ref_w.sum(-1, keepdim=True) if renormalize else ref_w
    close(w, want, torch.float32, "topk_softmax weights")


@pytest.mark.parametrize("gating_dtype", sorted(DTYPES))
@pytest.mark.parametrize("experts,k", [(256, 8), (64, 8), (60, 6), (128, 1), (512, 8)])
@pytest.mark.parametrize("tokens", (1, 33, 1000))
def test_topk_softmax_vllm_signature(lib, gating_dtype, experts, k, tokens):
    g = torch.randn(tokens, experts, device="cuda", dtype=torch.float32).to(DTYPES[gating_dtype])
    w = torch.full((tokens, k), float("nan"), device="cuda", dtype=torch.float32)
    ids = torch.full((tokens, k), -7, device="cuda", dtype=torch.int32)
    src = torch.full((tokens, k), -7, device="cuda", dtype=torch.int32)
    llm.topk_softmax(w, ids, src, g)
    check_topk(g, w, ids, k)
    want_src = torch.arange(k, device="cuda")[None, :] * tokens + torch.arange(tokens, device="cuda")[:, None]
    assert torch.equal(src.long(), want_src)


def test_topk_softmax_ties_go_to_the_lower_expert(lib):
    g = torch.randint(-3, 3, (50, 256), device="cuda").to(torch.float16)  # many equal logits per row
    w, ids = llm.moe_topk_softmax(g, 8)
    check_topk(g, w, ids, 8)


@pytest.mark.parametrize("experts,k", [(256, 8), (64, 8)])
def test_moe_topk_softmax_renormalises(lib, experts, k):
    g = torch.randn(77, experts, device="cuda", dtype=torch.bfloat16)
    w, ids = llm.moe_topk_softmax(g, k, renormalize=True)
    check_topk(g, w, ids, k, renormalize=True)


def test_strided_rows_and_zero_tokens(lib):
    base = torch.randn(9, 3000, device="cuda", dtype=torch.float16)
    x = base[:, 100:2148]  # rows of 2048 contiguous elements, row stride 3000 (not 16-byte aligned)
    w = torch.rand(2048, device="cuda", dtype=torch.float16) + 0.5
    out = torch.full((9, 2048), float("nan"), device="cuda", dtype=torch.float16)
    llm.rms_norm(out, x, w, 1e-6)
    close(out, rms_ref(x, w, 1e-6, torch.float16), torch.float16, "strided rms_norm")
    empty = torch.empty(0, 2048, device="cuda", dtype=torch.float16)
    llm.rms_norm(empty, empty, w, 1e-6)  # no launch, no error


def test_too_many_experts_is_a_clear_error(lib):
    g = torch.randn(2, 64 * 1024, device="cuda")
    w = torch.empty(2, 8, device="cuda")
    ids = torch.empty(2, 8, device="cuda", dtype=torch.int32)
    with pytest.raises(llm.MuhRuntimeError, match="experts exceed"):
        llm.topk_softmax(w, ids, ids.clone(), g)


def test_wrong_dtype_is_refused_before_any_launch(lib):
    x = torch.randn(2, 128, device="cuda", dtype=torch.float64)
    with pytest.raises(TypeError, match="float64"):
        llm.rms_norm(x.clone(), x, x[0], 1e-6)


@pytest.mark.skipif(os.environ.get("MUH_OPS_SKIP_SIGNATURE") == "1", reason="asked to skip")
def test_signatures_are_vllms():
    import inspect

    for name, (params, _) in llm.VLLM_SIGNATURES.items():
        assert tuple(inspect.signature(getattr(llm, name)).parameters) == params
