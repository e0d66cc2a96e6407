"""The engine probe (probe/engine_probe.py) against a stand-in image: the pinned vLLM wheel's own files
(unpacked, not installed), a vendor module with part of ixformer's functions, a model config — and a
``vllm/__init__.py`` that fails when imported, to show the probe's own process never imports vLLM."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from muh import engines
from muh.codegen.base import BuildContext
from muh.codegen.probe import emit_probe_bundle
from muh.engines.vllm.derive import tuning
from muh.engines.vllm.derive.edits import sites_for
from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]
FILES = (
    "vllm/_version.py",
    "vllm/version.py",
    "vllm/_custom_ops.py",
    "vllm/attention/ops/paged_attn.py",
    "vllm/attention/ops/prefix_prefill.py",
    "vllm/model_executor/layers/sampler.py",
    "vllm/model_executor/layers/fused_moe/fused_moe.py",
    "vllm/model_executor/models/registry.py",
    "vllm/entrypoints/openai/cli_args.py",
)


def _engine_probe(tmp_path: Path) -> Path:
    loaded = load_file(ROOT / "specs/baseline.muh")
    files = {f.path: f.content for f in emit_probe_bundle(BuildContext(loaded.spec, loaded.derived))}
    p = tmp_path / "engine_probe.py"
    p.write_text(files["probe/engine_probe.py"])
    (tmp_path / "engine_probe.json").write_text(files["probe/engine_probe.json"])
    return p


def test_engine_probe_imports_only_the_standard_library(tmp_path):
    tree = ast.parse(_engine_probe(tmp_path).read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert mods <= set(sys.stdlib_module_names), mods - set(sys.stdlib_module_names)


@pytest.mark.vllm
def test_engine_probe_on_a_stand_in_image(vllm_wheel, tmp_path):
    from muh.engines.vllm.wheel import extract

    site = tmp_path / "site"
    extract(vllm_wheel, list(FILES), site)
    (site / "vllm/__init__.py").write_text("raise RuntimeError('vllm was imported')\n")
    vendor = site / "ixformer"
    vendor.mkdir()
    (vendor / "__init__.py").write_text("")
    present = ("rms_norm", "silu_and_mul", "vllm_swap_blocks")
    (vendor / "functions.py").write_text("".join(f"def {n}(*a):\n    pass\n" for n in present))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"architectures": ["Qwen2MoeForCausalLM"], "num_experts": 256, "moe_intermediate_size": 512})
    )
    hw = tmp_path / "hw.json"
    hw.write_text(
        json.dumps(
            {
                "schema": "muh.probe.result",
                "hardware": {
                    "device_name": {"value": "Iluvatar BI-V100", "method": "m"},
                    "device_name_nvml": {"value": None, "method": "m"},
                },
            }
        )
    )
    out = tmp_path / "out.json"
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(
        [sys.executable, str(_engine_probe(tmp_path)), "--hardware", str(hw), "--model", str(model), "-o", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "muh.probe.result"  # the hardware document, extended
    e = doc["engine"]
    assert e["installed"] and e["version"] == "0.6.3.post1"
    # every anchor muh patches occurs exactly once in the pinned files
    sites = sites_for("0.6.3.post1")
    assert {a["id"] for a in e["anchors"]} == {s.id for s in sites}
    assert all(a["ok"] and a["occurrences"] == 1 for a in e["anchors"]), e["anchors"]
    # signatures of every function the plugin may rebind, read from source
    assert set(e["signatures"]) == set(tuning.REBIND_TARGETS)
    sig = e["signatures"]["rms_norm"]
    assert sig["found"] and sig["where"].startswith("vllm/_custom_ops.py:") and "weight" in sig["signature"]
    assert e["signatures"]["top_k_top_p"]["found"]
    # vendor functions: present / missing; asked are the baseline's variant's vendor ops (what the plugin's
    # rebind decisions rest on) and the variant's extra probe targets (its one record of the fork)
    variant = engines.get("enginex").variant("bi100-v1.2.3")
    v = e["vendor_functions"][variant.vendor_module]
    assert v["importable"] and set(v["present"]) == set(present)
    assert {"vllm_moe_topk_softmax", "vllm_moe_align_block_size", "vllm_rotary_embedding_neox"} <= set(v["missing"])
    asked = {op.vendor for op in variant.vendor_ops.values()} | set(variant.probe.functions)
    assert set(v["present"]) | set(v["missing"]) == asked
    # markers of the fork: stock files here, so the fork's flag and CoreX wrappers are absent
    assert e["markers"]["vllm/entrypoints/openai/cli_args.py"]["contains"] is False
    assert e["markers"]["vllm/model_executor/models/corex_moe.py"]["exists"] is False
    # the model class: from the registry's source; importing vLLM (in a child) fails here and says so
    cls = e["model"]["class"]
    assert cls["registry_entry"] == {"Qwen2MoeForCausalLM": "qwen2_moe.Qwen2MoeForCausalLM"}
    assert cls["resolved"] is None and "vllm was imported" in cls["resolve_error"]
    # the MoE config file vLLM would look for, by its rule, and the one muh ships for the baseline
    moe = e["moe_config"]
    assert moe["file_by_rule"] == "E=256,N=128,device_name=Iluvatar_BI-V100.json"
    assert moe["muh_ships"] == moe["file_by_rule"] and moe["muh_file_matches"] is True


def test_the_engine_probe_is_the_module_as_it_is_and_its_data_is_beside_it(tmp_path):
    """Issue 38: code that does not depend on the spec is a module (muh/codegen/probe/engine_probe.py, importable
    and tested directly); the bundle gets it byte for byte below its header, the spec's data as JSON beside it."""
    from muh.codegen.probe import engine_probe

    copy = _engine_probe(tmp_path).read_text()
    source = Path(engine_probe.__file__).read_text()
    assert copy.split("byte for byte below this line\n", 1)[1] == source.partition("\n")[2]
    data = engine_probe.load_data(str(tmp_path / "engine_probe.json"))
    assert data["engine"] == "vllm" and data["tensor_parallel_size"] == 4 and data["spec"] == "baseline.muh"
    out = tmp_path / "out.json"
    r = subprocess.run(
        [sys.executable, str(tmp_path / "engine_probe.py"), "--model", str(tmp_path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["spec"] == data["spec"]
