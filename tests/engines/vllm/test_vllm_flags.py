"""Serve flags are checked against vLLM 0.6.3.post1's real flag table; bad ones fail at file:line:col."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from muh.diagnostics import MuhError
from muh.engines.vllm.derive.engine import load_engine, resolve_version
from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "tests" / "fixtures" / "deploy" / "competition.muh"
BASE = SPEC.read_text()


def spec_with(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def build(tmp_path: Path, text: str):
    p = tmp_path / "t.muh"
    p.write_text(text)
    return render(load_file(p)), p


def first_error(tmp_path: Path, text: str):
    with pytest.raises(MuhError) as info:
        build(tmp_path, text)
    errs = [d for d in info.value.diagnostics if d.is_error]
    assert errs, info.value.diagnostics
    return errs[0], tmp_path / "t.muh"


def where(path: Path, text: str, needle: str) -> str:
    """file:line:col of the first occurrence of ``needle`` in ``text``."""
    i = text.index(needle)
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return f"{path}:{line}:{col}"


# -- the fixture ----------------------------------------------------------------------------------


def test_fixture_has_the_real_flag_set():
    e = load_engine("0.6.3.post1")
    flags = e.all_flags
    assert len(flags) == 117  # vllm/engine/arg_utils.py of the 0.6.3.post1 wheel
    for f in (
        "--max-model-len",
        "-tp",
        "--tensor-parallel-size",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "--enable-prefix-caching",
        "--block-size",
        "--disable-custom-all-reduce",
        "--tool-parser-plugin",
    ):
        assert f in flags
    assert "--reasoning-parser" not in flags
    assert e.option("--dtype").choices == ("auto", "half", "float16", "bfloat16", "float", "float32")
    assert e.option("--block-size").choices == (8, 16, 32)
    assert e.option("--enable-chunked-prefill").kind == "optional_bool"
    assert e.tool_call_parsers == ("hermes", "internlm", "llama3_json", "mistral")
    assert ("enable_auto_tool_choice", "tool_call_parser") in [(a, b) for a, b, _ in e.requires]
    assert resolve_version("0.6.3") == "0.6.3.post1"


@pytest.mark.vllm
def test_fixture_is_what_the_extractor_reads_from_the_wheel(vllm_wheel):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "extract_vllm_flags.py"), "--wheel", str(vllm_wheel), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    fx = json.loads((ROOT / "muh/engines/vllm/data/vllm-0.6.3.post1.json").read_text())
    assert fx["source"]["wheel"] == vllm_wheel.name


# -- good spec ------------------------------------------------------------------------------------


def test_competition_spec_builds_the_team_flags(tmp_path):
    files, _ = build(tmp_path, BASE)
    run = {f.path: f.content for f in files}["computility-run.yaml"]
    import yaml

    cmd = yaml.safe_load(run)["command"]
    assert cmd[:3] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    joined = " ".join(cmd)
    for piece in (
        "--model /model",
        "--served-model-name llm",
        "--tensor-parallel-size 4",
        "--max-model-len 131072",
        "--gpu-memory-utilization 0.92",
        "--max-num-seqs 2",
        "--enable-chunked-prefill",
        "--dtype half",
        "--tool-call-parser qwen3_coder",
        "--reasoning-parser qwen3",
        "--disable-custom-all-reduce",
    ):
        assert piece in joined


# -- bad flags: each fails at the spec's line and column --------------------------------------------


@pytest.mark.parametrize(
    "old,new,needle,code,words",
    [
        (
            "    max_model_len = 131072",
            "    max_model_le = 131072",
            "max_model_le",
            "E-VLLM-FLAG",
            "abbreviation of `--max-model-len`",
        ),
        ("    dtype = half", "    dtype = fp16", "fp16", "E-VLLM-CHOICE", "does not accept `fp16`"),
        (
            '    flags = ["--reasoning-parser"]\n',
            "",
            "reasoning_parser",
            "E-VLLM-FLAG",
            "`--reasoning-parser` is not a flag",
        ),
        (
            'tool_call_parser = "qwen3_coder"',
            'tool_call_parser = "qwen9_coder"',
            '"qwen9_coder"',
            "E-VLLM-PARSER",
            "`qwen9_coder` does not exist",
        ),
        (
            '    tool_call_parser = "qwen3_coder"\n',
            "",
            "enable_auto_tool_choice",
            "E-VLLM-REQUIRES",
            "needs `--tool-call-parser`",
        ),
        ("    dtype = half", "    dtype = bfloat16", "bfloat16", "E-DEPLOY-DTYPE", "compute capability"),
        ("    tensor_parallel_size = 4", "    tensor_parallel_size = 8", "8\n", "E-DEPLOY-TP", "exceeds the 4 device"),
        ("    max_num_seqs = 2", "    max_num_seqs = two", "two", "E-VLLM-VALUE", "an integer"),
        ("    enforce_eager = true", "    enforce_eager = 1", "1\n    trust", "E-VLLM-VALUE", "switch"),
        ("    max_num_seqs = 2", "    max_seqs = 2", "max_seqs", "E-VLLM-FLAG", "max_num_seqs"),
    ],
)
def test_bad_flag_fails_at_its_line(tmp_path, old, new, needle, code, words):
    text = spec_with(old, new)
    err, path = first_error(tmp_path, text)
    assert err.code == code, err.render()
    assert words in err.message + (err.hint or ""), err.render()
    assert str(err.span) == where(path, text, needle), err.render(text)
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: ", err.render(text))


def test_dtype_fp16_hints_the_real_name(tmp_path):
    err, _ = first_error(tmp_path, spec_with("    dtype = half", "    dtype = fp16"))
    assert "float16" in err.hint


def test_declared_fork_flag_and_parser_pass(tmp_path):
    build(tmp_path, BASE)  # BASE declares both


def test_an_undeclared_reasoning_parser_is_refused_with_why_muh_cannot_provide_it(tmp_path):
    err, _ = first_error(tmp_path, spec_with('    flags = ["--reasoning-parser"]\n', ""))
    assert err.code == "E-VLLM-FLAG"
    assert "parses its arguments before any plugin loads" in err.message and "reasoning_content" in err.message


def test_an_undeclared_qwen3_coder_on_stock_ships_muhs_provider(tmp_path):
    """Stock 0.6.3 lacks `qwen3_coder`; muh's parser registers it through --tool-parser-plugin."""
    import yaml

    from muh.explain import explain_deploy as explain

    text = spec_with('    tool_call_parsers = ["qwen3_coder"]\n', "")
    files, path = build(tmp_path, text)
    out = {f.path: f.content for f in files}
    cmd = yaml.safe_load(out["computility-run.yaml"])["command"]
    joined = " ".join(cmd)
    assert "--tool-parser-plugin /opt/muh/vllm/parsers/muh_qwen3_coder.py --enable-auto-tool-choice" in joined
    assert "vllm/parsers/muh_qwen3_coder.py" in out
    lines = "\n".join(explain(load_file(path).spec, "deploy.run.parser_provider"))
    assert "vllm 0.6.3.post1 lacks `qwen3_coder`: muh ships its own" in lines


