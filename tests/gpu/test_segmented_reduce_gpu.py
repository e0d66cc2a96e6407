"""segmented_reduce on the GPU, on CUB's own case list (cub/test/catch2_test_device_segmented_reduce.cu,
CCCL): item counts 1, 10^6 and two random ones in between; segment sizes drawn uniformly from [0, 1],
[1, items] and [items, items] (gen_uniform_offsets: the last segment takes the rest); fixed-size
segments of random sizes in [1, 2^5], [2^5, 2^10], [2^10, 2^15], [2^15, 2^20] over at most 2^22 items;
sum, min, max, argmin, argmax each against a reference of CUB's semantics (a fold from CUB's initial
value; argmin/argmax: the first offset on ties, {1, init} for an empty segment). Offsets as int32 and
int64 arrays (begin/end pointers), non-contiguous and overlapping segments, and 64-bit offsets past 2^31.

Variants: the H200's kernels natively, the BI-V100's policies with the 64-lane warp emulated on the
32-lane GPU, and a tiny policy (64 × 2 tiles, a thread only for 2 elements, a warp for 32, a block for
256) that sends short segments through every class and long ones across many blocks. Calls of at most
`kFewSegments` segments (the policy's threads) take the one-launch path (a block per segment up to the
block bound or the grid's even share of tiles, runs of the share beyond, partials combined by the last block
of each segment): its own cases below, with every class, at the bound and one past it, called repeatedly
(its tickets must be left at zero), rows at every alignment (full tiles of a segment whose start is aligned
take vector loads) and of lengths whose even share overfills the grid (the fallback share), plus the LLM
logits rows (64 × 151936) of issue 40, aligned and not. Inputs are small integers (exact sums in every
type, many ties) and fresh each run (seed printed)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import NO_CUDA, requires_cuda  # noqa: E402

pytestmark = [requires_cuda, pytest.mark.gpu]
VARIANTS = ("h200", "bi100-emu64", "h200-tiny")
DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")
OPS = ("sum", "min", "max", "argmin", "argmax")


def configs() -> dict:
    """The kernel configs of VARIANTS, segmented_reduce only."""
    from bench import presets

    only = lambda cfg: replace(cfg, policies={"segmented_reduce": cfg.of("segmented_reduce")})  # noqa: E731
    h200 = only(presets.h200())
    tiny = {
        d: replace(p, threads=64, items=2, small_threads=64, small_items=2, warp_items=1, block_items=4)
        for d, p in h200.of("segmented_reduce").items()
    }
    return {
        "h200": h200,
        "bi100-emu64": only(presets.bi100()).emulated(64),
        "h200-tiny": replace(h200.with_policies("segmented_reduce", tiny), name="h200-tiny"),
    }


@pytest.fixture(scope="module")
def seg_kernels(tmp_path_factory):
    if NO_CUDA:
        pytest.skip(f"GPU test: {NO_CUDA}")
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    major, minor = torch.cuda.get_device_capability()
    root = tmp_path_factory.mktemp("segred")
    dirs = {}
    for name, cfg in configs().items():
        emitter.write(cfg, root / name)
        dirs[name] = root / name
    with ThreadPoolExecutor(len(dirs)) as pool:
        libs = dict(zip(dirs, pool.map(lambda d: build.build_capi(d, arch=f"sm_{major}{minor}"), dirs.values())))
    return {name: Kernels.from_library(lib, families.api()) for name, lib in libs.items()}


# ---- CUB's generators and reference --------------------------------------------------------------------

SEED = None


def _gen():
    import os

    import torch

    global SEED
    if SEED is None:
        SEED = int.from_bytes(os.urandom(4), "little")
        print(f"segmented_reduce seed {SEED}")
    g = torch.Generator()
    g.manual_seed(SEED)
    return g


def uniform_offsets(items: int, lo: int, hi: int, g) -> list[int]:
    """CUB's c2h::gen_uniform_offsets: segment sizes uniform in [lo, hi] until the items run out; the last
    segment ends at ``items``."""
    import torch

    count = int(items / max(0.5, (lo + hi) / 2) * 1.2) + 16  # enough draws to pass `items`
    sizes = torch.randint(lo, hi + 1, (count,), generator=g)
    ends = torch.cumsum(sizes, 0)
    ends = ends[ends < items]
    return [0] + ends.tolist() + [items]


def values(n: int, dtype, device, g):
    import torch

    v = torch.randint(-4, 5, (n,), generator=g).to(device)
    return v.to(dtype)


def init_of(op: str, dtype):
    import torch

    if op == "sum":
        return 0
    big = torch.finfo(dtype).max if dtype.is_floating_point else torch.iinfo(dtype).max
    low = torch.finfo(dtype).min if dtype.is_floating_point else torch.iinfo(dtype).min
    return big if op in ("min", "argmin") else low


def reference(x, begin, end, op: str):
    """CUB's result per segment: (values, offsets or None), computed with torch on the GPU."""
    import torch

    segs = begin.numel()
    b, e = begin.long(), end.long()
    n = (e - b).clamp(min=0)
    seg = torch.repeat_interleave(torch.arange(segs, device=x.device), n)
    pos = torch.repeat_interleave(b, n) + (
        torch.arange(int(n.sum()), device=x.device) - torch.repeat_interleave(torch.cumsum(n, 0) - n, n)
    )
    xv = x[pos]
    if op == "sum":
        acc = torch.float64 if x.dtype.is_floating_point else torch.int64
        out = torch.zeros(segs, dtype=acc, device=x.device).index_add_(0, seg, xv.to(acc))
        return out.to(x.dtype), None
    wide = torch.float64 if x.dtype.is_floating_point else torch.int64
    init = init_of(op, x.dtype)
    red = "amin" if op in ("min", "argmin") else "amax"
    m = torch.full((segs,), init, dtype=wide, device=x.device).scatter_reduce(0, seg, xv.to(wide), red)
    if not op.startswith("arg"):
        return m.to(x.dtype), None
    hit = xv.to(wide) == m[seg]
    first = torch.full((segs,), 1 << 62, dtype=torch.int64, device=x.device)
    first.scatter_reduce_(0, seg[hit], (pos - torch.repeat_interleave(b, n))[hit], "amin")
    # CUB folds from {1, init}: the smallest (value, offset) pair wins, so where the extreme is init's value
    # the offset is at most 1, and an empty segment (or none reaching init) gives {1, init}
    first = torch.where(m == init, first.clamp(max=1), first)
    return m.to(x.dtype), first


