"""The measurement harness's number <-> storage conversions, compiled with real nvcc and checked by the
harness's own host-only self-test (`unit --self-test`: no CUDA call, so no GPU needed).

On the H200 (2026-12-01) the float16 harness converted values instead of bits once the dtype table made
its storage `unsigned short`: inputs in [-1, 1] became 0 and 1, a topk campaign timed that degenerate
problem, and reduce float16's base failed the gate ('sum 3370 != reference 5289')."""

from __future__ import annotations

import re
import subprocess

import pytest

from muh.tune.space import build_space, effective
from muh.tune.unit import UnitVariant, render_unit

pytestmark = [pytest.mark.slow, pytest.mark.nvcc]

# the self-test is host code: device code unoptimised keeps the three compilations short
ARGS = ["-std=c++17", "-w", "-arch=sm_90", "-Xptxas", "-O0"]

# the conversions as they were when the bug shipped (a value conversion through `unsigned short`)
OLD_FLOAT16 = ("  return (double)__half2float(v);\n", "  return __float2half((float)d);\n")


def _unit(loaded, dtype: str) -> str:
    hw = loaded.spec.hardware["lab"]
    sp = build_space(loaded.spec, "reduce", dtype)
    return render_unit("reduce", dtype, hw, [UnitVariant(0, "base", effective(sp.base, sp))], [1 << 16])


def _self_test(nvcc: str, sources: list[str], tmp_path) -> list[subprocess.CompletedProcess]:
    from muh.tune.compile import LocalPool

    pool = LocalPool(len(sources))
    try:
        built = [f.result() for f in [pool.submit(s, ARGS, nvcc, 600) for s in sources]]
    finally:
        pool.shutdown()
    out = []
    for i, b in enumerate(built):
        assert b.ok, b.log
        exe = tmp_path / f"unit{i}"
        exe.write_bytes(b.binary)
        exe.chmod(0o755)
        out.append(subprocess.run([str(exe), "--self-test"], capture_output=True, text=True, timeout=60))
    return out


def test_the_harness_stores_every_type_as_cuda_does_and_catches_a_value_conversion(loaded, nvcc, tmp_path):
    f16, bf16 = _unit(loaded, "float16"), _unit(loaded, "bfloat16")
    # the float16 harness with the shipped bug put back: to_d/from_d convert values, not bits
    body = re.compile(
        r"(__host__ __device__ static double to_d\(T v\) \{\n).*?(\n\}\n__host__ __device__ static T from_d"
        r"\(double d\) \{\n).*?(\n\}\n)",
        re.S,
    )
    broken, n = body.subn(
        lambda m: m.group(1) + OLD_FLOAT16[0].rstrip("\n") + m.group(2) + OLD_FLOAT16[1].rstrip("\n") + m.group(3),
        f16,
        count=1,
    )
    assert n == 1
    good16, goodbf, bad16 = _self_test(nvcc, [f16, bf16, broken], tmp_path)
    for r in (good16, goodbf):
        assert r.returncode == 0 and '"self_test": "ok"' in r.stdout, r.stdout + r.stderr
    assert bad16.returncode == 2, bad16.stdout + bad16.stderr
    assert "float16" in bad16.stdout and "differ from CUDA" in bad16.stdout


def test_the_histogram_harness_self_test_passes_for_unsigned_samples(nvcc, tmp_path):
    """uint8 samples: the self-test's numbers are ones an unsigned type holds (a negative one would read
    back wrapped and stop every histogram campaign before it measured anything)."""
    from pathlib import Path

    from muh.pipeline import load_file

    spec = load_file(Path(__file__).resolve().parents[2] / "specs" / "h200.muh").spec
    hw = next(iter(spec.hardware.values()))
    sp = build_space(spec, "histogram", "uint8")
    unit = render_unit("histogram", "uint8", hw, [UnitVariant(0, "base", effective(sp.base, sp))], [1 << 16])
    (r,) = _self_test(nvcc, [unit], tmp_path)
    assert r.returncode == 0 and '"self_test": "ok"' in r.stdout, r.stdout + r.stderr


def test_the_ops_fragments_share_their_sizes_and_the_unit_hash_covers_the_shared_part():
    """rms_norm and silu_and_mul measure at the same sizes through one included template; the trial key
    (`source_hash`) covers what a fragment includes, so an edit there invalidates their measurements."""
    from muh.tune.unit import fragment_sources

    for fam in ("rms_norm", "silu_and_mul"):
        parts = fragment_sources(fam)
        assert len(parts) == 2 and b"static int fitting(long long n)" in parts[1]
        assert b"static int fitting" not in parts[0]


def test_the_radix_sort_harness_builds_and_self_tests(nvcc, tmp_path, monkeypatch):
    """radix_sort's fragment (keys only, out of place, its own alternate buffer) compiles against the variant's C
    interface for a space over sub-policy dimensions (onesweep 256 threads beside the base's 384)."""

    from radix_spec import radix_space_spec

    from muh.pipeline import load_file

    path = radix_space_spec(tmp_path, "space { onesweep.threads = [256, 384] }")
    spec = load_file(path).spec
    hw = spec.hardware["h200"]
    sp = build_space(spec, "radix_sort", "uint32")
    other = next(v for v in sp.variants() if v.get("onesweep.threads") == 256)
    unit = render_unit(
        "radix_sort",
        "uint32",
        hw,
        [UnitVariant(0, "base", effective(sp.base, sp)), UnitVariant(1, other.label(), effective(other, sp))],
        [1 << 20],
    )
    assert "a.radix_sort(kDtype, 0, c.in, c.out, alt" in unit
    (r,) = _self_test(nvcc, [unit], tmp_path)
    assert r.returncode == 0 and '"self_test": "ok"' in r.stdout, r.stdout + r.stderr
