"""Every anchored edit, proven against the real vLLM 0.6.3.post1 files from the pinned wheel.

For each shipped diff: its anchor occurs exactly once, the generated check_anchors.py agrees,
`patch -p1 --forward --dry-run` succeeds, the patched file compiles, the values read back from its
syntax tree are the spec's, a second application is refused as "previously applied", and the
stdlib fallback (check_anchors.py --apply) produces the same bytes as `patch`.
"""

from __future__ import annotations

import ast
import py_compile
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from muh.engines.vllm.codegen.emit import plans
from muh.engines.vllm.derive import edits as E
from muh.engines.vllm.derive import tuning
from muh.engines.vllm.wheel import extract, read
from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "tests" / "fixtures" / "deploy" / "competition.muh"

pytestmark = pytest.mark.vllm
needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="the `patch` tool is not installed")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    loaded = load_file(SPEC)
    files = render(loaded)
    out = tmp_path_factory.mktemp("gen")
    for f in files:
        (out / f.path).parent.mkdir(parents=True, exist_ok=True)
        (out / f.path).write_text(f.content)
    from muh.codegen.base import BuildContext

    plan = plans(BuildContext(loaded.spec, loaded.derived))[0]
    return out, plan


@pytest.fixture
def site(tmp_path, vllm_wheel, built):
    _, plan = built
    extract(vllm_wheel, sorted({e.file for e in plan.edits}), tmp_path)
    return tmp_path


@pytest.mark.parametrize("s", E.SITES_0_6_3, ids=lambda s: s.id)
def test_anchor_occurs_exactly_once_in_the_pinned_wheel(vllm_wheel, s):
    text = read(vllm_wheel, s.file)
    assert E.count(text, s.old) == 1
    # the line number in the table is a fact about this wheel
    assert text.splitlines()[s.line - 1] == s.old.splitlines()[0]


def test_the_baseline_plan_has_both_edits(built):
    _, plan = built
    assert [e.id for e in plan.edits] == ["paged-attn-v1-threshold", "prefix-prefill-tile"]
    v = {k: r.value for e in plan.edits for k, r in e.values.items()}
    assert v == {
        "paged_attention.v1_threshold": 64,
        "paged_attention.v1_max_seq_len": 8192,
        "prefix_prefill.block": 32,
        "prefix_prefill.num_warps": 4,
    }


@needs_patch
def test_each_patch_applies_compiles_and_reads_back(built, site):
    out, plan = built
    assert subprocess.run([sys.executable, str(out / "vllm/check_anchors.py"), str(site)]).returncode == 0
    patches = sorted((out / "vllm/patches").glob("*.patch"))
    assert len(patches) == len(plan.edits)
    for p, e in zip(patches, plan.edits):
        dry = subprocess.run(
            ["patch", "-d", str(site), "-p1", "--forward", "--dry-run"], stdin=p.open(), capture_output=True, text=True
        )
        assert dry.returncode == 0, dry.stdout + dry.stderr
        real = subprocess.run(
            ["patch", "-d", str(site), "-p1", "--forward"], stdin=p.open(), capture_output=True, text=True
        )
        assert real.returncode == 0, real.stdout + real.stderr
        target = site / e.file
        py_compile.compile(str(target), doraise=True)
        got = E.READERS[e.id](target.read_text())
        assert got == {k.split(".")[-1]: r.value for k, r in e.values.items()}
        again = subprocess.run(
            ["patch", "-d", str(site), "-p1", "--forward", "--dry-run"], stdin=p.open(), capture_output=True, text=True
        )
        assert again.returncode != 0 and "previously applied" in again.stdout
    # after patching, the checker reports "already applied" and still succeeds
    assert subprocess.run([sys.executable, str(out / "vllm/check_anchors.py"), str(site)]).returncode == 0


