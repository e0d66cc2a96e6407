"""The histogram family without a GPU: its policy from both bundled specs, the numbers its kernel is
instantiated with (and their rules), and its bin arithmetic on the host. Its static CUDA compiling on its
own for both profiles: test_kernels_nvcc.py::test_static_cuda_compiles_standalone_for_both_profiles."""

from __future__ import annotations

import re
import subprocess

import pytest

from bench import presets
from muh import families
from muh.codegen.kernels import emitter


def _params(cfg) -> str:
    return dict(emitter.generate(cfg))["include/muh/kernels/params.cuh"]


def test_policies_come_from_the_specs():
    h = presets.h200().of("histogram")
    # specs/h200.muh: the H200's measured policies (float32, uint8), CUB's sm_90 one where it was kept (uint16)
    assert (h["float32"].threads, h["float32"].items) == (512, 8)
    assert (h["uint8"].threads, h["uint8"].items) == (960, 16)
    assert (h["uint16"].threads, h["uint16"].items) == (960, 10)
    assert (h["int32"].threads, h["int32"].items) == (384, 16)
    b = presets.bi100().of("histogram")
    assert set(b) == set(families.get("histogram").dtypes)
    assert {(p.threads, p.items) for p in b.values()} == {(384, 16)}


def test_params_say_their_rule():
    text = _params(presets.h200())
    block = re.search(r"namespace histogram_uint8 \{(.*?)\}", text, re.S).group(1)
    # 16 one-byte samples per thread at vec 4: 4-byte loads (vec caps them; 16 would allow 16-byte ones)
    assert re.search(
        r"// largest power of two <= min\(vec, 16 B / sample size\) dividing items \(vec=4, items=16, "
        r"element_size=1\)\nconstexpr int kVec = 4;",
        block,
    )
    u16 = re.search(r"namespace histogram_uint16 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kVec = 2;" in u16  # 10 two-byte samples: pairs
    f32 = re.search(r"namespace histogram_float32 \{(.*?)\}", text, re.S).group(1)
    assert "constexpr int kVec = 4;" in f32
    assert "constexpr int kSmemBins = 12288;  // smem_per_block / 4 B" in f32
    # sub-histograms: the H200's measured 32 for 1-byte samples; where a policy leaves them unset (the
    # BI-V100's), one per bank for 1-byte samples (counted by value), one for the others
    assert "constexpr int kCopies = 32;  // policy sub_histograms" in block
    assert "constexpr int kCopies = 1;  // one histogram per block (CUB) (element_size=2)" in u16
    bi = _params(presets.bi100())
    bi8 = re.search(r"namespace histogram_uint8 \{(.*?)\}", bi, re.S).group(1)
    assert "constexpr int kCopies = 32;  // 1-byte samples: one copy per shared-memory bank (smem_banks=32)" in bi8


def test_sub_histograms_from_the_policy_and_their_shared_memory_checked():
    from dataclasses import replace

    cfg = presets.h200()
    table = {d: replace(p, sub_histograms=8) for d, p in cfg.of("histogram").items()}
    text = _params(cfg.with_policies("histogram", table))
    assert "constexpr int kCopies = 8;  // policy sub_histograms" in text
    rec = families.get("histogram")
    assert rec.validate(cfg.with_policies("histogram", table)) == []
    # 64 copies of 256 four-byte counters: 64 KiB, over the H200 spec's 48 KiB per block
    big = {
        "uint8": replace(cfg.of("histogram")["uint8"], sub_histograms=64),
        "uint16": replace(cfg.of("histogram")["uint16"], sub_histograms=64),
    }  # not by value: fits or falls back
    errs = rec.validate(cfg.with_policies("histogram", big))
    assert errs == [
        "histogram.uint8: 64 sub-histograms of 256 counters need 65536 B of shared memory, the hardware "
        "has 49152 B per block (at most 48)"
    ]


def test_spec_sub_histograms_reach_the_policy(tmp_path):
    from muh.derive.kernels import config_from_derived
    from muh.pipeline import load_file

    text = (presets.SPECS / "h200.muh").read_text()
    old = "  policy uint16 {\n"
    at = text.index("algorithm histogram on h200 {")  # the histogram's uint16 policy (radix_sort, later, has one too)
    assert old in text[at:]
    (tmp_path / "h200.muh").write_text(text[:at] + text[at:].replace(old, old + "    sub_histograms = 4\n", 1))
    loaded = load_file(tmp_path / "h200.muh")
    cfg = config_from_derived(loaded.derived, loaded.spec.hardware["h200"])
    assert cfg.of("histogram")["uint16"].sub_histograms == 4
    assert cfg.of("histogram")["int16"].sub_histograms is None  # unset: the rule decides (one copy)


def test_api_has_the_family_entry_point():
    api = dict(emitter.generate(presets.h200()))["include/muh/kernels/api.h"]
    assert "int muh_histogram_even(int dtype, const void* samples, long long n, int bins, double lower, " in api
    from muh.families.calls import signatures

    assert "muh_histogram_even" in signatures()


CASES = [  # (C++ type, numpy type, bins, lower, upper)
    ("float", "float32", 256, -2.0, 2.0),
    ("float", "float32", 100, -1.5, 2.5),
    ("double", "float64", 7, -1.0, 3.0),
    ("unsigned char", "uint8", 256, 0, 256),
    ("signed char", "int8", 64, -100, 124),
    ("short", "int16", 7, -1000, 999),
    ("unsigned short", "uint16", 1000, 5, 60000),
    ("int", "int32", 3, -(1 << 31), (1 << 31) - 1),
    ("unsigned", "uint32", 100000, 0, 4000000000),
]


@pytest.mark.nvcc
def test_bin_arithmetic_matches_the_reference_on_the_host(nvcc, tmp_path):
    """The kernel's bin of a sample (Even<T>::bin, host-callable) against CUB's rule written in numpy,
    for random samples of every kind of type and levels (wider than the samples for bytes)."""

    import numpy as np

    rng = np.random.default_rng(7)
    _headers(tmp_path)
    main, want = (
        ["#include <stdio.h>", '#include "histogram.cuh"', "using muh::histogram_impl::Even;", "int main() {"],
        [],
    )
    for i, (ct, nt, bins, lo, hi) in enumerate(CASES):
        info = np.finfo(nt) if nt.startswith("float") else np.iinfo(nt)
        span = (hi - lo) * 0.2
        vals = rng.uniform(max(lo - span, float(info.min)), min(hi + span, float(info.max)), 200).astype(nt)
        vals[:2] = np.array([lo, hi - (1 if not nt.startswith("float") else 0)]).astype(nt)
        lit = ", ".join(repr(float(v)) if nt.startswith("float") else str(int(v)) for v in vals)
        main += [
            f"  {{ Even<{ct}> e; if (Even<{ct}>::make({float(lo)!r}, {float(hi)!r}, {bins}, &e)) return 1;",
            f"    const {ct} x[] = {{{lit}}};",
            f'    for (int j = 0; j < {len(vals)}; ++j) printf("%d\\n", e.bin(x[j])); }}',
        ]
        if nt.startswith("float"):
            t = np.dtype(nt).type
            scale = t(t(bins) / t(t(hi) - t(lo)))
            for v in vals:
                ok = t(lo) <= v < t(hi)
                want.append(min(int((v - t(lo)) * scale), bins - 1) if ok else -1)
        else:
            for v in vals:
                v = int(v)
                want.append((v - lo) * bins // (hi - lo) if lo <= v < hi else -1)
    main.append("  return 0;\n}")
    (tmp_path / "t.cu").write_text("\n".join(main) + "\n")
    exe = tmp_path / "t"
    r = subprocess.run([nvcc, "-std=c++14", "-o", str(exe), str(tmp_path / "t.cu")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    got = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert got == want


@pytest.mark.nvcc
def test_division_by_the_range_is_exact(nvcc, tmp_path):
    """Div32 (the integer bins' division by the range, as a multiply) against Python's //, for edge
    and random divisors and numerators, on the host (the same code as on the device, but __umulhi)."""
    import random

    rnd = random.Random(11)
    top = (1 << 32) - 1
    divs = [1, 2, 3, 5, 7, 255, 256, 257, 1000, 59995, 1 << 31, (1 << 31) + 1, top - 1, top]
    divs += [rnd.randrange(1, top + 1) for _ in range(40)] + [rnd.randrange(1, 1 << 16) for _ in range(20)]
    nums = [0, 1, 2, 255, 256, 65535, 1 << 31, top - 1, top] + [rnd.randrange(0, top + 1) for _ in range(60)]
    _headers(tmp_path)
    src = [
        "#include <stdio.h>",
        '#include "histogram.cuh"',
        "using muh::histogram_impl::Div32;",
        "int main() {",
        f"  const unsigned d[] = {{{', '.join(f'{x}u' for x in divs)}}};",
        f"  const unsigned n[] = {{{', '.join(f'{x}u' for x in nums)}}};",
        f"  for (int i = 0; i < {len(divs)}; ++i) {{ const Div32 q = Div32::make(d[i]);",
        f'    for (int j = 0; j < {len(nums)}; ++j) printf("%u\\n", q.div(n[j])); }}',
        "  return 0;",
        "}",
    ]
    (tmp_path / "d.cu").write_text("\n".join(src) + "\n")
    r = subprocess.run(
        [nvcc, "-std=c++14", "-o", str(tmp_path / "d"), str(tmp_path / "d.cu")], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = [
        int(x) for x in subprocess.run([str(tmp_path / "d")], capture_output=True, text=True, check=True).stdout.split()
    ]
    assert got == [a // b for b in divs for a in nums]


def _headers(folder) -> None:
    """histogram.cuh as the kernels emitter ships it, with the one header it includes (muh/linkage.cuh)."""
    from importlib.resources import files as res

    (folder / "histogram.cuh").write_text(res("muh.families.histogram").joinpath("histogram.cuh").read_text())
    (folder / "muh").mkdir(exist_ok=True)
    (folder / "muh" / "linkage.cuh").write_text(res("muh.codegen.kernels").joinpath("linkage.cuh").read_text())
