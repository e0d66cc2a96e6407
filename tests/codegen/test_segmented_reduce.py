"""The segmented_reduce family without a GPU: its policy and sub-policies from both bundled specs, the numbers
its kernel is instantiated with (each with its rule), what derive refuses, and the Python entry point's
argument checks. Its kernels on the GPU: tests/gpu/test_segmented_reduce_gpu.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


# ---- the plan: which class each segment lands in and how many launches a call takes (nvcc, no GPU) ------

PLAN_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "muh/kernels/params.cuh"
#include "muh/kernels/segmented_reduce.cuh"

namespace pr = muh::params::segmented_reduce_%(dtype)s;
struct P {
  enum {
    kThreads = pr::kThreads, kItems = pr::kItems, kSmallItems = pr::kSmallItems, kWarpItems = pr::kWarpItems,
    kBlockItems = pr::kBlockItems, kFewSegments = pr::kFewSegments, kMaxGrid = muh::params::kSegmentedReduceMaxGrid
  };
};

// argv[1]: the blocks few_kernel is launched with; stdin: segment lengths. Composes the kernel's pure
// functions as few_kernel does: the total tiles, the even share, each segment's units, and the fallback share
// where the even one gives more units than blocks. Prints the launches, the share, whether it fell back,
// then each segment's class, tiles and units.
int main(int argc, char** argv) {
  using namespace muh::segmented_reduce_impl;
  const long long blocks = atoll(argv[1]);
  std::vector<long long> n;
  long long x;
  while (scanf("%%lld", &x) == 1) n.push_back(x);
  long long tiles = 0;
  for (long long v : n) tiles += tiles_of<P>(v);
  long long per = share_of(tiles, blocks), units = 0;
  for (long long v : n) units += units_of<P>(v, per);
  const int fell_back = units > blocks;
  if (fell_back) per = fallback_share_of(tiles, (long long)n.size(), blocks);
  printf("launches %%d per %%lld fallback %%d\n", launches<P>((long long)n.size()), per, fell_back);
  for (long long v : n) printf("%%d %%lld %%lld\n", class_of<P>(v), tiles_of<P>(v), units_of<P>(v, per));
  return 0;
}
"""
CLASSES = ("thread", "warp", "block", "many")


@pytest.fixture(scope="module")
def plan(nvcc, tmp_path_factory):
    """plan(lengths, blocks) -> (launches, per, [(class, tiles, units)]) of the H200 spec's float32 policy
    (``plan.fallback``: whether the last call fell back to the share of the blocks beyond one a segment), and
    that policy's numbers (params.cuh)."""
    import subprocess

    root = tmp_path_factory.mktemp("segplan")
    cfg = presets.h200()
    emitter.write(cfg, root)
    src = root / "plan.cu"
    src.write_text(PLAN_MAIN % {"dtype": "float32"})
    exe = root / "plan"
    subprocess.run(
        [nvcc, "-std=c++17", "-arch=sm_90", "-I", str(root / "include"), str(src), "-o", str(exe)],
        check=True,
        capture_output=True,
        text=True,
    )

    def run(lengths, blocks):
        out = subprocess.run(
            [str(exe), str(blocks)], input=" ".join(map(str, lengths)), capture_output=True, text=True, check=True
        ).stdout.split("\n")
        head = out[0].split()
        rows = [tuple(int(v) for v in line.split()) for line in out[1:] if line]
        run.fallback = bool(int(head[5]))
        return int(head[1]), int(head[3]), [(CLASSES[c], t, u) for c, t, u in rows]

    text = (root / "include/muh/kernels/params.cuh").read_text()
    block = re.search(r"namespace segmented_reduce_float32 \{(.*?)\}", text, re.S).group(1)
    nums = {k: int(v) for k, v in re.findall(r"constexpr int (k\w+) = (\d+);", block)}
    nums["warp"] = cfg.warp_size
    return run, nums


