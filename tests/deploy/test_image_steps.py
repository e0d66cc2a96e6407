"""The image's steps (image/steps.sh) run as a script in a folder tree that mimics the image, against
stock vLLM 0.6.3.post1 and against a stand-in of the EngineX fork built from the same wheel
(tests/fixtures/enginex/standin.py lists its divergences). Both must build: required steps pass,
optional steps that cannot apply log one `[muh] skipped <step>: <why>` line, nothing else stops.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "enginex"))
import standin  # noqa: E402  (the stand-in fork builder)

SPECS = {
    "baseline": ROOT / "specs" / "baseline.muh",
    "stock": ROOT / "tests" / "fixtures" / "deploy" / "competition.muh",
}


def image(tmp: Path, spec: Path, wheel: Path, fork: bool) -> tuple[Path, Path, Path]:
    """(root of the fake image, its site-packages, /opt/muh) with muh's files where the Dockerfile COPYs them."""
    root = tmp / "image"
    site = standin.build(wheel, root, fork)
    opt = root / "opt" / "muh"
    for f in render(load_file(spec)):
        if f.path in ("Dockerfile", "computility-run.yaml"):
            (root / f.path).write_text(f.content)
            continue
        p = opt / f.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f.content)
    bin_ = root / "bin"
    bin_.mkdir()
    shim = bin_ / "python3"  # the image's python3: this interpreter, no site-packages but the image's
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} -S "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return root, site, opt


def run_steps(root: Path, opt: Path) -> subprocess.CompletedProcess:
    env = {"PATH": f"{root / 'bin'}:/usr/bin:/bin", "MUH_ROOT": str(opt), "HOME": str(root)}
    return subprocess.run(
        ["bash", str(opt / "image" / "steps.sh")], capture_output=True, text=True, env=env, timeout=300, cwd=root
    )


@pytest.mark.vllm
@pytest.mark.parametrize("fork", [False, True], ids=["stock-vllm", "enginex-standin"])
@pytest.mark.parametrize("spec", sorted(SPECS))
def test_the_image_steps_succeed_on_stock_and_on_the_fork(tmp_path, vllm_wheel, spec, fork):
    root, site, opt = image(tmp_path, SPECS[spec], vllm_wheel, fork)
    paged = (site / "vllm/attention/ops/paged_attn.py").read_text()
    proc = run_steps(root, opt)
    log = proc.stdout
    assert proc.returncode == 0, log + proc.stderr
    assert f"[muh] engine at {site}" in log and "[muh] ok: install plugin" in log
    assert (site / "muh_vllm_plugin" / "__init__.py").is_file()
    assert "[muh] image steps done" in log
    # every optional step that did not apply says so in one line, with a reason
    for line in log.splitlines():
        if line.startswith("[muh] skipped "):
            assert ": " in line[len("[muh] skipped ") :] and "(exit " in line, line
    # no torch/triton here: the plugin check (imports vLLM) and the Triton probe are skipped, not fatal
    assert "[muh] skipped plugin check:" in log and "[muh] skipped triton importable" in log
    if spec == "stock":  # stock engine: both edits are reached
        if fork:  # the fork rewrote paged_attn.py: that edit is skipped, the file untouched, the other applies
            assert "[muh] skipped edit paged-attn-v1-threshold: muh-anchors: paged-attn-v1-threshold" in log
            assert "anchor found 0 times" in log
            assert (site / "vllm/attention/ops/paged_attn.py").read_text() == paged
        else:
            assert "[muh] ok: edit paged-attn-v1-threshold" in log
            assert "# muh: decode v1/v2 rule tuned for bi100" in (site / "vllm/attention/ops/paged_attn.py").read_text()
        assert "[muh] ok: edit prefix-prefill-tile" in log
        assert "[muh] ok: MoE config E=256,N=128,device_name=Iluvatar_BI-V100.json" in log
    else:  # EngineX baseline: dead points ship nothing; unknown flags are probed, absent in both
        assert "no anchored edits for this spec" in log and "MoE config" not in log
        assert (site / "vllm/attention/ops/paged_attn.py").read_text() == paged
        assert "[muh] skipped flag reasoning_parser: not found in" in log
        # qwen3_coder: not in the engine, but vLLM 0.6.3's --tool-parser-plugin is: muh's provider registers it
        assert "the engine lacks it; muh's provider registers through --tool-parser-plugin" in log
        assert "[muh] ok: flag tool_call_parser_qwen3_coder" in log
        assert (opt / "vllm" / "parsers" / "muh_qwen3_coder.py").is_file()
        assert not (opt / "run" / "accept" / "reasoning_parser").exists()
        assert "[muh] skipped ops build:" in log or "[muh] ok: ops build" in log


