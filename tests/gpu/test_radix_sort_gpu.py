"""radix_sort on the GPU: the H200's kernels natively (warp 32) and the BI-V100's (its policies, warp 64)
emulated on the 32-lane GPU, bit for bit against a stable reference order computed with torch.

The cases are CUB's own lists (CCCL cub/test/catch2_test_device_radix_sort_keys.cu and
catch2_test_device_radix_sort_pairs.cu, https://github.com/NVIDIA/cccl/tree/main/cub/test): sizes 0, 1, a
random size, and 500, 10^6, 2*10^6; ascending and descending; bit windows begin, end in {0, bits/3, 3 bits/4,
bits} (begin <= end, not the full range) on 2^17..2^18 keys; keys of every integer and floating type; values
moved with their keys. Floating point keys include -0.0, +0.0, +-inf and NaNs of both signs: CUB orders by the
bits (-NaN first, +NaN last ascending), with -0.0 and +0.0 equal (their input order kept). The reference sorts
the same digit (bits [begin, end) of the order-preserving transform) with torch.sort(stable=True) on int64.
Only radix_sort is built (the other families' sources compile empty)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import NO_CUDA, requires_cuda  # noqa: E402

pytestmark = requires_cuda
VARIANTS = ("h200", "bi100-emu64")
KEYS = (
    "int8",
    "uint8",
    "int16",
    "uint16",
    "float16",
    "bfloat16",
    "int32",
    "uint32",
    "float32",
    "int64",
    "uint64",
    "float64",
)
SIZES = (0, 1, 500, 7777, 1_000_000, 2_000_000)  # CUB: 0, 1, random(1, 10^6) (here 7777), 500, 10^6, 2*10^6


def windows_of(bits):
    return [
        (b, e)
        for b in (0, bits // 3, 3 * bits // 4, bits)
        for e in (0, bits // 3, 3 * bits // 4, bits)
        if e >= b and not (b == 0 and e == bits)
    ]


def configs() -> dict:
    from bench import presets

    only = lambda cfg: replace(cfg, policies={"radix_sort": cfg.of("radix_sort")}, buckets={}, bucket_keys={})  # noqa
    return {"h200": only(presets.h200()), "bi100-emu64": only(presets.bi100()).emulated(64)}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    if NO_CUDA:
        pytest.skip(f"GPU test: {NO_CUDA}")
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    major, minor = torch.cuda.get_device_capability()
    root = tmp_path_factory.mktemp("radix")
    for name, cfg in configs().items():
        emitter.write(cfg, root / name)
    with ThreadPoolExecutor(len(VARIANTS)) as pool:
        libs = dict(zip(VARIANTS, pool.map(lambda n: build.build_capi(root / n, arch=f"sm_{major}{minor}"), VARIANTS)))
    return {n: Kernels.from_library(lib, families.api()) for n, lib in libs.items()}


def _bits_view(x):
    import torch

    return x.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])


def keys_of(name: str, n: int, seed: int, low_entropy: bool = False):
    """Fresh keys of type ``name``: random bits (every bit pattern, NaNs included, for floats), and for float
    keys a sprinkle of -0.0, +0.0, +-inf and NaNs of both signs."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = getattr(torch, name)
    size = torch.empty(0, dtype=dt).element_size()
    raw = torch.randint(-(1 << 62), 1 << 62, (n,), generator=g, device="cuda", dtype=torch.int64)
    if low_entropy:
        raw = raw & torch.randint(-(1 << 62), 1 << 62, (n,), generator=g, device="cuda", dtype=torch.int64)
        raw = raw & 0x0F0F0F0F0F0F0F0F
    raw = raw.view(torch.uint8)[: n * size].clone() if size < 8 else raw
    x = raw.view(dt) if size < 8 else raw.view(dt)
    x = x[:n].contiguous()
    if dt.is_floating_point and n:
        specials = torch.tensor([-0.0, 0.0, float("inf"), -float("inf"), float("nan")], dtype=dt, device="cuda")
        pick = torch.randint(0, 40, (n,), generator=g, device="cuda")
        x = torch.where(pick < 5, specials[pick.clamp(max=4)], x) if n > 16 else x
        neg_nan = torch.tensor([float("nan")], dtype=dt, device="cuda")
        neg_nan = (_bits_view(neg_nan) | _bits_view(torch.tensor([-0.0], dtype=dt, device="cuda"))).view(dt)
        if n > 3:
            x[n // 3] = neg_nan[0]
    return x


def ordered(x, descending: bool):
    """The order-preserving bits of ``x`` as int64 in signed order (CUB's transform; -0.0 as +0.0; flipped for
    a descending sort), and the key width."""
    import torch

    bits = 8 * x.element_size()
    b = _bits_view(x).to(torch.int64) & ((1 << bits) - 1 if bits < 64 else -1)  # unsigned bits (64: as int64)
    high = 1 << (bits - 1) if bits < 64 else -(1 << 63)
    mask = (1 << bits) - 1 if bits < 64 else -1
    if x.dtype.is_floating_point:
        mz = high  # -0.0
        b = torch.where(b == mz, torch.zeros_like(b), b)
        b = torch.where((b & high) != 0, b ^ mask, b ^ high)
    elif x.dtype in (torch.int8, torch.int16, torch.int32, torch.int64):
        b = b ^ high
    if descending:
        b = b ^ mask
    return b, bits


def reference(x, descending: bool, begin: int, end: int):
    """Indices of the stable sort of ``x`` by bits [begin, end) of its ordered bits."""
    import torch

    b, bits = ordered(x, descending)
    if end - begin == 64:
        digit = b ^ (-(1 << 63))  # unsigned order as signed
    else:
        digit = (b >> begin) & ((1 << (end - begin)) - 1) if end > begin else torch.zeros_like(b)
        if begin > 0 and bits == 64:  # arithmetic shift of a negative int64: mask took care of the high bits
            pass
    return torch.sort(digit, stable=True).indices


def same_bits(a, b) -> bool:
    return bool((_bits_view(a) == _bits_view(b)).all())


def same_as(got, x, idx) -> bool:
    """``got`` equals ``x[idx]`` bit for bit (compared as integers: torch indexes no unsigned 16..64-bit types)."""
    return bool((_bits_view(got) == _bits_view(x)[idx]).all())


def run_case(kernels, variant, name, n, descending, begin=0, end=None, values=None, seed=0):
    import torch

    from muh.families import calls

    x = keys_of(name, n, seed)
    end = 8 * x.element_size() if end is None else end
    idx = reference(x, descending, begin, end)
    out = torch.empty_like(x)
    if values is None:
        got = calls.radix_sort(
            x, descending=descending, begin_bit=begin, end_bit=end, out=out, kernels=kernels[variant]
        )
        assert same_as(got, x, idx), f"{variant} {name} n={n} desc={descending} bits [{begin}, {end})"
    else:
        v = torch.arange(n, device="cuda").to(values)
        got, gv = calls.radix_sort(
            x, v, descending=descending, begin_bit=begin, end_bit=end, out=out, kernels=kernels[variant]
        )
        assert same_as(got, x, idx), f"{variant} {name} keys n={n} desc={descending}"
        assert same_as(gv, v, idx), f"{variant} {name} values ({values}) n={n} desc={descending}"


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", KEYS)
@pytest.mark.parametrize("descending", (False, True))
def test_sort_keys_cub_sizes(kernels, variant, name, descending):
    for i, n in enumerate(SIZES):
        run_case(kernels, variant, name, n, descending, seed=1000 * i + len(name))


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ("uint8", "int16", "float16", "int32", "float32", "uint64", "float64"))
def test_sort_keys_bit_windows(kernels, variant, name):
    import torch

    bits = 8 * torch.empty(0, dtype=getattr(torch, name)).element_size()
    for begin, end in windows_of(bits):
        for desc in (False, True):
            run_case(kernels, variant, name, (1 << 17) + 12345, desc, begin, end, seed=begin * 100 + end)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", ("uint8", "int16", "float32", "int64", "float64"))
