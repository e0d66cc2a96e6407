"""muh's ``GemmaRMSNorm.forward_cuda`` adapter on a GPU, rebound by the plugin generated for the
EngineX baseline on the real class (tests/fixtures/enginex/gemma_tree.py), against the same class's
stock ``forward_native``: Qwen3.6's shapes (hidden 2048; the q/k norm as a strided
``[tokens, heads, 256]`` view of the fused qkv projection), with and without a residual, float32 /
float16 / bfloat16, 0, 1 and 7 tokens. The residual (the sum, in the input's dtype) must be equal;
the normalised output within about two units in the last place (tests/gpu/test_torch_ops_gpu.py's
tolerances). No call may fall back to vLLM's method.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():  # pragma: no cover - depends on the machine
    pytest.skip("no CUDA device: the adapter's GPU test needs one", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "enginex"))
import gemma_tree  # noqa: E402

pytestmark = pytest.mark.gpu

SCRIPT = r"""
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s", stream=sys.stderr)
import torch
from vllm.model_executor.layers.layernorm import GemmaRMSNorm
import muh_vllm_plugin
applied = muh_vllm_plugin.register()
assert getattr(GemmaRMSNorm.forward_cuda, "__muh_rebind__", None) == "gemma_rms_norm", applied
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}
bad = []
torch.manual_seed(0)
for dtype in TOL:
    for tokens in (0, 1, 7):
        for what in ("hidden", "qk"):
            width = 2048 if what == "hidden" else 256
            norm = GemmaRMSNorm(width, eps=1e-6).to(device="cuda", dtype=dtype)
            norm.weight.data.normal_(0, 0.3)
            if what == "qk":  # q of a fused qkv projection: 4 heads of 256, then k and v (1 head each)
                qkv = torch.randn(tokens, 6 * 256, device="cuda", dtype=dtype)
                x = qkv[:, :1024].view(tokens, 4, 256)
            else:
                x = torch.randn(tokens, width, device="cuda", dtype=dtype)
            before = x.clone()
            got, want = norm(x), norm.forward_native(before.clone())
            rtol, atol = TOL[dtype]
            label = "%s %s tokens=%d" % (dtype, what, tokens)
            if not torch.equal(x, before):
                bad.append(label + ": the input was written")
            try:
                torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
            except AssertionError as e:
                bad.append(label + ": " + str(e).splitlines()[0])
            if what == "hidden":
                r = torch.randn_like(x)
                want_x, want_r = norm.forward_native(x.clone(), r.clone())
                got_x, got_r = norm(x.clone(), r.clone())
                if not torch.equal(got_r, want_r):
                    bad.append(label + " residual: the sum differs")
                try:
                    torch.testing.assert_close(got_x, want_x, rtol=rtol, atol=atol)
                except AssertionError as e:
                    bad.append(label + " residual: " + str(e).splitlines()[0])
print(json.dumps({"applied": sorted(k for k in applied if not k.startswith("_")), "bad": bad}))
"""


def test_the_rebound_forward_cuda_matches_forward_native(tmp_path, vllm_wheel):
    from bench import presets

    site = gemma_tree.build(vllm_wheel, tmp_path / "tree")
    gen = tmp_path / "ops"
    presets.write_ops("h200", gen)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(map(str, (site, gemma_tree.plugin(tmp_path), ROOT, *sys.path))),
        "MUH_KERNELS_DIR": str(gen),
    }
    env.pop("MUH_OPS_LIB", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["applied"] == ["gemma_rms_norm"]
    assert res["bad"] == [], res["bad"]
    assert "falling back to vLLM's op" not in proc.stderr, proc.stderr[-2000:]
