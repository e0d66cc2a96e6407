"""The baseline's plugin and ops package inside the stand-in EngineX fork with real PyTorch (CPU):
no op can take the server down, and none recurses.

The tree: the stand-in fork (tests/fixtures/enginex/standin.py: the fork's ``_custom_ops`` wrappers
over an ``ixformer.functions`` that lacks ``vllm_moe_topk_softmax``, stock 0.6.3's ``layernorm.py``
and ``plugins``), the plugin and ``muh_kernels`` rendered from specs/baseline.muh, and the baseline's
own ``kernels/{common,ops}.cu`` + ``build_info.cu`` built by nvcc into ``muh_kernels/libmuh_ops.so``
(warp 64, C++14: the image's library, for the lowest arch nvcc has; nothing runs on a GPU). vLLM's
own ``load_general_plugins()`` loads the plugin through its entry point; then the ops are called on
CPU tensors, which muh's kernels refuse:

* ``_custom_ops.topk_softmax`` is rebound *and* ``ixformer.functions.vllm_moe_topk_softmax`` is
  provided: muh's refusal falls back to the fork's wrapper, which looks the vendor name up again —
  it must find the vendor library as shipped (the name absent) and run its own path once, not muh;
* a kernel that raises (``silu_and_mul``'s library call replaced by one raising CUDA's error), and
  ``GemmaRMSNorm`` past its input checks into the real ``torch.ops.muh.gemma_rms_norm`` (no CPU
  kernel: the dispatcher raises): the engine's own op serves the call;
* older torch API surfaces, simulated by hiding ``torch.library`` attributes after the fork's
  ``_custom_ops`` is imported (stock 0.6.3 itself needs ``register_fake`` or ``impl_abstract``):
  2.2/2.3 (no ``register_fake``, no ``custom_op``), 2.1 (no ``impl_abstract`` either): muh's torch
  operators still register, with the fake API the torch has;
* a library that is missing: the plugin keeps every engine op and the calls run the engine's path.

Each fallback is said once per op; the fork's own "no vllm_moe_topk_softmax" line appears once per
call that reached its wrapper (never more: no recursion).
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

from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "enginex"))
import gemma_tree  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.nvcc, pytest.mark.vllm]

SCRIPT = r"""
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s|%(levelname)s|%(message)s", stream=sys.stderr)
scenario = sys.argv[1]
import torch
import vllm._custom_ops as ops
HIDE = {"torch-2.3": ("register_fake", "custom_op"), "torch-2.1": ("register_fake", "impl_abstract", "custom_op")}
register_fake = torch.library.register_fake
for name in HIDE.get(scenario, ()):
    if hasattr(torch.library, name):
        delattr(torch.library, name)
if scenario == "torch-2.3":  # this torch's impl_abstract calls the module's register_fake, hidden now
    def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
        return register_fake(qualname, func, lib=lib)
    torch.library.impl_abstract = impl_abstract
from vllm.plugins import load_general_plugins
load_general_plugins()  # vLLM's own loader: the entry point muh = muh_vllm_plugin:register
import muh_vllm_plugin
applied = muh_vllm_plugin.register()  # idempotent: reports what the entry point did
import ixformer.functions as ixf
from vllm.model_executor.layers.layernorm import GemmaRMSNorm

out = {"applied": sorted(k for k in applied if not k.startswith("_")), "stock": applied.get("_stock", ""),
       "muh": sorted(m for m in sys.modules if m == "muh" or m.startswith("muh.")), "calls": {}}


def call(label, fn, *args):
    try:
        res = fn(*args)
        out["calls"][label] = "ok"
        return res
    except BaseException as e:  # RecursionError included
        out["calls"][label] = "%s: %s" % (type(e).__name__, str(e)[:200])


def route():
    gating = torch.randn(3, 8)
    return (torch.empty(3, 2), torch.empty(3, 2, dtype=torch.int32), torch.empty(3, 2, dtype=torch.int32), gating)