def check(kern, x, begin, end, op: str, what: str):
    import torch

    from muh.families import calls

    got = calls.segmented_reduce(x, begin, end, op, kernels=kern)
    want, want_key = reference(x, begin, end, op)
    torch.cuda.synchronize()
    vals, key = got if op.startswith("arg") else (got, None)
    bad = torch.nonzero(vals.to(torch.float64) != want.to(torch.float64)).flatten()
    assert not bad.numel(), (
        f"{what} {op} (seed {SEED}): {bad.numel()} of {want.numel()} segments differ, first "
        f"{int(bad[0])} [{int(begin[bad[0]])}, {int(end[bad[0]])}): "
        f"{vals[bad[0]].item()} vs {want[bad[0]].item()}"
    )
    if want_key is not None:
        badk = torch.nonzero(key != want_key).flatten()
        assert not badk.numel(), (
            f"{what} {op} (seed {SEED}): {badk.numel()} offsets differ, first segment "
            f"{int(badk[0])}: {int(key[badk[0]])} vs {int(want_key[badk[0]])}"
        )


def _torch_dtype(name):
    import torch

    return getattr(torch, name)


# ---- CUB's cases: "Device reduce works with all device interfaces" -------------------------------------


def _item_counts(g) -> list[int]:
    import torch

    return [1, 1_000_000] + [int(torch.randint(1, 1_000_001, (1,), generator=g)) for _ in range(2)]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("offsets", ("int32", "int64"))
def test_cub_uniform_segments(seg_kernels, variant, dtype, offsets):
    import torch

    g = _gen()
    for items in _item_counts(g):
        x = values(items, _torch_dtype(dtype), "cuda", g)
        for lo, hi in ((0, 1), (1, items), (items, items)):
            offs = torch.tensor(uniform_offsets(items, lo, hi, g), dtype=_torch_dtype(offsets), device="cuda")
            for op in OPS:
                check(
                    seg_kernels[variant],
                    x,
                    offs[:-1],
                    offs[1:],
                    op,
                    f"{variant} {dtype} {offsets} items={items} sizes=[{lo},{hi}]",
                )


# ---- CUB's cases: "Device fixed size segmented reduce works with all device interfaces" ----------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cub_fixed_size_segments(seg_kernels, variant, dtype):
    import torch

    g = _gen()
    max_items = 1 << 22
    for lo, hi in ((1, 1 << 5), (1 << 5, 1 << 10), (1 << 10, 1 << 15), (1 << 15, 1 << 20)):
        for _ in range(2):
            size = int(torch.randint(lo, hi + 1, (1,), generator=g))
            segs = max_items // size
            x = values(segs * size, _torch_dtype(dtype), "cuda", g)
            offs = torch.arange(segs + 1, device="cuda", dtype=torch.int32) * size
            for op in OPS:
                check(seg_kernels[variant], x, offs[:-1], offs[1:], op, f"{variant} {dtype} segment size {size}")


