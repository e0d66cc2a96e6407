"""Size buckets (`when elements … { … }`, topk's `when k … { … }` in a policy): parsed and formatted,
derived per bucket with provenance, explained per bucket, and dispatched by element count in the
generated scan (by k or element count in the generated topk; reduce, transform, histogram:
tests/codegen/test_size_buckets.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from lab_card import hardware, line_col

from muh.grammar.format import format_module
from muh.grammar.parser import parse
from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]
BUCKETED = (
    "muh 1\n"
    + hardware("h200")
    + """\
algorithm scan on h200 {
  types = [float32, float64]
  policy default { threads = 128  items = 24  vec = 4 }
  policy float64 {
    threads = 256  # every size unless a bucket says otherwise
    when elements < 2^16 { }
    when elements in 2^16..16777216 { items = 16 }
    when elements >= 2^24 { threads = 384 }
  }
}
"""
)


@pytest.fixture
def spec(tmp_path) -> Path:
    f = tmp_path / "buckets.muh"
    f.write_text(BUCKETED)
    return f


def test_fmt_round_trips_buckets_and_powers():
    text = format_module(parse(BUCKETED, "b.muh"))
    assert "    when elements in 2^16..16777216 { items = 16 }\n" in text
    assert "    when elements >= 2^24 { threads = 384 }\n" in text
    assert "threads = 256  # every size" in text
    assert format_module(parse(text, "b.muh")) == text


def test_derive_resolves_each_bucket_with_its_provenance(spec):
    pol = load_file(spec).derived.algorithms["scan@h200"].policies["float64"]
    assert [(b.lo, b.hi) for b in pol.buckets] == [(0, 1 << 16), (1 << 16, 1 << 24), (1 << 24, None)]
    small, mid, large = pol.buckets
    assert small.values["threads"].value == 256
    assert small.values["threads"].where.endswith(":%d:%d" % line_col(BUCKETED, "256  # every size"))
    assert mid.values["items"].inputs["I4"] == 16  # the bucket's nominal items, then scaled for 8 B
    assert "bucket `elements in 2^16..2^24`" in mid.values["items"].inputs["items_from"]
    assert large.values["threads"].inputs["T4"] == 384 and large.label == "elements >= 2^24"
    assert large.values["threads"].where.endswith(":%d:%d" % line_col(BUCKETED, "384 }"))
    # a type without buckets has none
    assert load_file(spec).derived.algorithms["scan@h200"].policies["float32"].buckets == []


def test_explain_prints_every_bucket(cli, spec):
    code, out, err = cli("explain", spec, "scan.float64.threads")
    assert code == 0, err
    assert "    when elements < 2^16  (policy float64" in out
    assert "    when elements >= 2^24  (policy float64" in out
    assert sum(line.lstrip().startswith("threads = ") for line in out.splitlines()) == 4  # own + 3 buckets
    assert "      threads = 384    [derived]" in out


def test_generated_scan_picks_the_bucket_by_size(spec, tmp_path):
    from muh.pipeline import build

    out, _ = build(spec, tmp_path / "out")
    cu = (out / "kernels" / "scan.cu").read_text()
    one = re.sub(r"\s+", " ", cu)  # the C++ as tokens: `muh build` formats it (clang-format)
    assert "template <> struct Policy<double, 2> {" in one and "params::scan_float64_b2::kThreads" in cu
    assert "if (n < 65536LL) // elements 0..65535 return scan_impl::run<double, 0>(" in one
    assert "if (n < 16777216LL) // elements 65536..16777215 return scan_impl::run<double, 1>(" in one
    assert "return scan_impl::run<double, 2>(" in one
    assert "return scan_impl::run<float, 0>(" in one  # an unbucketed type: one instantiation
    params = (out / "include" / "muh" / "kernels" / "params.cuh").read_text()
    assert re.search(
        r"// size bucket 2: elements 16777216..\nnamespace scan_float64_b2 \{\nconstexpr int kThreads = 384;", params
    )
    tuning = (out / "include" / "muh" / "tuning" / "tuning_scan.cuh").read_text()
    assert "if (type == element::float64 && elements >= 16777216LL)" in tuning
    assert '"buckets"' in (out / "policies.json").read_text()


@pytest.mark.nvcc
def test_bucketed_scan_and_its_tuning_header_compile(nvcc, spec, tmp_path):
    from muh.pipeline import build

    out, _ = build(spec, tmp_path / "out")
    (tmp_path / "t.cu").write_text(
        '#include "muh/tuning/tuning_scan.cuh"\n'
        "static_assert(muh::tuning::scan::policy_selector{muh::tuning::element::float64,"
        ' muh::tuning::operation::plus, 32, 1LL << 24}(900).threads == 384, "bucket");\n'
    )
    for src in (out / "kernels" / "scan.cu", tmp_path / "t.cu"):
        r = subprocess.run(
            [
                nvcc,
                "-std=c++17",
                "-arch=sm_90",
                f"-I{out / 'include'}",
                "-c",
                str(src),
                "-o",
                str(tmp_path / (src.stem + ".o")),
            ],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr[-3000:]


def test_ops_derive_their_buckets_from_the_policies_they_follow(tmp_path, monkeypatch):
    """An op's size is its rows × hidden; where the reduce policy it follows has size buckets, the op
    gets one policy per bucket (derive), `muh explain` prints each, and the ops emitter generates one
    Policy<T, B> per bucket with the host's dispatch by rows × hidden."""
    import dataclasses

    from muh.codegen import ops
    from muh.families import registry

    real = registry.get
    sized = dataclasses.replace(real("reduce"), size_buckets=True)  # as if the reduce kernels dispatched by size
    monkeypatch.setattr(registry, "get", lambda name: sized if name == "reduce" else real(name))
    text = (
        (ROOT / "specs" / "baseline.muh")
        .read_text()
        .replace(
            "policy float32.plus { threads = 512  items = 24  vec = 2 }",
            "policy float32.plus { threads = 512  items = 24  vec = 2  when elements < 2^20 { threads = 128 }"
            "  when elements >= 2^20 { } }",
        )
    )
    spec = tmp_path / "b.muh"
    spec.write_text(text)
    loaded = load_file(spec)
    p = loaded.derived.ops["bi100"].policies["float32"]
    assert [(b.lo, b.hi) for b in p.buckets] == [(0, 1 << 20), (1 << 20, None)]
    assert [b.row_threads.value for b in p.buckets] == [128, 512]
    assert "[elements < 2^20]" in p.buckets[0].row_threads.inputs["threads_from"]
    assert p.row_threads.value == 128  # the first bucket's numbers are the policy's own
    assert loaded.derived.ops["bi100"].policies["float16"].buckets == []
    from muh.explain import explain

    out = "\n".join(explain(loaded.derived, "ops.float32.row_threads", loaded.spec))
    assert "    when rows × hidden < 2^20\n      row_threads = 128" in out
    assert "    when rows × hidden >= 2^20\n      row_threads = 512" in out
    files = dict(ops.generate(loaded.derived.ops["bi100"], lambda prefix: prefix))
    cu = files["kernels/ops.cu"]
    # one Policy<T, B> per bucket, the host picking B by the call's rows × hidden
    assert "struct Policy<float, 0>" in cu and "struct Policy<float, 1>" in cu and "struct Policy<__half, 1>" not in cu
    f32 = cu[cu.index("case MUH_OP_FLOAT32") : cu.index("case MUH_OP_FLOAT16")]
    assert "if ((n) < 1048576LL)" in f32 and "enum { B = 1 };" in f32


