"""The plan's effective serve values (issue 38): read once from the serve block — the spec's, else the engine's
default — and what every step reads instead of parsing the block again."""

from __future__ import annotations

import re
from pathlib import Path

from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[3]
BASELINE = ROOT / "specs" / "baseline.muh"


def plan_of(tmp: Path, text: str):
    p = tmp / "e.muh"
    p.write_text(text, encoding="utf-8")
    return load_file(p).derived.deploy


def test_the_baseline_s_effective_values(tmp_path):
    eff = plan_of(tmp_path, BASELINE.read_text()).effective
    assert (eff.tensor_parallel_size, eff.max_num_seqs, eff.max_model_len, eff.max_num_batched_tokens, eff.port) == (
        4,
        2,
        80000,
        4096,
        8000,
    )
    assert eff.chunked_prefill and eff.prefix_prefill


def test_defaults_come_from_the_engine_and_the_long_context_rule_is_applied_once(tmp_path):
    text = re.sub(r"^ *(max_num_seqs = 2|enable_chunked_prefill = true)\b.*\n", "", BASELINE.read_text(), flags=re.M)
    plan = plan_of(tmp_path, text)
    eff = plan.effective
    assert eff.max_num_seqs == 256  # vLLM 0.6.3's default (the flag table, read from the wheel)
    assert eff.chunked_prefill  # max_model_len 80000 > 32768: vLLM turns it on by itself
    assert plan.launch.gpus == eff.tensor_parallel_size == 4 and plan.launch.port == eff.port
    short_text = text.replace("max_model_len = 80000", "max_model_len = 16384")
    # without chunked prefill vLLM wants a batch that holds a whole prompt (E-VLLM-CONFIG otherwise)
    short = plan_of(
        tmp_path, short_text.replace("max_num_batched_tokens = 4096", "max_num_batched_tokens = 16384")
    ).effective
    assert short.max_model_len == 16384 and short.chunked_prefill is False


def test_no_step_rewrites_what_others_recorded():
    """Issue 38: steps return their values (their ``tuned`` entries) instead of writing them into the shared context,
    deleting or rewriting what an earlier step recorded: no module of the vLLM derive assigns, writes an entry of,
    deletes from or updates a ``.tuned``; build_plan.merge_tuned makes the plan's ``tuned`` of the steps' entries."""
    import ast

    def is_tuned(node) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "tuned"

    def writes(node) -> bool:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            return any(is_tuned(t) or isinstance(t, ast.Subscript) and is_tuned(t.value) for t in targets)
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__")
            and is_tuned(node.func.value)
        )

    folder = ROOT / "muh" / "engines" / "vllm" / "derive"
    bad = [
        f"{path.name}:{node.lineno}"
        for path in sorted(folder.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if writes(node)
    ]
    assert bad == []  # the shared context's own `self.tuned: dict = {}` counts too


def test_a_dead_moe_point_ships_no_moe_values(tmp_path):
    from muh.engines.vllm.derive.moe import moe_tuned

    plan = plan_of(tmp_path, BASELINE.read_text())
    assert (plan.moe is None) == (not any(k.startswith("moe.") for k in plan.tuned))
    if plan.moe is not None:
        assert moe_tuned(plan.moe, load_file(BASELINE).spec.hardware[plan.hardware]).items() <= plan.tuned.items()