def test_extension_must_look_like_a_flag(tmp_path):
    err, _ = first_error(
        tmp_path, spec_with('flags = ["--reasoning-parser"]', 'flags = ["--reasoning-parser", "$(id)"]')
    )
    assert err.code == "E-DEPLOY-EXT"


@pytest.mark.parametrize(
    "knob,words",
    [
        ("paged_attention.partition_size = 256", "unsafe"),
        ("max_shared_memory = hardware.smem_per_block", "dead knob"),
        ("triton_flash_attention = 1", "ROCm"),
        ("paged_attention.v1_max_seq_len = 16384", "overflows shared memory"),
        ("prefix_prefill.block = 64", "shared memory"),
        ("prefix_prefill.block = 48", "power of two"),
        ("paged_attention.v1_treshold = 64", "v1_threshold"),
        ("ops = [rms_nrom]", "rms_norm"),
    ],
)
def test_refused_knobs_say_why_at_their_line(tmp_path, knob, words):
    text = spec_with("    ops = [rms_norm, fused_add_rms_norm, silu_and_mul]\n", f"    {knob}\n")
    err, path = first_error(tmp_path, text)
    assert words in err.message + (err.hint or ""), err.render()
    assert err.span.line == text[: text.index(knob)].count("\n") + 1


def test_moe_batch_sizes_must_cover_max_num_seqs(tmp_path):
    text = spec_with("    top_k = 8\n", "    top_k = 8\n    batch_sizes = [1, 4, 8]\n")
    err, _ = first_error(tmp_path, text)
    assert err.code == "E-DEPLOY-MOE" and "batch size 2" in err.message


