"""The segmented_reduce family without a GPU: its policy and sub-policies from both bundled specs, the numbers
its kernel is instantiated with (each with its rule), what derive refuses, and the Python entry point's
argument checks. Its kernels on the GPU: tests/gpu/test_segmented_reduce_gpu.py."""

from __future__ import annotations

import re
from pathlib import Path

from bench import presets
from muh.codegen.base import BuildContext
from muh.codegen.kernels import emitter
from muh.derive import derive
from muh.derive import kernels as derive_kernels
from muh.schema import load

SPECS = Path(__file__).resolve().parents[2] / "specs"


def _ctx(name: str, edit) -> BuildContext:
    path = SPECS / name
    spec = load(edit(path.read_text()), str(path))
    return BuildContext(spec=spec, derived=derive(spec), options={})


def test_sub_policies_come_from_the_specs():
    h = presets.h200().of("segmented_reduce")
    assert (
        h["float32"].threads,
        h["float32"].items,
        h["float32"].small_threads,
        h["float32"].small_items,
        h["float32"].warp_items,
    ) == (256, 16, 256, 8, 32)
    assert h["float64"].items == 8  # CUB's MemBoundScaling of the tile pass; the sub-policies are not scaled
    assert (h["float64"].small_items, h["float64"].warp_items) == (8, 32)
    b = presets.bi100().of("segmented_reduce")
    assert {(p.small_threads, p.small_items, p.warp_items) for p in b.values()} == {(256, 8, 16)}


def test_params_say_where_each_number_came_from():
    text = dict(emitter.generate(presets.h200()))["include/muh/kernels/params.cuh"]
    block = re.search(r"namespace segmented_reduce_float32 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kSmallThreads = 256;  // policy small.threads" in block
    assert "constexpr int kSmallItems = 8;  // policy small.items" in block
    assert "constexpr int kWarpItems = 32;  // policy warp.items" in block
    assert "constexpr int kSegmentedReduceMaxGrid = 4096;" in text


def test_a_policy_without_sub_policies_says_its_defaults():
    """nvidia.muh's CUB-parity policies have no sub-policies: params.cuh says the defaults it used."""

    def drop_subs(text: str) -> str:
        at = text.index("algorithm segmented_reduce on h200")
        return text[:at] + re.sub(r"    (small|warp) \{[^}]*\}\n", "", text[at:])

    ctx = _ctx("h200.muh", drop_subs)
    [t] = derive_kernels.targets(ctx.spec, ctx.derived)[0]
    text = dict(emitter.generate(t.config))["include/muh/kernels/params.cuh"]
    block = re.search(r"namespace segmented_reduce_float32 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kSmallThreads = 256;  // policy threads (no small.threads)" in block
    assert "constexpr int kSmallItems = 8;  // default: 8 (no small.items)" in block
    assert "constexpr int kWarpItems = 32;  // default: 32 (no warp.items)" in block


def test_a_small_block_the_kernels_cannot_take_is_refused_with_its_place():
    """small.threads must be whole 64-lane warps on the BI-V100 (validate, at the value) and no larger than
    the tile pass's block (derive: E-KERNELS at the hardware; the warp layer's exchange is sized by it)."""
    import pytest

    from muh.diagnostics import MuhError

    def small(threads: int):
        def edit(text: str) -> str:
            at = text.index("algorithm segmented_reduce on bi100")
            i = text.index("small { threads = 256", at)
            return text[:i] + f"small {{ threads = {threads}" + text[i + len("small { threads = 256") :]

        return edit

    with pytest.raises(MuhError, match="threads = 96 is not a multiple of warp_size = 64"):
        _ctx("baseline.muh", small(96))
    ctx = _ctx("baseline.muh", small(512))
    found, diags = derive_kernels.targets(ctx.spec, ctx.derived)
    assert found == [] and [d.code for d in diags] == ["E-KERNELS"]
    assert "segmented_reduce.float32: small.threads=512 is more than threads=256" in diags[0].message
    assert diags[0].span == ctx.spec.span_of(("hardware", "bi100"))