# ---- beyond the contiguous layout: begin/end arrays CUB accepts ----------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_gaps_overlaps_and_empty_segments(seg_kernels, variant):
    """Segments anywhere in the input (gaps, overlaps, end < begin is empty), of every class at once."""
    import torch

    g = _gen()
    n = 3_000_000
    x = values(n, torch.float32, "cuda", g)
    sizes = torch.cat(
        [
            torch.randint(0, 12, (20000,), generator=g),
            torch.randint(12, 5000, (2000,), generator=g),
            torch.randint(5000, 400_000, (6,), generator=g),
            torch.tensor([n, 0, -5]),
        ]
    )
    begin = (torch.rand(sizes.numel(), generator=g) * (n - sizes.clamp(min=0))).long()
    end = begin + sizes
    perm = torch.randperm(sizes.numel(), generator=g)
    begin, end = begin[perm].cuda(), end[perm].cuda()
    for offsets in (torch.int32, torch.int64):
        for op in OPS:
            check(seg_kernels[variant], x, begin.to(offsets), end.to(offsets), op, f"{variant} {offsets}")


def test_64_bit_offsets_past_2_31(seg_kernels):
    """int64 offsets addressing elements past 2^31 (CUB's large-offset case): int32 values, 2^31 + 2^20,
    against torch over each segment's slice (argmin/argmax: torch's first index of the extreme)."""
    import torch

    from muh.families import calls

    if torch.cuda.get_device_properties(0).total_memory < 16 << 30:
        pytest.skip("needs 16 GiB of GPU memory")
    n = (1 << 31) + (1 << 20)
    x = torch.randint(-4, 5, (n,), dtype=torch.int32, device="cuda")
    spans = [
        (0, n),
        ((1 << 31) - 100, (1 << 31) + 100),
        ((1 << 31) + 5, (1 << 31) + 700_000),
        (1000, (1 << 31) + 10),
        (n - 3, n),
        (n, n),
    ]
    begin = torch.tensor([b for b, _ in spans], dtype=torch.int64, device="cuda")
    end = torch.tensor([e for _, e in spans], dtype=torch.int64, device="cuda")
    for op in OPS:
        got = calls.segmented_reduce(x, begin, end, op, kernels=seg_kernels["h200"])
        vals, key = got if op.startswith("arg") else (got, None)
        for i, (b, e) in enumerate(spans):
            s = x[b:e]
            if e == b:
                want, want_key = init_of(op, torch.int32), 1
            elif op == "sum":
                want, want_key = int(s.sum(dtype=torch.int64)) & 0xFFFFFFFF, None
                want = want - (1 << 32) if want >= 1 << 31 else want  # CUB sums int32 in int32
            elif op in ("min", "argmin"):
                want, want_key = int(s.min()), int(s.argmin())
            else:
                want, want_key = int(s.max()), int(s.argmax())
            assert int(vals[i]) == want, f"{op} segment {i} [{b}, {e}): {int(vals[i])} vs {want}"
            if key is not None:
                assert int(key[i]) == want_key, f"{op} segment {i}: offset {int(key[i])} vs {want_key}"
    del x
    torch.cuda.empty_cache()


def test_bad_arguments_are_refused_before_any_kernel(seg_kernels):
    import torch

    from muh.families import calls

    x = torch.zeros(10, device="cuda")
    offs = torch.tensor([0, 5, 10], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="unknown op `median`"):
        calls.segmented_reduce(x, offs[:-1], offs[1:], "median", kernels=seg_kernels["h200"])
    with pytest.raises(ValueError, match="one dtype and length"):
        calls.segmented_reduce(x, offs[:-1], offs[1:].long(), kernels=seg_kernels["h200"])
    with pytest.raises(TypeError, match="not supported"):
        calls.segmented_reduce(x, offs[:-1].float(), offs[1:].float(), kernels=seg_kernels["h200"])


# ---- the one-launch path: at most kFewSegments segments ------------------------------------------------


def _numbers(variant: str, dtype: str) -> dict:
    """The params the variant's kernels were instantiated with (the record's, as params.cuh has them)."""
    from muh.families import segmented_reduce as rec

    cfg = configs()[variant]
    pol = cfg.of("segmented_reduce")[dtype]
    return {p.cname: p.value for p in rec.params(cfg, dtype, pol)} | {"warp": cfg.warp_size}


def _class_lengths(p: dict, g) -> list[int]:
    """One length of each class and each class's bounds: empty, a thread's, a warp's, a block's (the
    segment whole) and many blocks' (a few times the block bound)."""
    import torch

    warp, block = p["warp"] * p["kWarpItems"], p["kThreads"] * p["kBlockItems"]
    edges = [0, 1, p["kSmallItems"], p["kSmallItems"] + 1, warp, warp + 1, block, block + 1, 3 * block + 7]
    return edges + [int(torch.randint(warp + 1, block + 1, (1,), generator=g))]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", ("float32", "bfloat16", "int64"))