@pytest.mark.parametrize("values", ("uint8", "int16", "int32", "int64"))
def test_sort_pairs(kernels, variant, name, values):
    import torch

    for i, n in enumerate((1, 500, 7777, 1_000_000)):
        run_case(kernels, variant, name, n, bool(i & 1), values=getattr(torch, values), seed=i + 7)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
def test_low_entropy_and_equal_keys(kernels, variant):
    """Many equal digits (a tile of one digit) and all-equal keys: the order is the input order."""
    import torch

    from muh.families import calls

    k = kernels[variant]
    for n in (4096, 1 << 20):
        x = keys_of("uint32", n, 5, low_entropy=True)
        v = torch.arange(n, device="cuda", dtype=torch.int32)
        gk, gv = calls.radix_sort(x, v, kernels=k)
        idx = reference(x, False, 0, 32)
        assert same_as(gk, x, idx) and same_as(gv, v, idx)
        z = torch.full((n,), 3, dtype=torch.int32, device="cuda")
        gk, gv = calls.radix_sort(z, v, kernels=k)
        assert bool((gv == v).all()) and bool((gk == 3).all())


@pytest.mark.gpu
@pytest.mark.parametrize("name", ("uint32", "float32", "uint64"))
def test_many_waves_of_tiles(kernels, name):
    """2^25 + 3 keys: thousands of onesweep tiles, many waves of resident blocks (two per SM for keys only since
    the static-gap fixes, bench/results/radix-sort-static-2026-12-06.md), each tile publishing its counts before
    its ranks and looking back over hundreds of tiles in flight; the histogram's grid one wave striding over
    them. Keys only and with values, uniform and low-entropy keys (long runs of one digit across tiles)."""
    import torch

    from muh.families import calls

    k = kernels["h200"]
    n = (1 << 25) + 3
    for low in (False, True):
        x = keys_of(name, n, 77 + low, low_entropy=low)
        idx = reference(x, False, 0, 8 * x.element_size())
        assert same_as(calls.radix_sort(x, kernels=k), x, idx), f"{name} keys low={low}"
        v = torch.arange(n, device="cuda", dtype=torch.int32)
        gk, gv = calls.radix_sort(x, v, kernels=k)
        assert same_as(gk, x, idx) and same_as(gv, v, idx), f"{name} pairs low={low}"


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS)
def test_argsort_and_rows_match_torch(kernels, variant):
    """argsort (1-D) and per-row sort (sampling's rows: 64 x 151936 logits) equal torch's stable sort."""
    import torch

    from muh.families import calls

    k = kernels[variant]
    g = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(100_003, device="cuda", generator=g)
    assert bool((calls.argsort(x, kernels=k) == torch.argsort(x, stable=True)).all())
    assert bool((calls.argsort(x, descending=True, kernels=k) == torch.argsort(x, descending=True, stable=True)).all())
    for rows, cols in ((3, 1000), (64, 151936)):
        x = torch.randn(rows, cols, device="cuda", generator=g).to(torch.bfloat16)  # ties within rows
        want_v, want_i = torch.sort(x, dim=-1, descending=True, stable=True)
        got_v, got_i = calls.sort_rows(x, descending=True, kernels=k)
        assert same_bits(got_v, want_v) and bool((got_i == want_i).all()), f"{rows} x {cols}"
    # one sort of all rows (muh_radix_sort_rows): rows shorter than a tile, a row of one tile and a bit, one row,
    # rows of a few tiles and a partial one, both directions, float32 and int32 keys
    for rows, cols, dtype, desc in (
        (5, 7, torch.float32, False),
        (2, 1, torch.float32, True),
        (1, 1000, torch.float32, True),
        (7, 50_001, torch.float32, False),
        (9, 7681, torch.int32, True),
        (33, 20_000, torch.float32, True),
        (3, 9001, torch.float64, True),  # 8-byte keys: the columns written after the keys (not beside them)
        (4, 3000, torch.int8, False),  # 1-byte keys: one pass, which makes the columns and writes them wide
        (5, 4099, torch.int16, True),
    ):
        x = torch.randn(rows, cols, device="cuda", generator=g, dtype=torch.float64)
        x = (x * (40 if dtype == torch.int8 else 1000)).to(dtype)
        want_v, want_i = torch.sort(x, dim=-1, descending=desc, stable=True)
        got_v, got_i = calls.sort_rows(x, descending=desc, kernels=k)
        assert same_bits(got_v, want_v) and bool((got_i == want_i).all()), f"{rows} x {cols} {dtype} desc={desc}"