@pytest.mark.vllm
def test_a_fork_that_has_the_parser_gets_the_flag(tmp_path, vllm_wheel):
    root, site, opt = image(tmp_path, SPECS["baseline"], vllm_wheel, True)
    cli = site / "vllm/entrypoints/openai/cli_args.py"
    cli.write_text(cli.read_text() + '\n# fork\n_X = ("--reasoning-parser", "qwen3_coder")\n')
    proc = run_steps(root, opt)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "[muh] ok: flag reasoning_parser" in proc.stdout
        and "[muh] ok: flag tool_call_parser_qwen3_coder" in proc.stdout
    )
    assert "the engine has it" in proc.stdout
    assert (opt / "run" / "accept" / "reasoning_parser").exists()


def test_a_failing_required_step_stops_the_build(tmp_path):
    """No engine in the image: locating it is required, so the build stops with a message."""
    root = tmp_path / "image"
    opt = root / "opt" / "muh"
    for f in render(load_file(SPECS["baseline"])):
        if f.path.startswith("image/"):
            (opt / f.path).parent.mkdir(parents=True, exist_ok=True)
            (opt / f.path).write_text(f.content)
    env = {"PATH": "/usr/bin:/bin", "MUH_ROOT": str(opt), "PYTHONNOUSERSITE": "1", "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        ["bash", str(opt / "image" / "steps.sh")], capture_output=True, text=True, env=env, timeout=60
    )
    if proc.returncode == 0:  # this machine's python3 has a vllm on its path
        pytest.skip("python3 here finds a vllm package")
    assert proc.returncode == 1 and "[muh] FAILED: locate the engine (required)" in proc.stdout
    assert os.path.exists(opt / "image" / "steps.sh")


@pytest.mark.vllm
def test_a_base_image_file_is_never_replaced(tmp_path, vllm_wheel):
    root, site, opt = image(tmp_path, SPECS["stock"], vllm_wheel, False)
    vendor = site / "vllm/model_executor/layers/fused_moe/configs/E=256,N=128,device_name=Iluvatar_BI-V100.json"
    vendor.write_text('{"1": "the vendor\'s own"}')
    proc = run_steps(root, opt)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[muh] skipped MoE config E=256,N=128,device_name=Iluvatar_BI-V100.json: " in proc.stdout
    assert "exists in the image: kept" in proc.stdout
    assert vendor.read_text() == '{"1": "the vendor\'s own"}'


