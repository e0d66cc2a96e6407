"""torch.ops.muh.* on a GPU: opcheck per operator, torch.compile(fullgraph=True), CUDA-graph capture and
replay with new inputs, and the served model's ops (GemmaRMSNorm, head-wise, gated, fused with
residual_alpha, silu_and_mul at shard widths, the shared-expert gate, MoE routing with int32/int64
ids) against float64 references, in float32/float16/bfloat16, odd sizes, strided and misaligned
views, 0 and 1 tokens. Tolerances: test_ops_gpu.py's (about two units in the last place).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("no CUDA device: the operators' GPU tests need one", allow_module_level=True)

from bench import presets  # noqa: E402
from muh.runtime import operators  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}
M = None  # torch.ops.muh, once loaded


@pytest.fixture(scope="module")
def muh(tmp_path_factory):
    global M
    root = tmp_path_factory.mktemp("ops-h200")
    presets.write_ops("h200", root)
    loaded = operators.load(root)
    assert loaded.backend == "extension", f"the extension did not build: {loaded.reason}"
    M = torch.ops.muh
    return M


def close(out, ref, dtype, what):
    rtol, atol = TOL[dtype]
    o = out.double()
    assert torch.isfinite(o).all(), f"{what}: unwritten or non-finite outputs"
    err = (o - ref).abs() - (atol + rtol * ref.abs())
    assert err.max().item() <= 0 if err.numel() else True, (
        f"{what}: max excess {err.max().item():.3g}, max |diff| {(o - ref).abs().max().item():.3g}"
    )


def inv_rms(x64, eps):
    return torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + eps)


def gemma_ref(x, w, eps):  # HF Qwen3NextRMSNorm: float all through, (1 + w), one rounding
    x64 = x.double()
    return x64 * inv_rms(x64, eps) * (1.0 + w.double())


def rms_ref(x, w, eps, dt):  # vLLM: T(x * inv) * w
    x64 = x.double()
    return (x64 * inv_rms(x64, eps)).to(dt).double() * w.double()


def gated_ref(x, z, w, eps, dt):  # HF Qwen3NextRMSNormGated: T(T(w * T(x * inv)) * silu(z))
    y = rms_ref(x, w, eps, dt).to(dt).double()
    z64 = z.double()
    return y * (z64 / (1 + torch.exp(-z64)))


def view_of(shape, dt, how):
    """A tensor of `shape`: contiguous, with a row stride (strided), or starting 2 elements into its
    buffer (misaligned: no 16-byte vectors)."""
    *lead, n = shape
    rows = 1
    for s in lead:
        rows *= s
    if how == "contiguous":
        return torch.randn(*shape, device="cuda", dtype=dt) * 2
    if how == "strided":
        return (
            (torch.randn(rows, n + 24, device="cuda", dtype=dt) * 2)[:, 8 : 8 + n].reshape(*lead, n)
            if rows
            else torch.randn(*shape, device="cuda", dtype=dt)
        )
    buf = torch.randn(rows * n + 2, device="cuda", dtype=dt) * 2
    return buf[2:].view(*shape)


VIEWS = ("contiguous", "strided", "misaligned")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", (128, 130, 2048, 4097))
@pytest.mark.parametrize("tokens", (0, 1, 7))
@pytest.mark.parametrize("how", VIEWS)
def test_gemma_rms_norm(muh, dtype, hidden, tokens, how):
    dt = DTYPES[dtype]
    x = view_of((tokens, hidden), dt, how)
    w = torch.randn(hidden, device="cuda", dtype=dt) * 0.2
    out = muh.gemma_rms_norm(x, w, 1e-6)
    assert out.shape == x.shape and out.dtype == dt and out.is_contiguous()
    close(out, gemma_ref(x, w, 1e-6), dt, f"gemma_rms_norm {tokens}x{hidden} {dtype} {how}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("head_dim", (128, 256))
@pytest.mark.parametrize("heads", (1, 3, 16))
@pytest.mark.parametrize("tokens", (1, 5))
def test_head_wise_norms_on_a_projection_view(muh, dtype, head_dim, heads, tokens):
    """q of Qwen3-Next: [tokens, heads, 2 * head_dim] chunked into (q, gate): heads with their own stride."""
    dt = DTYPES[dtype]
    proj = torch.randn(tokens, heads, 2 * head_dim, device="cuda", dtype=dt) * 2
    q = proj[..., :head_dim]
    w = torch.randn(head_dim, device="cuda", dtype=dt) * 0.2
    close(muh.gemma_rms_norm(q, w, 1e-6), gemma_ref(q, w, 1e-6), dt, "head-wise gemma")
    out = torch.full(q.shape, float("nan"), device="cuda", dtype=dt)
    muh.rms_norm(out, q, w + 1, 1e-6)
    close(out, rms_ref(q, w + 1, 1e-6, dt), dt, "head-wise rms_norm")
    # a 4-D [batch, seq, heads, head_dim] view with three strided levels: the operator copies and still agrees
    q4 = torch.randn(2, tokens, heads, 3 * head_dim, device="cuda", dtype=dt)[:, :, :, head_dim : 2 * head_dim]
    close(muh.gemma_rms_norm(q4, w, 1e-6), gemma_ref(q4, w, 1e-6), dt, "4-D head-wise gemma")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", (128, 130, 256))
@pytest.mark.parametrize("rows", (0, 1, 37))
def test_gated_rms_norm(muh, dtype, hidden, rows):
    dt = DTYPES[dtype]
    x = torch.randn(rows, hidden, device="cuda", dtype=dt) * 2
    z = view_of((rows, hidden), dt, "strided")
    w = torch.rand(hidden, device="cuda", dtype=dt) + 0.5
    close(muh.gated_rms_norm(x, z, w, 1e-6), gated_ref(x, z, w, 1e-6, dt), dt, f"gated {rows}x{hidden} {dtype}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", (128, 2048, 4097))
@pytest.mark.parametrize("tokens", (0, 1, 9))
@pytest.mark.parametrize("alpha", (1.0, 0.5))
@pytest.mark.parametrize("gemma", (False, True))
def test_fused_add_forms(muh, dtype, hidden, tokens, alpha, gemma):
    dt = DTYPES[dtype]
    x = view_of((tokens, hidden), dt, "strided")
    r = torch.randn(tokens, hidden, device="cuda", dtype=dt)
    w = torch.randn(hidden, device="cuda", dtype=dt) * 0.2 + (0 if gemma else 1)
    ra = r if alpha == 1.0 else (r.double() * alpha).to(dt)  # the residual pre-multiplied, rounded
    z = (x.double() + ra.double()).to(dt)
    ref = gemma_ref(z, w, 1e-6) if gemma else rms_ref(z, w, 1e-6, dt)
    xi, ri = x.clone(), r.clone()
    (muh.gemma_fused_add_rms_norm if gemma else muh.fused_add_rms_norm)(xi, ri, w, 1e-6, alpha)
    close(ri, z.double(), dt, "fused residual")
    close(xi, ref, dt, f"fused {'gemma' if gemma else 'vllm'} {tokens}x{hidden} {dtype} alpha {alpha}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("d", (128, 512, 1024, 1000, 37))
@pytest.mark.parametrize("tokens", (0, 1, 19))
@pytest.mark.parametrize("how", VIEWS)
def test_silu_and_mul_shard_widths(muh, dtype, d, tokens, how):
    dt = DTYPES[dtype]
    x = view_of((tokens, 2 * d), dt, how)
    out = torch.full((tokens, d), float("nan"), device="cuda", dtype=dt)
    muh.silu_and_mul(out, x)
    a, b = x[:, :d].double(), x[:, d:].double()
    close(out, (a / (1 + torch.exp(-a))).to(dt).double() * b, dt, f"silu_and_mul {tokens}x{d} {dtype} {how}")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("hidden", (2048, 130))
@pytest.mark.parametrize("tokens", (0, 1, 33))
def test_shared_expert_combine(muh, dtype, hidden, tokens):
    dt = DTYPES[dtype]
    routed = view_of((tokens, hidden), dt, "misaligned")
    shared = torch.randn(tokens, hidden, device="cuda", dtype=dt)
    gate = torch.randn(tokens, 1, device="cuda", dtype=dt) * 3
    sig = torch.sigmoid(gate.double()).to(dt).double()
    ref = routed.double() + (sig * shared.double()).to(dt).double()
    close(muh.shared_expert_combine(routed, shared, gate), ref, dt, f"shared_expert_combine {tokens}x{hidden}")


@pytest.mark.parametrize("gating_dtype", sorted(DTYPES))
@pytest.mark.parametrize("id_dtype", (torch.int32, torch.int64))
@pytest.mark.parametrize("renormalize", (False, True))
@pytest.mark.parametrize("tokens", (0, 1, 257))
def test_moe_routing(muh, gating_dtype, id_dtype, renormalize, tokens):
    g = torch.randn(tokens, 256, device="cuda", dtype=torch.float32).to(DTYPES[gating_dtype])
    w, ids = muh.moe_topk_softmax(g, 8, renormalize, id_dtype)
    assert ids.dtype == id_dtype and w.dtype == torch.float32 and w.shape == (tokens, 8)
    p = torch.softmax(g.double(), -1)
    order = torch.sort(-p, dim=-1, stable=True).indices[:, :8]  # descending, ties to the lower expert
    assert torch.equal(ids.long(), order)
    ref = p.gather(1, order)
    close(w, ref / ref.sum(-1, keepdim=True) if renormalize else ref, torch.float32, "routing weights")


def test_bad_inputs_are_clear_errors(muh):
    x = torch.randn(2, 128, device="cuda", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="float64|Double"):
        muh.gemma_rms_norm(x, x[0], 1e-6)
    h = torch.randn(2, 128, device="cuda", dtype=torch.float16)
    with pytest.raises(RuntimeError, match="weight has 64 elements"):
        muh.gemma_rms_norm(h, h[0, :64], 1e-6)


# ---- opcheck, torch.compile, CUDA graphs ---------------------------------------------------------


def _samples(dt):
    x = torch.randn(5, 256, device="cuda", dtype=dt)
    w = torch.randn(256, device="cuda", dtype=dt)
    g = torch.randn(5, 64, device="cuda", dtype=dt)
    return {
        "rms_norm": (torch.empty_like(x), x, w, 1e-6),
        "fused_add_rms_norm": (x.clone(), torch.randn_like(x), w, 1e-6, 0.5),
        "gemma_rms_norm": (x.view(5, 2, 128), w[:128], 1e-6),
        "gemma_fused_add_rms_norm": (x.clone(), torch.randn_like(x), w, 1e-6, 1.0),
        "gated_rms_norm": (x, torch.randn_like(x), w, 1e-6),
        "silu_and_mul": (torch.empty(5, 128, device="cuda", dtype=dt), x),
        "shared_expert_combine": (x, torch.randn_like(x), torch.randn(5, 1, device="cuda", dtype=dt)),
        "topk_softmax": (
            torch.empty(5, 4, device="cuda"),
            torch.empty(5, 4, device="cuda", dtype=torch.int32),
            torch.empty(5, 4, device="cuda", dtype=torch.int32),
            g,
        ),
        "moe_topk_softmax": (g, 4, True, torch.int64),
        "softmax": (torch.empty_like(g), g),
    }


@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("op", sorted(operators.SCHEMAS))
def test_opcheck(muh, op, dtype):
    args = _samples(DTYPES[dtype])[op]
    torch.library.opcheck(getattr(muh, op).default, args)


class _Block(torch.nn.Module):
    """A Qwen3-Next-shaped block made of muh operators only."""

    def __init__(self, hidden=256, inter=128, experts=64):
        super().__init__()
        self.w_norm = torch.nn.Parameter(torch.randn(hidden) * 0.1)
        self.w_q = torch.nn.Parameter(torch.randn(128) * 0.1)
        self.up = torch.nn.Linear(hidden, 2 * inter, bias=False)
        self.down = torch.nn.Linear(inter, hidden, bias=False)
        self.router = torch.nn.Linear(hidden, experts, bias=False)
        self.experts = torch.nn.Linear(inter, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, 1, bias=False)
        self.w_gated = torch.nn.Parameter(torch.rand(hidden) + 0.5)

    def forward(self, x, residual):
        ops = torch.ops.muh
        x, residual = x.clone(), residual.clone()
        ops.gemma_fused_add_rms_norm(x, residual, self.w_norm, 1e-6, 1.0)
        q = ops.gemma_rms_norm(x.view(x.shape[0], 2, 128), self.w_q, 1e-6).view(x.shape)
        h = self.up(q)
        act = torch.empty(h.shape[0], h.shape[1] // 2, device=h.device, dtype=h.dtype)
        ops.silu_and_mul(act, h)
        shared = self.down(act)
        w, ids = ops.moe_topk_softmax(self.router(x), 4, True, torch.int64)
        routed = self.experts(act)  # stands in for the routed experts (only muh ops and matmuls: exact under inductor)
        y = ops.shared_expert_combine(routed, shared, self.gate(x))
        return ops.gated_rms_norm(y, x, self.w_gated, 1e-6), residual, w, ids


def test_compile_fullgraph_matches_eager(muh):
    m = _Block().cuda().half()
    x = torch.randn(7, 256, device="cuda", dtype=torch.float16)
    r = torch.randn_like(x)
    want = m(x, r)
    torch._dynamo.reset()
    got = torch.compile(m, fullgraph=True)(x, r)
    for a, b in zip(got, want):
        assert torch.equal(a, b)


def test_cuda_graph_replay_with_new_inputs(muh):
    m = _Block().cuda().half()
    x = torch.randn(3, 256, device="cuda", dtype=torch.float16)
    r = torch.randn_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        m(x, r)  # warm-up outside capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = m(x, r)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        r.copy_(torch.randn_like(r))
        graph.replay()
        want = m(x.clone(), r.clone())
        for a, b in zip(out, want):
            assert torch.equal(a, b)