@pytest.mark.gpu
def test_double_buffer_selector(kernels):
    """The C interface's double-buffer mode: the result is in the buffer *selector names."""
    import ctypes

    import torch

    from muh.runtime import dtypes as DT

    k = kernels["h200"]
    for n, bits in ((100, 32), (1 << 20, 32), (1 << 20, 16), (1 << 20, 0)):
        x = keys_of("uint32", n, n + bits)
        want = _bits_view(x)[reference(x, False, 0, bits)] if bits else _bits_view(x).clone()
        a, b = x.clone(), torch.empty_like(x)
        ws = torch.zeros(int(k.raw("muh_radix_sort_workspace")(DT.CODE["uint32"], n)), dtype=torch.uint8, device="cuda")
        sel = ctypes.c_int(-1)
        k.call(
            "muh_radix_sort",
            DT.CODE["uint32"],
            0,
            a.data_ptr(),
            b.data_ptr(),
            0,
            0,
            0,
            0,
            n,
            0,
            bits,
            0,
            ws.data_ptr(),
            ws.numel(),
            ctypes.addressof(sel),
            torch.cuda.current_stream().cuda_stream,
        )
        torch.cuda.synchronize()
        assert bool((_bits_view((a, b)[sel.value]) == want).all()), f"n={n} bits={bits} selector={sel.value}"


@pytest.mark.gpu
def test_refusals(kernels):
    import torch

    from muh.families import calls

    k = kernels["h200"]
    x = torch.zeros(10, dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match="bits"):
        calls.radix_sort(x, begin_bit=4, end_bit=33, kernels=k)
    with pytest.raises(TypeError, match="not supported"):
        calls.radix_sort(torch.zeros(4, dtype=torch.bool, device="cuda"), kernels=k)
    with pytest.raises(ValueError, match="values"):
        calls.radix_sort(x, torch.zeros(9, dtype=torch.int32, device="cuda"), kernels=k)
    # the C entry that makes the columns: one row is refused with the entry to use instead, nothing written
    from muh.runtime import dtypes as DT

    keys, idx = torch.ones(8, device="cuda"), torch.full((8,), -1, dtype=torch.int64, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    rc = k.raw("muh_argsort_rows")(
        DT.CODE["float32"], keys.data_ptr(), keys.data_ptr(), 0, idx.data_ptr(), 0, 1, 8, 0, 32, 0, 0, 0, stream
    )
    assert rc != 0 and "muh_radix_sort" in k.last_error() and bool((idx == -1).all())