call("topk_softmax", ops.topk_softmax, *route())
call("topk_softmax again", ops.topk_softmax, *route())
out["provided"] = getattr(getattr(ixf, "vllm_moe_topk_softmax", None), "__muh_rebind__", None)
if out["provided"]:
    call("vllm_moe_topk_softmax", ixf.vllm_moe_topk_softmax, *route())
    call("vllm_moe_topk_softmax, 5 arguments", ixf.vllm_moe_topk_softmax, *route(), True)

if "muh_kernels.llm" in sys.modules:  # a kernel that raises CUDA's error
    def raising(*args, **kwargs):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    sys.modules["muh_kernels.llm"].silu_and_mul = raising
x = torch.randn(4, 32)
call("silu_and_mul", ops.silu_and_mul, torch.empty(4, 16), x)

norm = GemmaRMSNorm(16, eps=1e-6)
norm.weight.data.normal_(0, 0.3)
norm._is_compiled = True  # the stock method's torch.compile (inductor on CPU) is not what is tested
x, r = torch.randn(2, 16), torch.randn(2, 16)
want, (want_x, want_r) = norm.forward_native(x.clone()), norm.forward_native(x.clone(), r.clone())
provider = sys.modules.get("muh_kernels._provider")
if provider is not None:  # past the input checks: the real torch.ops.muh op, which has no CPU kernel
    checks = provider._gemma_problem
    provider._gemma_problem = lambda *args: None
    got = call("gemma op", norm, x.clone())
    out["gemma op equal"] = got is not None and torch.equal(got, want)
    got = call("gemma op residual", norm, x.clone(), r.clone())
    out["gemma op residual equal"] = got is not None and torch.equal(got[0], want_x) and torch.equal(got[1], want_r)
    provider._gemma_problem = checks
    from muh_kernels import operators as torch_ops
    out["fake_api"] = getattr(torch_ops, "fake_api", lambda torch: None)(torch)  # (absent before it existed)
    if torch_ops.loaded() is not None:
        meta = torch.ops.muh.gemma_rms_norm(torch.empty(2, 16, device="meta"), torch.empty(16, device="meta"), 1e-6)
        out["meta shape"] = list(meta.shape)
got = call("gemma cpu", norm, x.clone())  # refused by the input checks (CPU tensors)
out["gemma cpu equal"] = got is not None and torch.equal(got, want)
print(json.dumps(out))
"""


def lowest_arch(nvcc: str) -> str:
    text = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    archs = [int(m) for m in re.findall(r"compute_(\d+)", text)]
    return f"sm_{min(archs)}"


@pytest.fixture(scope="module")
def tree(nvcc, vllm_wheel, tmp_path_factory):
    """(site-packages of the stand-in fork, the baseline's generated folder with its library built)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed (CPU is enough; .ci/run installs it; on CI this is a failure)")
    tmp = tmp_path_factory.mktemp("fallbacks")
    site = gemma_tree.fork_site(vllm_wheel, tmp / "fork")
    gen = tmp / "gen"
    for f in render(load_file(ROOT / "specs" / "baseline.muh")):
        p = gen / f.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f.content, encoding="utf-8")
    cmd = [
        nvcc,
        "-O3",
        "-std=c++14",
        f"-arch={lowest_arch(nvcc)}",
        "-Xcompiler",
        "-fPIC",
        "-shared",
        "-DMUH_WARP_SIZE=64",
        "-I",
        str(gen / "include"),
        "-o",
        str(gen / "muh_kernels" / "libmuh_ops.so"),
        *(str(gen / s) for s in ("kernels/common.cu", "kernels/ops.cu", "muh_kernels/build_info.cu")),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return site, gen


SELECT_ALL = {"selected": ["gemma_rms_norm", "rms_norm", "fused_add_rms_norm", "silu_and_mul", "topk_softmax"]}


def _path(tree) -> list[str]:
    site, gen = tree
    torch_dir = Path(importlib.util.find_spec("torch").origin).parents[1]
    return [str(site), str(gen / "vllm" / "plugin"), str(gen), str(torch_dir)]


def run(tree, scenario: str, **env) -> tuple[dict, str]:
    """The script in the stand-in fork; the self-test result selects every op unless ``env`` names one."""
    site, gen = tree
    if "MUH_SELFTEST_RESULT" not in env:
        (gen / "selftest-all.json").write_text(json.dumps(SELECT_ALL))
        env["MUH_SELFTEST_RESULT"] = str(gen / "selftest-all.json")
    full = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(_path(tree)), **env}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, scenario],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=full,
        timeout=300,
        cwd=site,
    )  # vLLM's loggers write to stdout
    assert proc.returncode == 0, proc.stdout[-4000:]
    *log, result = proc.stdout.strip().splitlines()
    return json.loads(result), "\n".join(log)


