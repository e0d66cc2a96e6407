"""The LLM ops' own policies (rms_norm, silu_and_mul) and their size buckets by rows × hidden: derive
with provenance (the spec's numbers, or the derivation from reduce/transform without them), `muh explain`
per bucket, clean diagnostics for bad policies, generated Policy<T, B> with the host's bucket dispatch,
deterministic, compiled by nvcc."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "ops" / "buckets.muh"


def test_without_their_blocks_the_ops_derive_from_reduce_and_transform():
    ops = load_file(ROOT / "specs" / "baseline.muh").derived.ops["bi100"].policies["float16"]
    assert "reduce@bi100" in ops.row_threads.inputs["threads_from"] and ops.row_threads.origin == "derived"
    assert "transform@bi100" in ops.elt_threads.inputs["threads_from"]
    assert ops.buckets == []


def test_their_blocks_set_the_numbers_with_the_spec_as_origin():
    p = load_file(FIXTURE).derived.ops["h200"].policies
    bf, f16, f32 = p["bfloat16"], p["float16"], p["float32"]
    assert [(b.lo, b.hi) for b in bf.buckets] == [(0, 1 << 16), (1 << 16, None)]
    small, large = bf.buckets
    assert (small.row_threads.value, small.items_min.value, small.vec.value) == (128, 4, 4)
    assert (
        small.row_threads.origin == "spec"
        and "rms_norm@h200.bfloat16 [elements < 2^16].threads" in small.row_threads.rule
    )
    assert (large.row_threads.value, large.vec.value, large.max_items.value) == (1024, 8, 2)
    assert large.items_min.origin == "inherited"
    assert [(b.lo, b.hi) for b in f16.buckets] == [(0, 1 << 16), (1 << 16, 1 << 20), (1 << 20, None)]
    assert [(b.elt_threads.value, b.elt_items.value, b.elt_vec.value) for b in f16.buckets] == [
        (64, 4, 2),
        (256, 1, 8),
        (1024, 2, 8),
    ]
    assert f32.buckets == [] and f32.elt_vec.value == 4  # 16 B of float32
    assert "reduce@h200" in f32.topk_threads.inputs["threads_from"]  # not the ops' own: still derived


def test_explain_prints_each_bucket(cli):
    code, out, err = cli("explain", str(FIXTURE), "ops.float16.elt_threads")
    assert code == 0, err
    assert re.search(r"when rows × hidden < 2\^16\n\s+elt_threads = 64\s+\[spec\]", out)
    assert re.search(r"when rows × hidden in 2\^16..2\^20\n\s+elt_threads = 256\s+\[inherited\]", out)
    assert re.search(r"when rows × hidden >= 2\^20\n\s+elt_threads = 1024\s+\[spec\]", out)


BAD = [
    (
        "when elements >= 2^21 { threads = 512 }",
        "when elements >= 2^20 { threads = 512 }",
        "E-BUCKET",
        "fall in no bucket",
    ),
    (
        "types = [float32, float16, bfloat16]\n  policy default { threads = 256  items = 1 }\n  policy bfloat16",
        "types = [float32, int32]\n  policy default { threads = 256  items = 1 }\n  policy bfloat16",
        "E-TYPE",
        "the LLM ops are not generated for int32",
    ),
    (
        "when elements < 2^16 { threads = 128  items = 4  vec = 4 }",
        "when elements < 2^16 { threads = 128  vec = 3 }",
        "E-VALUE",
        "vec=3 is not a power of two (bucket `elements < 2^16`)",
    ),
    (
        "when elements >= 2^16 { threads = 1024 }",
        "when k >= 16 { threads = 1024 }",
        "E-BUCKET",
        "a bucket of `rms_norm` cannot test `k`",
    ),
    (
        "policy default { threads = 256  items = 1 }",
        "policy default { threads = 256  items = 1  when elements < 2^16 {}  when elements >= 2^16 {} }",
        "E-BUCKET",
        "`policy default` cannot hold size buckets",
    ),
]


@pytest.mark.parametrize("old,new,code_,what", BAD, ids=[b[2] + "-" + str(i) for i, b in enumerate(BAD)])
def test_bad_ops_policies_are_clean_diagnostics(cli, tmp_path, old, new, code_, what):
    text = FIXTURE.read_text()
    if "2^21" in old:  # a gap: the second bucket starts late
        text = text.replace("when elements >= 2^16 { threads = 1024 }", "when elements >= 2^21 { threads = 512 }")
        old, new = "when elements < 2^16 { threads = 128  items = 4  vec = 4 }", "when elements < 2^20 {}"
    assert old in text
    spec = tmp_path / "bad.muh"
    spec.write_text(text.replace(old, new, 1))
    code, out, err = cli("build", str(spec), "-o", str(tmp_path / "out"))
    assert code == 2 and f"[{code_}]" in err and what in err, err
    assert re.search(r"bad\.muh:\d+:\d+: error", err) and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_generated_dispatch_is_deterministic(tmp_path):
    from muh.pipeline import build

    a, _ = build(FIXTURE, tmp_path / "a")
    b, _ = build(FIXTURE, tmp_path / "b")
    for rel in ("kernels/ops.cu", "include/muh/ops/ops.h", "include/muh/ops/ops.cuh", "kernels/bindings/ops_torch.cpp"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    one = re.sub(r"\s+", " ", (a / "kernels" / "ops.cu").read_text().replace("\\\n", " "))  # C++ tokens
    for t, b_ in (("float", 0), ("__half", 2), ("muh::bf16", 1)):
        assert f"template <> struct Policy<{t}, {b_}>" in one
    assert "template <> struct Policy<float, 1>" not in one  # an unbucketed type: one instantiation
    f16 = one[one.index("case MUH_OP_FLOAT16") : one.index("case MUH_OP_BFLOAT16")]
    assert re.search(
        r"if \(\(n\) < 65536LL\) \{ enum \{ B = 0 \}; return CALL; \} "
        r"if \(\(n\) < 1048576LL\) \{ enum \{ B = 1 \}; return CALL; \} "
        r"\{ enum \{ B = 2 \}; return CALL; \}",
        f16,
    ), f16[:600]
    # every entry point picks its bucket by its rows × hidden
    assert "MUH_OPS_DISPATCH(dtype, rows * args->hidden, (norm_t<T, B>(a, rows, s)))" in one
    assert "MUH_OPS_DISPATCH(dtype, rows * d, (silu_and_mul_t<T, B>(" in one
    assert "kEltThreads = 64, // block of silu_and_mul / gate_add" in one


@pytest.mark.slow
@pytest.mark.nvcc
def test_bucketed_ops_compile(nvcc, tmp_path):
    """Every Policy<T, B> instantiated by the dispatch compiles (the C entry points and the kernels)."""
    from muh.pipeline import build

    out, _ = build(FIXTURE, tmp_path / "out")
    r = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            "-O1",
            f"-I{out / 'include'}",
            "-c",
            str(out / "kernels" / "ops.cu"),
            "-o",
            str(tmp_path / "ops.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    syms = subprocess.run(["nm", str(tmp_path / "ops.o")], capture_output=True, text=True).stdout
    assert re.search(r" T muh_op_norm$", syms, re.M) and re.search(r" T muh_op_silu_and_mul$", syms, re.M)