def test_few_segments_of_every_class_in_one_launch(seg_kernels, variant, dtype):
    """1, a few and exactly kFewSegments segments (the one-launch path) and one more (the three-launch
    path), their lengths of every class, placed anywhere in the input; int32 and int64 offsets."""
    import torch

    g = _gen()
    p = _numbers(variant, dtype)
    few = p["kFewSegments"]
    lens = _class_lengths(p, g)
    for count in (1, len(lens), few, few + 1):
        sizes = torch.tensor([lens[i % len(lens)] for i in range(count)])[torch.randperm(count, generator=g)]
        n = int(sizes.max()) * 2 + 64
        x = values(n, _torch_dtype(dtype), "cuda", g)
        begin = (torch.rand(count, generator=g) * (n - sizes)).long()
        for offsets in (torch.int32, torch.int64):
            b, e = begin.to(offsets).cuda(), (begin + sizes).to(offsets).cuda()
            for op in OPS:
                check(seg_kernels[variant], x, b, e, op, f"{variant} {dtype} {count} segments {offsets}")


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_launch_path_leaves_its_tickets_at_zero(seg_kernels, variant):
    """A split segment's blocks count themselves on a ticket the last one resets: the same call again, and
    again after a three-launch call on the same workspace, gives every segment (output poisoned first)."""
    import torch

    from muh.families import calls

    g = _gen()
    p = _numbers(variant, "float32")
    block = p["kThreads"] * p["kBlockItems"]
    sizes = torch.tensor([5 * block + 3, block + 1, 17, 0, 2 * block])
    n = int(sizes.sum())
    x = values(n, torch.float32, "cuda", g)
    offs = torch.zeros(sizes.numel() + 1, dtype=torch.int64)
    offs[1:] = torch.cumsum(sizes, 0)
    offs = offs.cuda()
    want, _ = reference(x, offs[:-1], offs[1:], "sum")
    many = torch.arange(0, n + 1, max(1, n // (p["kFewSegments"] + 5)), device="cuda")
    kern = seg_kernels[variant]
    for round_ in range(3):
        out = torch.full((sizes.numel(),), float("nan"), device="cuda")
        calls.segmented_reduce(x, offs[:-1], offs[1:], "sum", out=out, kernels=kern)
        torch.cuda.synchronize()
        assert torch.equal(out, want), f"{variant} round {round_}: {out.tolist()} vs {want.tolist()}"
        calls.segmented_reduce(x, many[:-1], many[1:], "sum", kernels=kern)  # the other path in between


@pytest.mark.parametrize("dtype", ("float32", "bfloat16"))
def test_llm_logits_rows(seg_kernels, dtype):
    """Issue 40's row: 64 rows × 151936 (a vocabulary of logits), H200 kernels: one launch, each row split
    into runs over the grid; rows starting aligned (vector loads) and one element further (scalar loads);
    sum, max and argmax of each row against torch."""
    import torch

    g = _gen()
    rows, cols = 64, 151936
    x = values(rows * cols + 1, _torch_dtype(dtype), "cuda", g)
    for shift in (0, 1):
        offs = torch.arange(rows + 1, device="cuda", dtype=torch.int32) * cols + shift
        for op in ("sum", "max", "argmax"):
            check(seg_kernels["h200"], x, offs[:-1], offs[1:], op, f"logits rows {dtype} from element {shift}")


@pytest.mark.parametrize("dtype", ("float32", "int64"))
def test_one_launch_rows_at_every_alignment_and_share(seg_kernels, dtype):
    """kFewSegments rows of the H200 kernels, one launch, of t tiles each (t = 1, 5, 33, 37, 65: for any
    plausible count of resident blocks R some t makes the even share give more units than blocks — e.g. R = 528,
    an H100's or H200's 4 blocks a SM at 132 SMs: 33 tiles, share 16, 3 runs a row — so the fallback share
    runs), whole tiles or 3 elements short (a partial last tile, and rows starting at every alignment), from
    element 0 or 1 (vector loads where a row's start is aligned, scalar ones elsewhere, in one launch);
    sum and argmax (ties everywhere: the first offset across runs and within each vector)."""
    import torch

    g = _gen()
    p = _numbers("h200", dtype)
    rows, tile = p["kFewSegments"], p["kThreads"] * p["kItems"]
    x = values(rows * 65 * tile + 1, _torch_dtype(dtype), "cuda", g)
    for t in (1, 5, 33, 37, 65):
        for short in (0, 3):
            n = t * tile - short
            for shift in (0, 1):
                offs = torch.arange(rows + 1, device="cuda", dtype=torch.int64) * n + shift
                for op in ("sum", "argmax"):
                    check(seg_kernels["h200"], x, offs[:-1], offs[1:], op, f"{dtype} {rows} rows of {n} from {shift}")