def test_moe_keys_cover_every_allowed_batch(tmp_path):
    files, _ = build(tmp_path, spec_with("    max_num_seqs = 2", "    max_num_seqs = 40"))
    moe = next(f for f in files if f.path.startswith("vllm/moe_configs/"))
    keys = sorted(int(k) for k in json.loads(moe.content))
    assert set(range(1, 41)) <= set(keys)
    assert max(keys) == 4096  # max_num_batched_tokens
    assert moe.path.endswith("E=256,N=128,device_name=Iluvatar_BI-V100.json")  # N = 512 / tp 4


def test_triton_free_image_refuses_prefix_caching(tmp_path):
    err, _ = first_error(tmp_path, spec_with('  model = "/model"\n', '  model = "/model"\n  triton = false\n'))
    assert err.code == "E-DEPLOY-TRITON"


def test_explain_shows_rule_and_inputs(tmp_path):
    from muh.explain import explain_deploy as explain

    p = tmp_path / "t.muh"
    p.write_text(BASE)
    lines = explain(load_file(p).spec, "deploy.vllm.paged_attention.v1_threshold")
    text = "\n".join(lines)
    assert "v1_threshold = 64    [derived]" in text
    assert "pow2_nearest(stock_threshold × sm_count / stock_sm_count)" in text
    assert "sm_count=16" in text
    with pytest.raises(MuhError):
        explain(load_file(p).spec, "deploy.vllm.nope")


# -- issue 11 item 11: values that look like flags ----------------------------------------------------


def _engine_parser():
    """argparse with the pinned engine's options as its wheel declares them (kind, nargs, action: the
    table tools/extract_vllm_flags.py reads from vllm 0.6.3.post1's add_argument calls)."""
    import argparse

    ap = argparse.ArgumentParser(prog="api_server", exit_on_error=False, add_help=False)
    for o in load_engine("0.6.3.post1").options:
        kw = {"dest": o.dest}
        if o.kind == "switch":
            kw["action"] = "store_true"
        elif o.kind == "optional_bool":
            kw.update(nargs="?", const=True)
        elif o.kind == "list":
            kw["nargs"] = "+"
        elif o.kind == "append":
            kw["action"] = "append"
        ap.add_argument(*o.flags, **kw)
    return ap


@pytest.mark.parametrize("value", ["--api-key=leak", "-h", "--disable-log-stats"])
def test_a_value_that_looks_like_a_flag_stays_a_value(tmp_path, value):
    """`served_model_name = "--api-key=leak"` must not set --api-key in the server's argv: muh emits
    the one form argparse cannot misread (`--served-model-name=--api-key=leak`)."""
    import yaml

    files, _ = build(tmp_path, spec_with('served_model_name = "llm"', f'served_model_name = "{value}"'))
    run = {f.path: f.content for f in files}
    cmd = yaml.safe_load(run["computility-run.yaml"])["command"]
    args, fork_only = _engine_parser().parse_known_args(cmd[3:])
    assert fork_only == ["--reasoning-parser", "qwen3"]  # the fork's declared extension, not ours to parse
    assert args.served_model_name == [value]
    assert args.api_key is None and args.disable_log_stats is False and args.model == "/model"
    docker_cmd = json.loads(next(line for line in run["Dockerfile"].splitlines() if line.startswith("CMD "))[4:])
    assert _engine_parser().parse_known_args(docker_cmd[3:])[0].served_model_name == [value]


def test_a_flag_like_item_of_a_list_is_refused_at_its_line(tmp_path):
    text = spec_with('served_model_name = "llm"', 'served_model_name = ["llm", "--api-key=leak"]')
    err, path = first_error(tmp_path, text)
    assert err.code == "E-VLLM-VALUE" and "starts with `-`" in err.message
    assert str(err.span) == where(path, text, '["llm"')


