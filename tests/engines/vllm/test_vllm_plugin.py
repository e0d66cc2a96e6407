"""The generated vLLM plugin, run in a minimal stand-in environment (no torch, no vLLM install).

The stand-in `vllm` package has the same module paths and names as 0.6.3 (the static test in
test_vllm_patches.py proves those names exist in the real wheel). The heavier check — importing
the plugin inside a real vLLM — is the image build's `python -m muh_vllm_plugin --check`
(docs/deploy.md: "verifying the plugin in a real vLLM").
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "tests" / "fixtures" / "deploy" / "competition.muh"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    spec = out / "competition.muh"  # ops served by a stand-in provider module
    spec.write_text(
        SPEC.read_text().replace(
            "    prefix_prefill.head_dim = 128\n",
            '    prefix_prefill.head_dim = 128\n    ops_module = "muh_kernels.vllm_ops"\n',
        )
    )
    for f in render(load_file(spec)):
        if f.path.startswith("vllm/plugin/"):
            p = out / f.path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f.content)
    return out / "vllm" / "plugin"


def fake_vllm(root: Path, version: str = "0.6.3.post1", with_moe: bool = True, ops: tuple = ("rms_norm",)) -> None:
    files = {
        "vllm/__init__.py": f"__version__ = {version!r}\n",
        "vllm/_custom_ops.py": "".join(
            f"def {n}(*a):\n    return 'stock {n}'\n\n" for n in ("rms_norm", "fused_add_rms_norm", "silu_and_mul")
        ),
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/layers/__init__.py": "",
        "vllm/model_executor/layers/fused_moe/__init__.py": "",
        "vllm/model_executor/layers/fused_moe/fused_moe.py": (
            "def get_default_config(M, E, N, K, topk, dtype, is_marlin):\n    return {'BLOCK_SIZE_M': 64}\n\n"
            "def try_get_optimal_moe_config(M):\n    return get_default_config(M, 256, 128, 2048, 8, None, False)\n"
            if with_moe
            else "\n"
        ),
        "muh_kernels/__init__.py": "",
        "muh_kernels/vllm_ops.py": "".join(f"def {n}(*a):\n    return 'muh {n}'\n\n" for n in ops),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def run_py(code: str, *paths: Path, args: tuple = ()) -> subprocess.CompletedProcess:
    """``code`` with ``paths`` importable; the start self-test's result selects every muh op (issue 37.3)."""
    selected = Path(paths[0]) / "selftest-all.json"
    selected.write_text(
        json.dumps({"selected": ["rms_norm", "fused_add_rms_norm", "silu_and_mul", "topk_softmax", "gemma_rms_norm"]})
    )
    env = {"PYTHONPATH": ":".join(str(p) for p in paths), "PATH": "/usr/bin:/bin", "MUH_SELFTEST_RESULT": str(selected)}
    return subprocess.run(
        [sys.executable, *(args or ("-c", textwrap.dedent(code)))], capture_output=True, text=True, env=env, timeout=60
    )


REGISTER_TWICE = """
    import logging
    logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
    import vllm._custom_ops as ops
    from vllm.model_executor.layers.fused_moe import fused_moe
    import muh_vllm_plugin as p
    first = p.register()
    rebound_once = ops.rms_norm
    second = p.register()
    assert first == second, (first, second)
    assert ops.rms_norm is rebound_once                  # idempotent: no double wrapping
    print("rms_norm ->", ops.rms_norm())
    print("fused_add_rms_norm ->", ops.fused_add_rms_norm())
    print("moe M=1 ->", fused_moe.try_get_optimal_moe_config(1))
    print("moe M=3000 ->", fused_moe.try_get_optimal_moe_config(3000))
"""