def lines(log: str, text: str) -> int:
    return sum(text in line for line in log.splitlines())


SERVED = ["gemma_rms_norm", "moe_topk_softmax", "silu_and_mul", "topk_softmax"]
CALLS = [
    "gemma cpu",
    "gemma op",
    "gemma op residual",
    "silu_and_mul",
    "topk_softmax",
    "topk_softmax again",
    "vllm_moe_topk_softmax",
]
ARITY = "vllm_moe_topk_softmax, 5 arguments"


@pytest.mark.parametrize(
    "scenario,fake_api", [("torch", "register_fake"), ("torch-2.3", "impl_abstract"), ("torch-2.1", "Meta")]
)
def test_every_op_falls_back_to_the_engine_once_and_never_recurses(tree, scenario, fake_api):
    out, log = run(tree, scenario)
    assert out["applied"] == SERVED, (out, log[-3000:])
    assert out["muh"] == [], "the image has no muh: the package must not import it"
    assert out["provided"] == "moe_topk_softmax"
    arity = out["calls"].pop(ARITY)
    assert out["calls"] == {c: "ok" for c in CALLS}, log[-3000:]
    # a call the fork never makes gets the fork's own error for the absent name (issue 37.3)
    assert arity.startswith("AttributeError: module 'ixformer.functions' has no attribute 'vllm_moe_topk_softmax'"), (
        arity
    )
    assert out["gemma cpu equal"] and out["gemma op equal"] and out["gemma op residual equal"]
    assert out["fake_api"] == fake_api and out["meta shape"] == [2, 16]
    # each engine path ran once per call: the fork's wrapper said its line 3 times, never more
    assert lines(log, "ixformer.functions has no vllm_moe_topk_softmax") == 3, log[-3000:]
    for op in ("topk_softmax", "silu_and_mul", "gemma_rms_norm"):  # muh said why once per op
        assert lines(log, f"muh-ops: {op}: falling back to vLLM's op") == 1, (op, log[-3000:])
    # the reasons said: the kernel's error, the dispatcher's (no CPU kernel), the refused CPU tensors
    assert "silu_and_mul: falling back to vLLM's op for this input: CUDA error: an illegal memory access" in log
    assert re.search(r"gemma_rms_norm: falling back to vLLM's op for this input: NotImplementedError: .*CPU", log)
    assert "topk_softmax: falling back to vLLM's op for this input: muh ops: topk_softmax: expected CUDA" in log
    assert "RecursionError" not in log and "Traceback" not in log


def test_a_missing_library_keeps_every_engine_op(tree):
    out, log = run(tree, "torch", MUH_OPS_LIB=str(tree[1] / "missing" / "libmuh_ops.so"))
    assert out["applied"] == [] and out["provided"] is None
    for op in ("gemma_rms_norm", "silu_and_mul", "topk_softmax", "moe_topk_softmax"):
        assert f"{op} (provider muh_kernels.vllm_ops:" in out["stock"], out["stock"]
    assert "muh ops: cannot load" in out["stock"]
    assert out["calls"] == {"topk_softmax": "ok", "topk_softmax again": "ok", "silu_and_mul": "ok", "gemma cpu": "ok"}
    assert out["gemma cpu equal"]
    assert lines(log, "ixformer.functions has no vllm_moe_topk_softmax") == 2
    assert "falling back" not in log and "Traceback" not in log


# ---- the start self-test decides (issue 37.3) ---------------------------------------------------------------

