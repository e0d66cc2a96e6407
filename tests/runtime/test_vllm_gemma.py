"""muh's ``GemmaRMSNorm.forward_cuda`` adapter (muh/runtime/vllm_provider.py) against the real class of the
pinned wheel (as the stand-in EngineX fork keeps it), with CPU PyTorch: the plugin generated for the
EngineX baseline rebinds it, the signature guard accepts the recorded 0.6.3 parameters and refuses
others with the reason, and every input muh's ops do not take (here: CPU tensors) gets vLLM's own
method, equal to its ``forward_native``, with the reason logged once. The op itself runs in
tests/gpu/test_vllm_gemma_gpu.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "enginex"))
import gemma_tree  # noqa: E402

# not marked `nvcc`/`vllm`: CI has both but no PyTorch, so these skip there with the reason
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="PyTorch is not installed (CI has none): vLLM's GemmaRMSNorm is an nn.Module",
)


@pytest.fixture(scope="module")
def ops_lib(nvcc, tmp_path_factory):
    """libmuh_ops.so (h200 preset, cached by content): the provider loads it at import, no GPU needed."""
    from bench import presets
    from muh.runtime import llm

    root = tmp_path_factory.mktemp("ops")
    presets.write_ops("h200", root)
    return llm.build(root, arch="sm_90")


SCRIPT = r"""
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s", stream=sys.stderr)
import torch
from vllm.model_executor.layers.layernorm import GemmaRMSNorm
stock = GemmaRMSNorm.forward_cuda
import muh_vllm_plugin
applied = muh_vllm_plugin.register()
rebound = getattr(GemmaRMSNorm.forward_cuda, "__muh_rebind__", None) == "gemma_rms_norm"
out = {"applied": sorted(k for k in applied if not k.startswith("_")), "rebound": rebound,
       "stock_kept": GemmaRMSNorm.forward_cuda is stock, "cases": []}
torch.manual_seed(0)
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for shape in ((3, 64), (2, 4, 32)):
        norm = GemmaRMSNorm(shape[-1], eps=1e-6).to(dtype)
        norm.weight.data.normal_(0, 0.3)
        norm._is_compiled = True  # vLLM's stock forward_cuda would torch.compile its forward_static first (CPU: slow)
        x, r = torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype)
        want = norm.forward_native(x.clone())
        got = norm(x.clone())
        want_x, want_r = norm.forward_native(x.clone(), r.clone())
        got_x, got_r = norm(x.clone(), r.clone())
        out["cases"].append([str(dtype), list(shape), torch.equal(got, want), torch.equal(got_x, want_x),
                             torch.equal(got_r, want_r)])
print(json.dumps(out))
"""


def run(site: Path, plugin_dir: Path, lib: str) -> subprocess.CompletedProcess:
    selected = plugin_dir / "selftest.json"  # the card's start self-test selected the op (issue 37.3)
    selected.write_text(json.dumps({"selected": ["gemma_rms_norm"]}))
    env = {
        "PYTHONPATH": os.pathsep.join(map(str, (site, plugin_dir, ROOT, *sys.path))),
        "PATH": os.environ.get("PATH", ""),
        "MUH_OPS_LIB": lib,
        "HOME": os.environ.get("HOME", "/tmp"),
        "MUH_SELFTEST_RESULT": str(selected),
    }
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)


def test_the_adapter_is_rebound_on_the_forks_class_and_falls_back_to_stock(tmp_path, vllm_wheel, ops_lib):
    site = gemma_tree.build(vllm_wheel, tmp_path / "tree")
    proc = run(site, gemma_tree.plugin(tmp_path), ops_lib)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["applied"] == ["gemma_rms_norm"] and res["rebound"], proc.stderr
    assert len(res["cases"]) == 6
    for dtype, shape, plain, x, r in res["cases"]:
        assert plain and x and r, f"{dtype} {shape}: the fallback is not vLLM's own result"
    falls = [line for line in proc.stderr.splitlines() if "gemma_rms_norm: falling back to vLLM's op" in line]
    assert len(falls) == 1 and "expected CUDA tensors, got the input on cpu" in falls[0], proc.stderr


def test_a_fork_that_changed_forward_cuda_keeps_its_own(tmp_path, vllm_wheel, ops_lib):
    site = gemma_tree.build(vllm_wheel, tmp_path / "tree", forward_cuda_params="self, x, residual=None, alpha=1.0")
    assert re.search(
        r"def forward_cuda\(self, x, residual=None, alpha=1.0\)", (site / gemma_tree.LAYERNORM).read_text()
    )
    proc = run(site, gemma_tree.plugin(tmp_path), ops_lib)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["applied"] == [] and res["stock_kept"]
    marker = next(line for line in proc.stderr.splitlines() if "muh-vllm-plugin: vllm" in line)
    assert "gemma_rms_norm (provider muh.runtime.vllm_provider:gemma_rms_norm:" in marker
    assert "is not the recorded 0.6.3 signature (self, x, residual=None)" in marker
    assert all(c[2] and c[3] and c[4] for c in res["cases"])  # the fork's own method still runs