def test_register_rebinds_idempotently_and_logs_the_marker(tmp_path, plugin_dir):
    fake_vllm(tmp_path)
    proc = run_py(REGISTER_TWICE, tmp_path, plugin_dir)
    assert proc.returncode == 0, proc.stderr
    out, log = proc.stdout, proc.stderr
    assert "rms_norm -> muh rms_norm" in out
    assert "fused_add_rms_norm -> stock fused_add_rms_norm" in out  # provider lacks it: logged fallback
    assert "'BLOCK_SIZE_M': 16" in out.split("moe M=1 ->")[1].splitlines()[0]  # small-M shape (M <= E)
    assert "'num_warps': 2" in out  # 128 threads on 64-lane warps
    assert "moe M=3000" in out and "'BLOCK_SIZE_M': 64" in out.split("moe M=3000")[1]
    marker = [line for line in log.splitlines() if "muh-vllm-plugin:" in line]
    assert len(marker) == 1, log  # one marker line per process, even with two register() calls
    assert "rebound [moe_default_config, rms_norm]" in marker[0]
    assert "fused_add_rms_norm (provider muh_kernels.vllm_ops:fused_add_rms_norm" in marker[0]


def test_version_guard_skips_other_releases(tmp_path, plugin_dir):
    fake_vllm(tmp_path, version="0.7.0")
    proc = run_py(
        """
        import logging; logging.basicConfig(level=logging.INFO)
        import vllm._custom_ops as ops, muh_vllm_plugin as p
        p.register()
        print(ops.rms_norm())
    """,
        tmp_path,
        plugin_dir,
    )
    assert proc.returncode == 0, proc.stderr
    assert "stock rms_norm" in proc.stdout
    assert "skipped: vllm 0.7.0 is not 0.6.3" in proc.stderr


def test_fork_versions_of_the_release_pass_the_guard(tmp_path, plugin_dir):
    fake_vllm(tmp_path, version="0.6.3.post1+corex.3.2.3")
    proc = run_py(
        "import vllm._custom_ops as ops, muh_vllm_plugin as p; p.register(); print(ops.rms_norm())",
        tmp_path,
        plugin_dir,
    )
    assert "muh rms_norm" in proc.stdout, proc.stderr


def test_skip_env_leaves_a_name_stock(tmp_path, plugin_dir):
    fake_vllm(tmp_path)
    code = "import vllm._custom_ops as ops, muh_vllm_plugin as p; p.register(); print(ops.rms_norm())"
    env_code = "import os; os.environ['MUH_VLLM_PLUGIN_SKIP'] = 'rms_norm'\n" + code
    proc = run_py(env_code, tmp_path, plugin_dir)
    assert "stock rms_norm" in proc.stdout, proc.stderr


def test_check_mode_passes_and_fails_loudly(tmp_path, plugin_dir):
    fake_vllm(tmp_path)
    ok = run_py("", tmp_path, plugin_dir, args=("-m", "muh_vllm_plugin", "--check"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "muh-vllm-plugin: OK" in ok.stdout
    strict = run_py("", tmp_path, plugin_dir, args=("-m", "muh_vllm_plugin", "--check", "--strict"))
    assert strict.returncode == 1  # a provider (fused_add_rms_norm) is missing
    broken = tmp_path / "broken"
    fake_vllm(broken, with_moe=False)
    bad = run_py("", broken, plugin_dir, args=("-m", "muh_vllm_plugin", "--check"))
    assert bad.returncode == 1 and "MISSING" in bad.stdout and "FAILED" in bad.stdout


def test_plugin_sources_compile_and_declare_the_entry_point(tmp_path, plugin_dir):
    for p in plugin_dir.rglob("*.py"):
        compile(p.read_text(), str(p), "exec")
        assert p.read_text().startswith("# @generated by muh ")
    # copied beside vLLM as the Dockerfile does, the entry point is found by importlib.metadata
    fake_vllm(tmp_path)
    proc = run_py(
        """
        from importlib.metadata import entry_points
        eps = [e for e in entry_points(group="vllm.general_plugins")]
        print([(e.name, e.value) for e in eps])
        eps[0].load()()
    """,
        tmp_path,
        plugin_dir,
    )
    assert proc.returncode == 0, proc.stderr
    assert "[('muh', 'muh_vllm_plugin:register')]" in proc.stdout