def test_the_parser_reconstruction_is_faithful_to_the_failure(tmp_path):
    """Control: the plain two-word form *would* have been misread by this parser."""
    args = _engine_parser().parse_args(["--served-model-name", "llm", "--api-key=leak"])
    assert args.api_key == "leak"


def test_bfloat16_on_non_nvidia_hardware_is_said_with_reported_capability(tmp_path):
    """Issue 11 item 21: the documented way (dtype = bfloat16) errored on non-NVIDIA hardware and the
    workaround set a fake compute capability (which also changes the architecture compiled for).
    `reported_capability` states what the runtime reports; it gates the engine's check only."""
    text = spec_with("    dtype = half", "    dtype = bfloat16")
    err, _ = first_error(tmp_path, text)
    assert err.code == "E-DEPLOY-DTYPE" and "reported_capability" in err.hint
    ok = spec_with("  warp_size = 64", "  warp_size = 64\n  reported_capability = 80", text)
    files, _ = build(tmp_path, ok)
    joined = "\n".join(f.content for f in files)
    assert "--dtype bfloat16" in joined.replace('", "', " ") or "bfloat16" in joined
    assert "sm_80" not in joined  # no architecture chosen from it


def test_a_negative_count_is_refused_at_its_line(tmp_path):
    """Issue 11 (class of item 9): `max_num_seqs = -2` built."""
    text = spec_with("    max_num_seqs = 2", "    max_num_seqs = -2")
    err, path = first_error(tmp_path, text)
    assert (
        err.code == "E-VLLM-VALUE"
        and "`--max-num-seqs` = -2 is out of the engine's range: it takes values ≥ 1" in err.message
    )
    assert str(err.span) == where(path, text, "-2")


def test_every_stock_variant_has_a_flag_table_and_every_engine_is_registered():
    from muh import engines
    from muh.engines.vllm.derive.engine import available_versions

    assert engines.names() == ["enginex", "vllm"]
    for name in engines.names():
        plugin = engines.get(name)
        for version, v in plugin.variants().items():
            assert v.engine == name and v.version == version
            assert v.base in available_versions()  # the flag table the variant starts from exists
    assert engines.get("vllm").variant("0.6.3").version == "0.6.3.post1"


def test_an_unknown_engine_or_variant_names_the_known_ones(tmp_path):
    base = (ROOT / "tests" / "fixtures" / "deploy" / "competition.muh").read_text()
    for text, words in (
        (base.replace('engine = vllm "0.6.3.post1"', 'engine = vlm "0.6.3.post1"'), "did you mean `vllm`"),
        (base.replace('engine = vllm "0.6.3.post1"', 'engine = enginex "v1.2.3"'), "bi100-v1.2.3"),
    ):
        p = tmp_path / "e.muh"
        p.write_text(text)
        with pytest.raises(MuhError) as info:
            render(load_file(p))
        err = next(d for d in info.value.diagnostics if d.is_error)
        assert err.code == "E-DEPLOY-ENGINE" and words in (err.hint or "") and err.span is not None


def test_enginex_may_lack_the_reasoning_parser_a_warning_at_its_line_and_an_explain_line():
    from muh.derive.deploy import resolve_deploy
    from muh.explain import explain_deploy as explain

    path = Path(__file__).resolve().parents[3] / "specs" / "baseline.muh"
    spec = load_file(path).spec
    plan, diags = resolve_deploy(spec, next(iter(spec.deploys.values())))
    assert plan is not None
    (w,) = [d for d in diags if d.code == "W-DEPLOY-PARSER"]
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.strip().startswith("reasoning_parser ="))
    assert w.span.line == line and "muh cannot provide it" in w.message and "before any plugin loads" in w.message
    text = "\n".join(explain(spec, "deploy.run.conditional.reasoning_parser"))
    assert "when absent: dropped at start with a log line; muh cannot provide it" in text


# -- issue 37.6: what vLLM 0.6.3 refuses at start-up is a spec error at its line, cited from the wheel -----------

BASELINE_TEXT = (ROOT / "specs" / "baseline.muh").read_text()