def _check_plan(lengths, blocks, launches, per, rows, tile, bound, fallback):
    """What few_kernel relies on: units at most the launch's blocks; a segment whole (one unit) only when its
    tiles are at most `per` or it is no longer than the block bound; a split one in runs of `per` tiles, the
    last one shorter, that cover its tiles; the even share of all tiles over the blocks unless that gave more
    units than blocks, then the share of the blocks beyond one a segment."""
    assert launches == 1
    tiles = sum(t for _, t, _ in rows)
    assert sum(u for _, _, u in rows) <= blocks
    if fallback:
        assert per == (max(1, -(-tiles // (blocks - len(lengths)))) if blocks > len(lengths) else max(tiles, 1))
    else:
        assert per == max(1, -(-tiles // blocks))
    for (c, t, u), n in zip(rows, lengths):
        assert t == -(-n // tile)
        if t <= per or n <= bound:
            assert u == 1, (n, t, per)
        else:
            assert c == "many" and u >= 2 and (u - 1) * per < t <= u * per, (n, t, per, u)


@pytest.mark.nvcc
def test_llm_logits_rows_are_split_over_the_grid_in_one_launch(plan):
    """Issue 40's missed row: 64 rows × 151936 float32 (the H200 spec's policy) is one launch; a row is longer
    than the block bound (one tile) and than the even share of the resident blocks, so each is split into runs
    of `per` tiles over the grid (an H100: 4 blocks of few_kernel a SM, 528 blocks: 8 runs of 5 tiles a row,
    512 units); only a launch of as few blocks as rows keeps each whole."""
    run, p = plan
    tile, bound = p["kThreads"] * p["kItems"], p["kThreads"] * p["kBlockItems"]
    assert bound < 151936 and 64 <= p["kFewSegments"]  # the premise, from params
    lengths = [151936] * 64
    launches, per, rows = run(lengths, 4 * 132)
    assert (per, {c for c, _, _ in rows}, sum(u for _, _, u in rows)) == (5, {"many"}, 512)
    _check_plan(lengths, 4 * 132, launches, per, rows, tile, bound, run.fallback)
    for blocks in (5 * 132, 1056, 200, 64):  # more resident blocks, fewer, one a row
        launches, per, rows = run(lengths, blocks)
        _check_plan(lengths, blocks, launches, per, rows, tile, bound, run.fallback)
        assert all(u == (1 if blocks == 64 else -(-38 // per)) for _, _, u in rows)


@pytest.mark.nvcc
def test_each_length_lands_in_its_class_at_the_policy_s_bounds(plan):
    run, p = plan
    warp = p["warp"] * p["kWarpItems"]
    block = p["kThreads"] * p["kBlockItems"]
    small = p["kSmallItems"]
    lengths = [0, 1, small, small + 1, warp, warp + 1, block, block + 1]
    _, _, rows = run(lengths, 1000)
    assert [c for c, _, _ in rows] == ["thread", "thread", "thread", "warp", "warp", "block", "block", "many"]
    assert all(u == 1 for c, _, u in rows if c != "many")  # up to a block: the segment whole


@pytest.mark.nvcc
def test_long_segments_are_shared_over_the_grid_in_one_launch(plan):
    """A few long segments (4 × 2^24, one 10^8, a mix) are split into runs of the grid's even share of tiles:
    at most the launch's blocks, each run at most `per` tiles, all tiles covered; a segment within the share
    stays whole."""
    run, p = plan
    tile, bound = p["kThreads"] * p["kItems"], p["kThreads"] * p["kBlockItems"]
    for lengths, blocks in (
        ([1 << 24] * 4, 1056),
        ([100_000_000], 1056),
        ([1 << 24, 151936, 3, 0], 500),
        ([1 << 20] * 64, 528),
        ([5 * tile, 3 * tile + 1, tile + 1, 7], 8),
    ):
        launches, per, rows = run(lengths, blocks)
        _check_plan(lengths, blocks, launches, per, rows, tile, bound, run.fallback)
        assert not run.fallback and blocks // 2 <= sum(u for _, _, u in rows)


@pytest.mark.nvcc
def test_a_share_that_gives_too_many_units_falls_back_within_the_blocks(plan):
    """Segments of one tile more than the even share would each take two units (a run and a short one):
    more than the blocks (a second wave, or too few blocks). The plan then sizes runs for the blocks beyond one
    a segment, and with none to spare keeps every segment whole (the launch has a block a segment)."""
    run, p = plan
    tile, bound = p["kThreads"] * p["kItems"], p["kThreads"] * p["kBlockItems"]
    for lengths, blocks in (([3 * tile] * 60, 100), ([3 * tile] * 60 + [0, 5], 101), ([tile] * 39 + [3 * tile], 40)):
        launches, per, rows = run(lengths, blocks)
        assert run.fallback, (lengths[:1], blocks)
        _check_plan(lengths, blocks, launches, per, rows, tile, bound, run.fallback)
    # the even share alone would have given 120 units for 100 blocks: the check above is not vacuous
    assert sum(-(-3 // 2) for _ in range(60)) > 100


@pytest.mark.nvcc
def test_many_segments_take_the_three_launch_path(plan):
    run, p = plan
    few = p["kFewSegments"]
    assert run([5] * few, 1000)[0] == 1
    assert run([5] * (few + 1), 1000)[0] == 3
    assert run([], 1000)[0] == 0


@pytest.mark.nvcc
def test_tune_measures_both_paths_for_every_candidate(plan):
    """`muh tune specs/h200.muh segmented_reduce` measures segments of the harness's length at the tune
    sizes: the smaller sizes are few segments (the one-launch path, each segment a block), the larger ones
    many (the three-launch path) — for the spec's policy (its plan) and for every candidate of the space
    (each one's kFewSegments, from the record's params), so a winner is chosen on both."""
    from muh.families import registry
    from muh.pipeline import load_file
    from muh.tune.space import build_space, effective, static_filter
    from muh.tune.stats import SIZES

    run, _ = plan
    seg_len = registry.get("segmented_reduce").harness.shape[0]
    counts = [n // seg_len for n in SIZES]
    paths = [run([seg_len] * c, 1000)[0] for c in counts]
    assert 1 in paths and 3 in paths
    assert {c for c, _, _ in run([seg_len], 1000)[2]} <= {"warp", "block"}  # a segment whole
    sp = build_space(load_file(SPECS / "h200.muh").spec, "segmented_reduce", "float32")
    kept, _ = static_filter(sp)
    assert len(kept) > 1
    for v in kept:
        few = dict(effective(v, sp).params)["kFewSegments"]
        assert [1 if c <= few else 3 for c in counts] == paths, v.label()
