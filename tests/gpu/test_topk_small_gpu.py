"""topk's small-row path on the GPU: rows of at most the policy's `warp_cols` columns are selected by
one warp each (topk_warp_kernel), with the same result as torch's stable descending sort, bit for bit:
values, indices, ties to the lower index, -0.0 equal to +0.0, NaN above +inf (all NaNs equal).

Built from the bundled specs' own topk policies (specs/h200.muh natively at warp 32, specs/baseline.muh
with its 64-lane warp emulated on the 32-lane GPU, and at 16 and 128 lanes), topk kernels only. Cases
cover the path's edges: k = 1, k = the row, the largest k and row it takes and one past each (the
one-block kernel then), rows that leave warps of the last block idle, odd row lengths and an
unaligned input (scalar loads), ties, all-equal rows and sampling masks (-inf, NaN). One test asks
the profiler which kernel ran, so a launcher that never takes the path fails here too.

At 128 lanes emulated (4 hardware warps a logical warp) the build has no small-row path (the topk record's
MAX_EMULATED_PARTS: the warp kernel faulted there in the test run, cause not found); the same shapes then
check the one-block kernel, and a test checks that the path is off there and on everywhere else."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]

VARIANTS = ("h200", "bi100-emu64", "bi100-emu16", "bi100-emu128")


def _topk_only(cfg, name: str):
    """``cfg`` with topk's policies (and buckets) alone: the test builds one family's kernels."""
    keep = lambda table: {f: v for f, v in table.items() if f == "topk"}  # noqa: E731
    return replace(
        cfg, policies=keep(cfg.policies), buckets=keep(cfg.buckets), bucket_keys=keep(cfg.bucket_keys), name=name
    )


def configs() -> dict:
    from bench import presets

    bi = presets.bi100()
    return {
        "h200": _topk_only(presets.h200(), "h200-topk"),
        "bi100-emu64": _topk_only(bi.emulated(64), "bi100-topk-emu64"),
        "bi100-emu16": _topk_only(bi.emulated(16), "bi100-topk-emu16"),
        "bi100-emu128": _topk_only(bi.emulated(128), "bi100-topk-emu128"),
    }


# builds whose policies take the small-row path (the others: none, MAX_EMULATED_PARTS)
WITH_PATH = ("h200", "bi100-emu64", "bi100-emu16")


def warp_limits(cfg, dtype: str, k: int) -> tuple[int, int]:
    """(longest row, largest k) of the small-row path of the policy ``muh_topk`` picks for ``k``, as the
    topk record derives them for this build (kWarpCols, kWarpMaxK; 0: no path)."""
    from muh.families import topk

    for lo, hi, pol in cfg.buckets_of("topk", dtype):
        if cfg.bucket_key("topk", dtype) != "k" or lo <= k and (hi is None or k < hi):
            return topk.warp_cols(cfg, pol)[0], topk.warp_max_k(cfg, pol)
    raise AssertionError(f"no bucket of topk.{dtype} takes k={k}")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    cfgs = configs()
    root = tmp_path_factory.mktemp("topk-small")
    for name, cfg in cfgs.items():
        emitter.write(cfg, root / name)
    major, minor = torch.cuda.get_device_capability()
    with ThreadPoolExecutor(max_workers=len(cfgs)) as pool:
        libs = dict(zip(cfgs, pool.map(lambda n: build.build_capi(root / n, arch=f"sm_{major}{minor}", jobs=2), cfgs)))
    return {n: (cfgs[n], Kernels.from_library(p, families.api())) for n, p in libs.items()}


def _cases(cfg, dtype: str) -> list[tuple[int, int, int]]:
    """(rows, row length, k): the small-row path's edges for this build's policy, and one past them (a build
    without the path: the edges it has at warp 64)."""
    cols, max_k = warp_limits(cfg, dtype, 8)
    if not cols:
        cols, max_k = 1024, 512
    rows_per_block = cfg.of("topk")[dtype].threads // cfg.warp_size
    return [
        (4096, 256, 8),  # the MoE router's shape
        (3, 256, 1),
        (5, 64, 64),
        (2, min(cols, max_k), min(cols, max_k)),  # k = 1, k = the row
        (1, 1, 1),
        (rows_per_block + 1, 129, 5),  # one column; a last block with idle warps
        (3, 33, 17),
        (2, cols - 1, 100),  # odd lengths: scalar loads
        (2, cols, 8),
        (2, cols, max_k),  # the longest row and the largest k it takes
        (2, cols + 1, 8),
        (2, max(max_k + 1, 300), max_k + 1),
    ]  # one past each: the one-block kernel


def _check(k_, x, k: int, where: str):
    import gpu_helpers as refs
    import torch

    from muh.families import calls

    rows = x.shape[0]
    vals = refs.poison(torch.empty((rows, k), dtype=x.dtype, device="cuda"))
    idx = torch.full((rows, k), -1, dtype=torch.int64, device="cuda")
    calls.topk(x, k, out=(vals, idx), kernels=k_)
    ref = torch.sort(x, dim=1, descending=True, stable=True)
    bits = {torch.float32: torch.int32}.get(x.dtype, torch.int16)
    want = ref.values[:, :k].contiguous()
    assert torch.equal(vals.view(bits), want.view(bits)), f"values (bit for bit): {where} (seed {refs.SEED})"
    assert torch.equal(idx, ref.indices[:, :k]), f"indices (ties to the lower index): {where} (seed {refs.SEED})"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_small_rows_match_the_stable_sort(built, variant, dtype):
    import gpu_helpers as refs

    cfg, k_ = built[variant]
    for rows, cols, k in _cases(cfg, dtype):
        for data in ("normal", "ties", "equal"):
            x = refs.normal(rows * cols, dtype).reshape(rows, cols)
            if data == "ties":  # few distinct values, -0.0 beside +0.0: the tie rule decides most of the output
                x = (x * 2).round().clamp(-3, 3)
            elif data == "equal":
                x = x[:, :1].expand(rows, cols).contiguous()
            _check(k_, x, k, f"{variant} {dtype} {rows}x{cols} k={k} {data}")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_small_rows_masked_and_unaligned(built, variant, dtype):
    """Sampling masks (mostly -inf, NaN in some rows, fewer finite values than k), signed zeros and
    +inf; and an input 2 bytes past a 16-byte boundary (the path's scalar loads)."""
    import gpu_helpers as refs
    import torch

    cfg, k_ = built[variant]
    for rows, cols, k in [(64, 256, 8), (9, 200, 64), (5, 256, 1)]:
        x = refs.normal(rows * cols, dtype).reshape(rows, cols)
        keep = torch.rand(rows, cols, device="cuda", generator=refs.gen()) < 0.03
        x = torch.where(keep, x, torch.full_like(x, -float("inf")))
        x[0, 3::17] = float("nan")
        x[1, 5::7] = float("nan")
        x[2, :] = 0.0
        x[2, 1::3] = -0.0
        x[3, 7] = float("inf")
        _check(k_, x, k, f"{variant} {dtype} {rows}x{cols} k={k} masked")
        buf = refs.normal(rows * cols + 1, dtype)
        x = buf[1:].view(rows, cols)
        assert x.data_ptr() % 16, "the input must be unaligned"
        _check(k_, x, k, f"{variant} {dtype} {rows}x{cols} k={k} unaligned")


def test_the_path_is_on_where_verified(built):
    """The bundled specs' policies give every build the path for the router's rows (256 columns, k = 8),
    except the 128-lane emulation."""
    for variant, (cfg, _) in built.items():
        for dtype in ("float32", "float16", "bfloat16"):
            cols, max_k = warp_limits(cfg, dtype, 8)
            if variant in WITH_PATH:
                assert cols >= 256 and max_k >= 8, f"{variant} topk.{dtype}: no small-row path for 256 columns"
            else:
                assert cols == 0, f"{variant} topk.{dtype}: the small-row path is on"


@pytest.mark.parametrize("variant", ["h200", "bi100-emu64", "bi100-emu128"])
def test_short_rows_run_the_warp_kernel(built, variant):
    """Which kernel ran (the profiler's CUDA kernel names): a row the policy's warp_cols covers takes
    topk_warp_kernel, a longer one the one-block topk_kernel."""
    import gpu_helpers as refs
    import torch
    from torch.profiler import ProfilerActivity, profile

    from muh.families import calls

    cfg, k_ = built[variant]
    cols, _ = warp_limits(cfg, "float32", 8)

    def kernels_of(rows: int, row: int) -> set[str]:
        x = refs.normal(rows * row, "float32").reshape(rows, row)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            calls.topk(x, 8, kernels=k_)
            torch.cuda.synchronize()
        names = {e.name for e in prof.events() if "topk" in e.name}
        if not names:
            pytest.skip("the profiler recorded no kernels on this machine (CUPTI)")
        return names

    warp = lambda names: any("topk_warp_kernel" in n for n in names)  # noqa: E731
    block = lambda names: any("topk_kernel" in n.replace("topk_warp_kernel", "") for n in names)  # noqa: E731
    if variant not in WITH_PATH:  # no small-row path: the router's rows take the one-block kernel
        short = kernels_of(4096, 256)
        assert block(short) and not warp(short), short
        return
    short, long_ = kernels_of(4096, min(256, cols)), kernels_of(4, cols + 1)
    assert warp(short) and not block(short), short
    assert block(long_) and not warp(long_), long_