@pytest.mark.vllm
@pytest.mark.parametrize("model", [False, True], ids=["no-model-file", "qwen3_5-gemma"])
def test_the_build_reports_whether_the_models_code_takes_the_gemma_points(tmp_path, vllm_wheel, model):
    """The EngineX baseline's reached GemmaRMSNorm points: the image build says whether the fork's
    qwen3_5.py names the path (a report line; the build succeeds either way)."""
    root, site, opt = image(tmp_path, SPECS["baseline"], vllm_wheel, True)
    if model:
        standin.add_model(site)
    proc = run_steps(root, opt)
    log = proc.stdout
    assert proc.returncode == 0, log + proc.stderr
    f = "vllm/model_executor/models/qwen3_5.py"
    for pid, lit in (("ops.gemma_rms_norm", "GemmaRMSNorm"), ("ops.head_rms_norm", "q_norm")):
        name = f"point {pid} ({lit} in {f})"
        if model:
            assert f"[muh] ok: {name}" in log, log
        else:
            assert (
                f"[muh] skipped {name}: {site / f} is not in this image: the point's rebind may stay idle (exit 1)"
                in log
            ), log
    # the plugin this image installs rebinds GemmaRMSNorm.forward_cuda to muh's adapter
    init = (site / "muh_vllm_plugin" / "__init__.py").read_text()
    assert (
        "('gemma_rms_norm', 'vllm.model_executor.layers.layernorm', 'GemmaRMSNorm.forward_cuda', "
        "'muh_kernels.vllm_ops:gemma_rms_norm', 'gemma_rms_norm')" in init
    )


@pytest.mark.vllm
@pytest.mark.parametrize("enable", [False, True])
def test_enable_reasoning_goes_with_the_parser_only_where_the_engine_has_it(tmp_path, vllm_wheel, enable):
    """Issue 27.2: --enable-reasoning is decided by the image build, and only beside --reasoning-parser."""
    root, site, opt = image(tmp_path, SPECS["baseline"], vllm_wheel, True)
    cli = site / "vllm/entrypoints/openai/cli_args.py"
    extra = '"--reasoning-parser", "--enable-reasoning"' if enable else '"--reasoning-parser",'
    cli.write_text(cli.read_text() + f"\n# fork\n_X = ({extra})\n")
    proc = run_steps(root, opt)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (opt / "run" / "accept" / "reasoning_parser").exists()
    assert (opt / "run" / "accept" / "enable_reasoning").exists() == enable
    # an engine without the parser never gets --enable-reasoning, even where the literal is there
    root2, site2, opt2 = image(tmp_path / "b", SPECS["baseline"], vllm_wheel, True)
    cli2 = site2 / "vllm/entrypoints/openai/cli_args.py"
    cli2.write_text(cli2.read_text() + '\n_X = ("--enable-reasoning",)\n')
    proc = run_steps(root2, opt2)
    assert proc.returncode == 0 and not (opt2 / "run" / "accept" / "enable_reasoning").exists()
    assert "[muh] skipped flag enable_reasoning: it goes only with the group reasoning_parser" in proc.stdout


@pytest.mark.vllm
@pytest.mark.parametrize("hooks", ["both", "middleware", "build_app", "neither"])
def test_the_build_fails_when_the_request_hook_cannot_be_installed(tmp_path, vllm_wheel, hooks):
    """Issue 27.5: the request hook rides on the engine's --middleware, else on the plugin's build_app wrap;
    an api_server.py with neither stops the build with one [muh] FAILED line."""
    root, site, opt = image(tmp_path, SPECS["baseline"], vllm_wheel, True)
    api = site / "vllm/entrypoints/openai/api_server.py"
    text = api.read_text()
    assert "args.middleware" in text and "build_app(args)" in text  # the wheel has both
    if hooks in ("build_app", "neither"):
        text = text.replace("args.middleware", "args.muh_removed")
    if hooks in ("middleware", "neither"):
        text = text.replace("build_app(args)", "make_app(args)")
    api.write_text(text)
    proc = run_steps(root, opt)
    if hooks == "neither":
        assert proc.returncode == 1
        assert "[muh] FAILED: request hook (required): neither --middleware nor a module-level build_app" in proc.stdout
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (opt / "run" / "accept" / "middleware").exists() == (hooks != "build_app")
    want = "the plugin wraps api_server.build_app" if hooks == "build_app" else "--middleware, the engine's own option"
    assert f"[muh] ok: request hook ({want})" in proc.stdout