CASES = {
    "budget_s": 30,
    "cases": [
        {"op": "topk_softmax", "shape": [2, 16, 4], "dtype": "float32", "engine": "torch"},
        {"op": "silu_and_mul", "shape": [2, 32], "dtype": "float32", "engine": "torch"},
        {"op": "gemma_rms_norm", "shape": [2, 64], "dtype": "float32", "engine": "selftest_impls:slow_gemma"},
        {"op": "gemma_rms_norm", "shape": [2, 4, 32], "dtype": "float32", "engine": "selftest_impls:slow_gemma"},
        {
            "op": "fused_add_rms_norm",
            "shape": [2, 64],
            "dtype": "float32",
            "engine": "selftest_impls:engine_fused_add_rms_norm",
        },
    ],
}


def selftest(tree, tmp_path):
    """``python3 -m muh_kernels.selftest`` (the generated package's copy) on the CPU, with kernels that abort
    (topk_softmax), return wrong numbers (silu_and_mul), are correct and faster (gemma_rms_norm) or slower
    (fused_add_rms_norm) than the engine: (the result file, the log)."""
    cases, out = tmp_path / "cases.json", tmp_path / "run" / "selftest.json"
    cases.write_text(json.dumps(CASES))
    path = [str(ROOT / "tests" / "fixtures" / "enginex"), *_path(tree)]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "muh_kernels.selftest",
            "--cases",
            str(cases),
            "--out",
            str(out),
            "--device",
            "cpu",
            "--impl",
            "selftest_impls",
            "--calls",
            "30",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(path)},
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
    return out, proc.stdout


def test_the_self_test_selects_only_correct_and_faster_ops_and_survives_a_fault(tree, tmp_path):
    out, log = selftest(tree, tmp_path)
    result = json.loads(out.read_text())
    assert result["selected"] == ["gemma_rms_norm"], log
    verdicts = [(r["op"], r["verdict"]) for r in result["rows"]]
    assert verdicts == [
        ("topk_softmax", "fault"),
        ("silu_and_mul", "wrong"),
        ("gemma_rms_norm", "faster"),
        ("gemma_rms_norm", "faster"),
        ("fused_add_rms_norm", "slower"),
    ], log
    assert "exit -6" in result["rows"][0]["detail"]  # abort(): the child died, the parent went on
    assert result["rows"][1]["max_error"] > result["rows"][1]["tolerance"]
    assert "[muh] op | shape | dtype | max error | muh us | engine us | verdict" in log
    assert re.search(
        r"\[muh\] gemma_rms_norm \| 2x4x32 \| float32 \| [0-9.e+-]+ \| [0-9.]+ \| [0-9.]+ \| faster", log
    ), log


def test_the_plugin_rebinds_only_what_the_self_test_selected(tree, tmp_path):
    out, _ = selftest(tree, tmp_path)
    got, log = run(tree, "torch", MUH_SELFTEST_RESULT=str(out))
    assert got["applied"] == ["gemma_rms_norm"], (got, log[-3000:])
    assert got["provided"] is None  # topk_softmax faulted: the vendor name stays absent
    assert "silu_and_mul (self-test did not select silu_and_mul)" in got["stock"]
    assert "topk_softmax (self-test did not select topk_softmax)" in got["stock"]
    assert "moe_topk_softmax (self-test did not select topk_softmax)" in got["stock"]
    assert got["calls"]["silu_and_mul"] == "ok"  # the engine's own op, never muh's
    assert lines(log, "silu_and_mul: falling back") == 0 and lines(log, "topk_softmax: falling back") == 0


@pytest.mark.parametrize("content", [None, "{not json", '{"selected": "gemma_rms_norm"}'])
def test_a_missing_or_corrupt_self_test_result_rebinds_no_muh_op(tree, tmp_path, content):
    path = tmp_path / "selftest.json"
    if content is not None:
        path.write_text(content)
    got, log = run(tree, "torch", MUH_SELFTEST_RESULT=str(path))
    assert got["applied"] == [] and got["provided"] is None, got
    assert lines(log, "self-test result %s unreadable" % path) == 1, log[-3000:]
    assert "Traceback" not in log