@pytest.mark.vllm
def test_each_start_up_check_cites_the_wheels_own_line(vllm_wheel):
    from muh.engines.vllm.derive.serve import WHEEL_CHECKS
    from muh.engines.vllm.wheel import read

    for key, (member, line, literal, _what) in WHEEL_CHECKS.items():
        assert read(vllm_wheel, member).splitlines()[line - 1].strip() == literal, (key, member, line)


def _diags(tmp_path, text):
    from muh.derive.deploy import resolve_deploy

    p = tmp_path / "s.muh"
    p.write_text(text)
    spec = load_file(p).spec
    return resolve_deploy(spec, next(iter(spec.deploys.values())))[1]


def _line(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "old,new,needle,message",
    [
        (
            "    enable_chunked_prefill = true\n",
            "    enable_chunked_prefill = false\n",
            "max_num_batched_tokens = 4096",
            "max_num_batched_tokens 4096 < max_model_len 80000 without chunked prefill: "
            "vLLM refuses to start (vllm/config.py:1039",
        ),
        (
            "max_num_seqs = 2 ",
            "max_num_seqs = 8192 ",
            "max_num_batched_tokens = 4096",
            "max_num_batched_tokens 4096 < max_num_seqs 8192: vLLM refuses to start (vllm/config.py:1049",
        ),
        (
            '    served_model_name = "llm"\n',
            '    served_model_name = "llm"\n    port = 70000\n',
            "port = 70000",
            "port 70000 is outside 1–65535 (vllm/entrypoints/openai/api_server.py:544",
        ),
        (
            '    served_model_name = "llm"\n',
            '    served_model_name = "llm"\n    port = 0\n',
            "port = 0",
            "port 0 is outside 1–65535",
        ),
        (
            "    top_k = 8  # num_experts_per_tok\n",
            "    top_k = 300\n",
            "top_k = 300",
            "moe top_k 300 is above the 256 experts: the router cannot pick them "
            "(vllm/model_executor/layers/fused_moe/fused_moe.py:443",
        ),
    ],
)
def test_a_configuration_vllm_refuses_at_start_is_an_error_at_its_line(tmp_path, old, new, needle, message):
    assert old in BASELINE_TEXT
    text = BASELINE_TEXT.replace(old, new)
    errors = [d for d in _diags(tmp_path, text) if d.code == "E-VLLM-CONFIG"]
    assert len(errors) == 1 and message in errors[0].message, [d.message for d in errors]
    assert errors[0].span.line == _line(text, needle)


def test_the_baseline_passes_the_start_up_checks_and_ships_nothing_that_does_nothing(tmp_path):
    diags = _diags(tmp_path, BASELINE_TEXT)
    assert not [d for d in diags if d.code in ("E-VLLM-CONFIG", "W-DEPLOY-NOOP")], [d.message for d in diags]


def test_r4s_dead_values_put_back_into_the_baseline_each_say_what_does_nothing(tmp_path):
    text = BASELINE_TEXT.replace(
        "    enforce_eager = true\n", "    enforce_eager = true\n    max_seq_len_to_capture = 32768\n"
    )
    text = text.replace(
        '    VLLM_IMAGE_FETCH_TIMEOUT = "10"\n',
        '    VLLM_IMAGE_FETCH_TIMEOUT = "10"\n    BI100_MAX_NUM_SEQS = "2"\n'
        '    BI100_GDN_CACHE_POLICY = "admission64"\n',
    )
    noop = [d for d in _diags(tmp_path, text) if d.code == "W-DEPLOY-NOOP"]
    capture = next(d for d in noop if "max_seq_len_to_capture" in d.message)
    assert "vllm/worker/worker.py:286" in capture.message and capture.span.line == _line(text, "max_seq_len_to_capture")
    bi100 = [d for d in noop if d.message.startswith("`BI100_")]
    assert len(bi100) == 2 and all("nothing in the image reads it" in d.message for d in bi100)
    assert not [
        d
        for d in _diags(tmp_path, text.replace("    enforce_eager = true\n", ""))
        if d.code == "W-DEPLOY-NOOP" and "max_seq_len_to_capture" in d.message
    ]
