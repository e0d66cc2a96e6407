"""Serving values the real platform ran (issue 27.1): the baseline serves what a reported run used, and
`muh explain` / the build say which values rest on a reported run (the evidence is the variant's data)."""

from __future__ import annotations

import json
from pathlib import Path

from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[3]
BASELINE = ROOT / "specs" / "baseline.muh"
VARIANT = json.loads((ROOT / "muh" / "engines" / "vllm" / "variants" / "enginex-bi100-v1.2.3.json").read_text())
RUNS = VARIANT["models"]["Qwen3_5ForCausalLM"]["runs"]


def _plan(path: Path):
    from muh.derive.deploy import resolve_deploy

    spec = load_file(path).spec
    return resolve_deploy(spec, next(iter(spec.deploys.values())))


def _flag(command, flag):
    return command[command.index(flag) + 1] if flag in command else None


def test_the_baseline_serves_values_a_reported_run_used():
    plan, diags = _plan(BASELINE)
    assert _flag(plan.command, "--max-model-len") in RUNS["serve.max_model_len"]["worked"]
    assert _flag(plan.command, "--gpu-memory-utilization") in RUNS["serve.gpu_memory_utilization"]["worked"]
    assert "--enable-prefix-caching" in plan.command  # d06_cache_hit: the rival failed it without (issue 37.1)
    assert "true" in RUNS["serve.enable_prefix_caching"]["worked"]
    assert not [d for d in diags if d.code == "W-DEPLOY-UNTESTED"]


def test_nothing_unmeasured_is_on_by_default():
    """Issue 37.2: the allocator switch never ran on this stack and the chat-template edit undoes thinking-off:
    the baseline serves neither; each is an opt-in whose evidence the plan carries."""
    plan, _ = _plan(BASELINE)
    assert "PYTORCH_CUDA_ALLOC_CONF" not in dict(plan.env)
    assert "thinking_off" not in plan.api_features and plan.chat_template in (None, "-")
    assert "--chat-template" not in " ".join(plan.command)
    for key in ("env.PYTORCH_CUDA_ALLOC_CONF", "api.thinking_off"):
        assert plan.tuned[key].rule.startswith("not measured, opt-in: ") and RUNS[key]["opt_in"] in plan.tuned[key].rule


def test_an_opt_in_turned_on_warns_unless_kept_knowingly(tmp_path):
    text = BASELINE.read_text().replace("accept = [", "accept = [thinking_off, ")
    (w,) = _warnings(tmp_path, text)
    assert "api.thinking_off = on" in w.message
    kept = text.replace("  api {", '  untested { api.thinking_off = "the model emits only !" }\n  api {')
    assert _warnings(tmp_path, kept) == []
    plan, _ = _plan(tmp_path / "s.muh")
    assert "--chat-template" in " ".join(plan.command) or plan.chat_template
    assert (
        "kept knowingly" in plan.tuned["api.thinking_off"].rule
        and "not measured, opt-in" in plan.tuned["api.thinking_off"].rule
    )


def test_explain_says_which_values_rest_on_a_reported_run(cli):
    code, out, _ = cli("explain", BASELINE, "deploy")
    assert code == 0
    lines = out.splitlines()

    def rule(key):
        i = next(i for i, line in enumerate(lines) if line.strip().startswith(key + " ="))
        return lines[i + 1]

    assert "reported run on enginex bi100-v1.2.3" in rule("serve.max_model_len") and "003:795" in rule(
        "serve.max_model_len"
    )
    assert "reported run" in rule("serve.enable_prefix_caching") and "2544-2547" in rule("serve.enable_prefix_caching")
    assert "not measured, opt-in" in rule("env.PYTORCH_CUDA_ALLOC_CONF")
    assert "not measured, opt-in" in rule("api.thinking_off")
    assert "no run record for this flag" in rule("serve.served_model_name")


def _warnings(tmp_path, text):
    p = tmp_path / "s.muh"
    p.write_text(text)
    _, diags = _plan(p)
    return [d for d in diags if d.code == "W-DEPLOY-UNTESTED"]


def test_a_value_no_reported_run_used_warns_at_its_line(tmp_path):
    text = BASELINE.read_text().replace("max_model_len = 80000", "max_model_len = 131072")
    (w,) = _warnings(tmp_path, text)
    assert "serve.max_model_len = 131072" in w.message and "80000" in w.message
    assert w.span.line == next(i for i, line in enumerate(text.splitlines(), 1) if "131072" in line)
    failed = _warnings(tmp_path, text.replace("131072", "100000"))[0]
    assert "it failed (CUDA OOM" in failed.message


def test_serving_without_prefix_caching_needs_a_reason(tmp_path):
    off = BASELINE.read_text().replace("    enable_prefix_caching = true", "    enable_prefix_caching = false")
    (w,) = _warnings(tmp_path, off)
    assert "serve.enable_prefix_caching = false" in w.message and "d06_cache_hit" in w.message
    left_out = BASELINE.read_text().replace("    enable_prefix_caching = true", "")
    (w,) = _warnings(tmp_path, left_out)  # the engine's default is off: the same verdict
    assert "d06_cache_hit" in w.message
    reasoned = off.replace("  api {", '  untested { serve.enable_prefix_caching = "measuring without it" }\n  api {')
    assert _warnings(tmp_path, reasoned) == []
    plan, _ = _plan(tmp_path / "s.muh")
    assert "kept knowingly: measuring without it" in plan.tuned["serve.enable_prefix_caching"].rule
