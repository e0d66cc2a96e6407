"""radix_sort's record without a GPU: the policy read from CUB's sub-policies in the bundled specs, the numbers
its kernels are instantiated with, what it refuses, and the 128-lane emulation build that has no ballot."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace

import pytest

from bench import presets
from muh.codegen.kernels import emitter
from muh.families import radix_sort
from muh.families.registry import validate


def test_policy_comes_from_the_spec_s_sub_policies():
    """specs/h200.muh: CUB's sm_90 onesweep 384 x 20 (float32 19, 1-2 byte keys 512 x 19, 8-byte keys 30
    nominal items scaled by reg_bound to 15), histogram 128 x 16, exclusive sum 256, single tile 256 x 19 at 6 bits."""
    pol = presets.h200().of("radix_sort")
    assert (pol["uint32"].threads, pol["uint32"].items, pol["uint32"].radix_bits) == (384, 20, 8)
    assert pol["float32"].items == 19
    assert (pol["int8"].threads, pol["int8"].items) == (512, 19)
    assert pol["int64"].items == 15  # 4 * 30 / 8: CUB's RegBoundScaling of the nominal 30
    assert (pol["int32"].hist_threads, pol["int32"].hist_items, pol["int32"].scan_threads) == (128, 16, 256)
    assert (pol["int32"].single_threads, pol["int32"].single_bits) == (256, 6)
    bi = presets.bi100().of("radix_sort")["float64"]
    assert (bi.threads, bi.items, bi.radix_bits) == (256, 12, 8)


def test_params_carry_the_key_kind_and_their_rules():
    cfg = presets.h200()
    by = {
        d: {p.cname: p for p in radix_sort.params(cfg, d, cfg.of("radix_sort")[d])}
        for d in ("uint16", "int32", "bfloat16")
    }
    assert [by[d]["kKeyKind"].value for d in ("uint16", "int32", "bfloat16")] == [0, 1, 2]
    hb = by["int32"]["kHistBlocksPerSm"]
    assert hb.value == cfg.max_threads_per_sm // 128 and "resident threads per SM" in hb.rule
    # keys-only onesweep bounded to two blocks per SM where a thread keeps 80 of the 64 K registers (384
    # threads), one where it would not (512 threads: the 1- and 2-byte keys)
    assert by["int32"]["kMinBlocks"].value == 2 and by["uint16"]["kMinBlocks"].value == 1
    assert "CUB's sm_90 occupancy" in by["int32"]["kMinBlocks"].rule
    text = dict(emitter.generate(cfg))["include/muh/kernels/params.cuh"]
    assert (
        "namespace radix_sort_float16" in text
        and "constexpr int kSingleBits = 6;  // policy single_tile.radix_bits" in text
    )


@pytest.mark.parametrize(
    "change, why",
    [
        (dict(radix_bits=9), "radix_bits=9 must be 4..8"),
        (dict(radix_bits=3), "radix_bits=3 must be 4..8"),
        (dict(single_bits=0), "single_tile radix_bits=0"),
        (dict(hist_threads=100), "radix_sort.uint32.histogram: threads=100 is not a multiple of the warp size 64"),
        (dict(threads=1024, items=24), "radix_sort.uint32.onesweep: the tile needs"),
    ],
)
def test_refuses_what_the_kernels_cannot_run(change, why):
    cfg = presets.bi100()
    table = dict(cfg.of("radix_sort"))
    table["uint32"] = replace(table["uint32"], **change)
    errs = validate(cfg.with_policies("radix_sort", table))
    assert any(why in e for e in errs), errs


def test_a_128_lane_warp_builds_without_radix_kernels():
    """No ballot covers 128 lanes: the warp layer says MUH_WARP_HAS_MATCH 0 and the entry point answers
    MUH_ERR_UNSUPPORTED (the other families still build for that emulation)."""
    files = dict(emitter.generate(presets.bi100().emulated(128)))
    assert "#define MUH_WARP_HAS_MATCH 0" in files["include/muh/warp.cuh"]
    src = files["kernels/radix_sort.cu"]
    assert "MUH_ERR_UNSUPPORTED" in src and "radix_sort::sort<" not in src and "Key<" not in src
    native = dict(emitter.generate(presets.bi100()))
    assert "#define MUH_WARP_HAS_MATCH 1" in native["include/muh/warp.cuh"]
    assert "constexpr bool kBallotIsVote = false;" in native["include/muh/warp.cuh"]
    assert "constexpr bool kBallotIsVote = true;" in dict(emitter.generate(presets.h200()))["include/muh/warp.cuh"]


# One key type's kernels instantiated alone (the generated radix_sort.cu instantiates all 60 key/value pairs).
ONE_KEY = """
#include "muh/host.cuh"
#include "muh/kernels/params.cuh"
#include "muh/kernels/radix_sort_host.cuh"
namespace pr = muh::params::radix_sort_{dtype};
struct P {{
  enum {{ kKeyKind = pr::kKeyKind, kBits = pr::kBits, kThreads = pr::kThreads, kItems = pr::kItems,
         kMinBlocks = pr::kMinBlocks, kHistThreads = pr::kHistThreads, kHistItems = pr::kHistItems,
         kHistMinBlocks = pr::kHistMinBlocks,
         kHistBlocksPerSm = pr::kHistBlocksPerSm, kScanThreads = pr::kScanThreads,
         kSingleThreads = pr::kSingleThreads, kSingleItems = pr::kSingleItems, kSingleBits = pr::kSingleBits }};
}};
typedef {v} NV;
template int muh::radix_sort::sort<{u}, pr::kKeyKind, NV, P>(const {u}*, {u}*, {u}*, const NV*, NV*, NV*, long long,
                                                             int, int, bool, void*, size_t, int*, cudaStream_t,
                                                             long long, bool);