@needs_patch
def test_stdlib_fallback_makes_the_same_edit_as_patch(built, vllm_wheel, tmp_path):
    out, plan = built
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        extract(vllm_wheel, sorted({e.file for e in plan.edits}), d)
    for p in sorted((out / "vllm/patches").glob("*.patch")):
        subprocess.run(["patch", "-d", str(a), "-p1", "--forward"], stdin=p.open(), check=True, capture_output=True)
    subprocess.run(
        [sys.executable, str(out / "vllm/check_anchors.py"), str(b), "--apply"], check=True, capture_output=True
    )
    for e in plan.edits:
        assert (a / e.file).read_bytes() == (b / e.file).read_bytes()


def test_a_vendor_change_in_the_anchor_fails_loudly(built, site):
    out, plan = built
    e = plan.edits[0]
    target = site / e.file
    target.write_text(target.read_text().replace("num_heads > 512", "num_heads > 256"))
    proc = subprocess.run(
        [sys.executable, str(out / "vllm/check_anchors.py"), str(site)], capture_output=True, text=True
    )
    assert proc.returncode == 1 and f"{e.id} {e.file}: SKIPPED: anchor found 0 times" in proc.stdout
    if shutil.which("patch"):
        dry = subprocess.run(
            ["patch", "-d", str(site), "-p1", "--forward", "--dry-run"],
            stdin=(out / "vllm/patches/0001-paged-attn-v1-threshold.patch").open(),
            capture_output=True,
            text=True,
        )
        assert dry.returncode != 0


def test_a_duplicated_anchor_fails_loudly(built, site):
    out, plan = built
    e = plan.edits[1]
    target = site / e.file
    target.write_text(target.read_text() + "\n\ndef again():\n" + e.anchor)
    proc = subprocess.run(
        [sys.executable, str(out / "vllm/check_anchors.py"), str(site)], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "found 2 times" in proc.stdout


# -- static checks of the plugin's targets and the MoE file rule (fast; no vLLM import) --------------


def _module_names(source: str) -> set[str]:
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


@pytest.mark.parametrize("name", sorted(tuning.REBIND_TARGETS))
def test_every_rebind_target_is_a_module_level_name(vllm_wheel, name):
    module, attr = tuning.REBIND_TARGETS[name]
    path = module.replace(".", "/") + ".py"
    source = read(vllm_wheel, path)
    head, _, method = attr.partition(".")
    assert head in _module_names(source), f"{module}.{head} is not module-level in the wheel"
    if method:  # Class.method: the class defines it
        cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == head)
        assert method in {f.name for f in cls.body if isinstance(f, ast.FunctionDef)}, f"{attr} is not defined"


def test_rebound_names_are_looked_up_at_call_time(vllm_wheel):
    """Callers reach the names through their module (not `from … import name`), so rebinding works."""
    fused = read(vllm_wheel, "vllm/model_executor/layers/fused_moe/fused_moe.py")
    assert re.search(r"^\s+config = get_default_config\(", fused, re.M)
    sampler = read(vllm_wheel, "vllm/model_executor/layers/sampler.py")
    assert re.search(r"^\s+logits = _apply_top_k_top_p\(", sampler, re.M)
    layernorm = read(vllm_wheel, "vllm/model_executor/layers/layernorm.py")
    assert "from vllm import _custom_ops as ops" in layernorm and "ops.rms_norm(" in layernorm


def test_moe_file_name_and_keys_follow_vllms_rule(vllm_wheel, built):
    out, plan = built
    fused = read(vllm_wheel, "vllm/model_executor/layers/fused_moe/fused_moe.py")
    assert 'f"E={E},N={N},device_name={device_name}{dtype_selector}.json"' in fused
    assert '.replace(" ", "_")' in fused
    name = plan.moe.file_name
    assert re.fullmatch(r"E=\d+,N=\d+,device_name=[^ ,/]+\.json", name)
    import json
    import zipfile

    with zipfile.ZipFile(vllm_wheel) as z:
        stock = [m for m in z.namelist() if m.startswith("vllm/model_executor/layers/fused_moe/configs/E=")]
        sample = json.loads(z.read(stock[0]))
    ours = json.loads((out / "vllm/moe_configs" / name).read_text())
    assert set(next(iter(ours.values()))) == set(next(iter(sample.values())))