TOPK_BY_K = (
    "muh 1\n"
    + hardware("h200")
    + """\
algorithm topk on h200 {
  types = [float32, float16]
  policy default { threads = 512  items = 4  bits_per_pass = 11 }
  policy float32 {
    threads = 256  bits_per_pass = 8
    when k < 256 {}
    when k >= 256 { threads = 1024  bits_per_pass = 11 }
  }
  policy float16 { when elements < 2^20 { items = 2 }  when elements >= 2^20 {} }
}
"""
)


@pytest.fixture
def topk_spec(tmp_path) -> Path:
    f = tmp_path / "topk.muh"
    f.write_text(TOPK_BY_K)
    return f


def test_topk_buckets_by_k_derive_explain_and_dispatch(cli, topk_spec, tmp_path):
    """topk's record accepts `k` beside `elements`: each policy's buckets test one of them, derive keeps
    which, explain prints `when k >= 256`, the launch picks by k (or rows x cols), the tuning header's
    selector takes both sizes."""
    from muh.pipeline import build

    pols = load_file(topk_spec).derived.algorithms["topk@h200"].policies
    assert [(b.size, b.lo, b.hi) for b in pols["float32"].buckets] == [("k", 0, 256), ("k", 256, None)]
    assert pols["float32"].buckets[1].values["threads"].value == 1024
    assert pols["float32"].buckets[1].values["threads"].rule == "bucket `k >= 256`"
    assert pols["float32"].buckets[0].values["threads"].value == 256  # an empty bucket: the policy's own
    assert [b.size for b in pols["float16"].buckets] == ["elements", "elements"]
    code, out, err = cli("explain", topk_spec, "topk.float32.threads")
    assert code == 0, err
    assert "    when k < 256  (policy float32" in out and "      threads = 1024    [spec]" in out
    out_dir, _ = build(topk_spec, tmp_path / "out")
    one = re.sub(r"\s+", " ", (out_dir / "kernels" / "topk.cu").read_text())
    assert "if (k < 256LL) // k 0..255 return topk_run::run<float, 0>(" in one
    assert "// k 256.. return topk_run::run<float, 1>(" in one
    assert "if ((long long)rows * cols < 1048576LL) // elements 0..1048575 return topk_run::run<__half, 0>(" in one
    params = (out_dir / "include" / "muh" / "kernels" / "params.cuh").read_text()
    assert re.search(r"// size bucket 1: k 256..\nnamespace topk_float32_b1 \{\nconstexpr int kThreads = 1024;", params)
    tuning = re.sub(r"\s+", " ", (out_dir / "include" / "muh" / "tuning" / "tuning_topk.cuh").read_text())
    assert "long long elements;" in tuning and "long long k;" in tuning
    assert "if (type == element::float32 && k >= 256LL)" in tuning
    assert '"size": "k"' in (out_dir / "policies.json").read_text()


@pytest.mark.nvcc
def test_topk_tuning_header_selects_by_k_at_compile_time(nvcc, topk_spec, tmp_path):
    from muh.pipeline import build

    out, _ = build(topk_spec, tmp_path / "out")
    (tmp_path / "t.cu").write_text(
        '#include "muh/tuning/tuning_topk.cuh"\n'
        "using namespace muh::tuning;\n"
        "static_assert(topk::policy_selector{element::float32, operation::plus, 32, 0LL, 1024LL}(900).threads"
        ' == 1024, "k >= 256");\n'
        "static_assert(topk::policy_selector{element::float32, operation::plus, 32, 0LL, 50LL}(900).threads"
        ' == 256, "k < 256");\n'
        "static_assert(topk::policy_selector{element::float16, operation::plus, 32, 1LL << 10, 1024LL}(900).items"
        ' == 2, "elements < 2^20");\n'
    )
    r = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            f"-I{out / 'include'}",
            "-c",
            str(tmp_path / "t.cu"),
            "-o",
            str(tmp_path / "t.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