"""


def _ptxas_report(log: str) -> dict:
    """{kernel: (registers, static shared bytes, spill bytes)} of an `nvcc -Xptxas -v` log; a kernel of several
    instantiations (the flat and the per-row onesweep kernel) gives its most registers and all their spills."""
    out, fn = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '_ZN3muh10radix_sort\d+(\w+?_kernel)", line)
        if m:
            fn = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and fn:
            spill = int(m.group(1)) + int(m.group(2))
        m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?$", line)
        if m and fn:
            regs, smem, spilled = out.get(fn, (0, 0, 0))
            out[fn] = (max(regs, int(m.group(1))), max(smem, int(m.group(2) or 0)), spilled + spill)
            fn = None
    return out


@pytest.mark.nvcc
@pytest.mark.parametrize(
    "dtype, ctype, vtype",
    [
        ("uint32", "unsigned", "muh::radix_sort::NoValue"),
        ("float32", "unsigned", "muh::radix_sort::NoValue"),
        ("uint64", "unsigned long long", "muh::radix_sort::NoValue"),
        ("uint32", "unsigned", "unsigned"),  # argsort's pairs: 4-byte keys with 4-byte indices
        ("float32", "unsigned", "unsigned"),
    ],
)
def test_onesweep_keeps_two_blocks_per_sm(nvcc, tmp_path, dtype, ctype, vtype):
    """The static gap to CUB at 2^28 keys (bench/results/radix-sort-static-2026-12-06.md): unbounded, ptxas gave
    the onesweep kernel 90 registers, one block of 384 threads per SM (CUB's: 74, two blocks); pairs kept 90 and one
    block after the keys were bounded (0.59x CUB at 2^28 on an H100, bench/results/radix-sort-h100-2026-12-06/run3).
    Now its registers fit kMinBlocks blocks of the 64 K an SM has, without spills, keys only and with 4-byte values;
    the histogram's shared counts are sized to the key's passes (4 KB for 32-bit keys, as CUB's; were 16 KB for 16
    passes) and its registers fit kHistMinBlocks blocks (CUB's 12 for 4-byte keys: 48 registers, 10 blocks, before)."""
    cfg = presets.h200()
    emitter.write(cfg, tmp_path)
    pol = cfg.of("radix_sort")[dtype]
    got_params = {p.cname: p.value for p in radix_sort.params(cfg, dtype, pol)}
    blocks, hist_blocks = got_params["kMinBlocks"], got_params["kHistMinBlocks"]
    assert blocks == 2 and hist_blocks == (12 if dtype != "uint64" else 8)
    tu = tmp_path / "one_key.cu"
    tu.write_text(ONE_KEY.format(dtype=dtype, u=ctype, v=vtype))
    r = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            "-O3",
            "-Xptxas",
            "-v",
            "-I",
            str(tmp_path / "include"),
            "-cubin",
            "-o",
            str(tmp_path / "one_key.cubin"),
            str(tu),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    got = _ptxas_report(r.stdout + r.stderr)
    regs, _, spill = got["onesweep_kernel"]
    assert spill == 0, got
    warp_regs = -(-regs * 32 // 256) * 256  # registers are allocated per warp, 256 at a time
    assert blocks * (pol.threads // 32) * warp_regs <= radix_sort.REGS_PER_SM, (regs, got)
    regs, smem, spill = got["histogram_kernel"]
    bits = 8 * {"uint32": 4, "float32": 4, "uint64": 8}[dtype]
    assert spill == 0 and smem == -(-bits // pol.radix_bits) * (1 << pol.radix_bits) * 4, got
    warp_regs = -(-regs * 32 // 256) * 256
    assert hist_blocks * (pol.hist_threads // 32) * warp_regs <= radix_sort.REGS_PER_SM, (regs, got)
