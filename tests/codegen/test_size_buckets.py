"""Size buckets in every family whose launch has an element count (reduce, transform, histogram; scan:
tests/derive/test_buckets.py): a bucketed spec builds, the kernels get one Policy<T, B> per bucket
and a host chain that picks it by the element count, the tuning header prints each bucket with its
provenance, nvcc compiles it all, and the compiled chain — run on the CPU, the family's launcher
replaced by one that answers its policy's threads — calls the bucket of each count."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from lab_card import hardware

SPEC = (
    "muh 1\n"
    + hardware("h200")
    + """\
algorithm reduce on h200 {
  types = [float32, float64]
  policy default { threads = 256  items = 16  vec = 4 }
  policy float64 { when elements < 2^24 { }  when elements >= 2^24 { threads = 512 } }
}
algorithm transform on h200 {
  types = [float32, float64]
  policy default { threads = 256  bytes_in_flight = 48 KiB }
  policy float64 {
    when elements < 2^20 { threads = 128 }
    when elements in 2^20..2^24 { }
    when elements >= 2^24 { threads = 512 }
  }
}
algorithm histogram on h200 {
  types = [uint8, float32]
  policy default { threads = 384  pixels_per_thread = 16  vec = 4 }
  policy uint8 { threads = 768  pixels_per_thread = 12  when elements < 2^24 { }
                 when elements >= 2^24 { threads = 512 } }
}
"""
)
# (family, C entry point's dtype, element count, threads of the bucket the count falls in): from SPEC.
PICKS = [
    ("reduce", "FLOAT64", 0, 256),
    ("reduce", "FLOAT64", (1 << 24) - 1, 256),
    ("reduce", "FLOAT64", 1 << 24, 512),
    ("reduce", "FLOAT64", 1 << 40, 512),
    ("reduce", "FLOAT32", 1 << 30, 256),
    ("transform", "FLOAT64", 1, 128),
    ("transform", "FLOAT64", (1 << 20) - 1, 128),
    ("transform", "FLOAT64", 1 << 20, 256),
    ("transform", "FLOAT64", (1 << 24) - 1, 256),
    ("transform", "FLOAT64", 1 << 24, 512),
    ("transform", "FLOAT32", 1 << 30, 256),
    ("histogram", "UINT8", (1 << 24) - 1, 768),
    ("histogram", "UINT8", 1 << 24, 512),
    ("histogram", "FLOAT32", 1 << 30, 384),
]
FAMILIES = ("reduce", "transform", "histogram")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from muh.pipeline import build

    root = tmp_path_factory.mktemp("buckets")
    (root / "k.muh").write_text(SPEC)
    out, _ = build(root / "k.muh", root / "out")
    return out


def _tokens(path: Path) -> str:
    return re.sub(r"\s+", " ", path.read_text())  # `muh build` formats the C++ (clang-format)


def test_each_bucket_is_a_policy_and_the_launch_picks_it_by_count(built):
    reduce = _tokens(built / "kernels" / "reduce.cu")
    assert "template <> struct Policy<double, 1> {" in reduce
    assert "kThreads = params::reduce_float64_b1::kThreads," in reduce
    assert (
        "case MUH_FLOAT64: if (n < 16777216LL) // elements 0..16777215 return reduce_run::run<double, 0>(op," in reduce
    )
    assert "// elements 16777216.. return reduce_run::run<double, 1>(op," in reduce
    assert "case MUH_FLOAT32: return reduce_run::run<float, 0>(op," in reduce  # one policy: no chain
    transform = _tokens(built / "kernels" / "transform.cu")
    assert "if (n < 1048576LL) // elements 0..1048575 return transform_run::run<double, 0>(" in transform
    assert "if (n < 16777216LL) // elements 1048576..16777215 return transform_run::run<double, 1>(" in transform
    assert "return transform_run::run<double, 2>(" in transform
    histogram = _tokens(built / "kernels" / "histogram.cu")
    assert "template <> struct Policy<unsigned char, 1> {" in histogram
    assert "return histogram_run::run<unsigned char, 1>(samples, n," in histogram
    params = (built / "include" / "muh" / "kernels" / "params.cuh").read_text()
    for ns, threads in (
        ("reduce_float64_b1", 512),
        ("transform_float64", 128),
        ("transform_float64_b2", 512),
        ("histogram_uint8_b1", 512),
    ):
        assert re.search(rf"namespace {ns} {{\nconstexpr int kThreads = {threads};", params), ns


def test_the_tuning_headers_show_each_bucket_with_its_provenance(built):
    tuning = built / "include" / "muh" / "tuning"
    reduce = (tuning / "tuning_reduce.cuh").read_text()
    assert "if (type == element::float64 && elements >= 16777216LL) {" in reduce
    large = reduce[reduce.index("elements >= 16777216LL") :]
    assert "// float64, elements >= 2^24" in large and "T4=512" in large
    # which bucket a value was written in (not the spec's line: a comment above it would change the header)
    assert (
        "// threads: mem_bound of T4=512, I4=16 (smem 49152 B, warp 32) (bucket `elements >= 2^24` of policy float64)"
        in large
    )
    assert ".muh:" not in reduce
    transform = (tuning / "tuning_transform.cuh").read_text()
    assert "elements < 1048576LL" in transform and "elements >= 16777216LL" in transform
    assert "128,    // threads: bucket `elements < 2^20` of policy float64" in transform
    histogram = (tuning / "tuning_histogram.cuh").read_text()
    assert "elements >= 16777216LL" in histogram
    assert "512,  // threads: bucket `elements >= 2^24` of policy uint8" in histogram


@pytest.mark.nvcc
@pytest.mark.slow
def test_bucketed_kernels_compile(nvcc, built, tmp_path):
    jobs = [
        subprocess.Popen(
            [
                nvcc,
                "-std=c++17",
                "-arch=sm_90",
                f"-I{built / 'include'}",
                "-c",
                str(built / "kernels" / f"{f}.cu"),
                "-o",
                str(tmp_path / f"{f}.o"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for f in FAMILIES
    ]
    for f, job in zip(FAMILIES, jobs):
        out, _ = job.communicate()
        assert job.returncode == 0, f"{f}.cu: {out[-3000:]}"


# Stand-ins for what the generated chain calls: each family's launcher answers its policy's threads,
# the host layer checks nothing (no GPU). The generated .cu files are compiled as they are.
STUBS = {
    "muh/host.cuh": """#pragma once
#include <cuda_runtime.h>
#include "muh/kernels/api.h"
#define MUH_LIBRARY_LOCAL
namespace muh { namespace host {
constexpr const char* kSpecName = "stub";
inline int check_device() { return 0; }
inline int fail(int code, const char*, ...) { return -code; }
} }
""",
    "muh/kernels/reduce.cuh": """#pragma once
#include <stddef.h>
namespace muh {
struct Sum {}; struct Max {}; struct Min {};
namespace reduce_impl {
constexpr size_t kCounterBytes = 0;
template <typename T, typename P, typename Op>
int run(const void*, long long, void*, void*, size_t, cudaStream_t) { return P::kThreads; }
} }
""",
    "muh/kernels/transform.cuh": """#pragma once
namespace muh { namespace transform_impl {
struct Scale { float a; }; struct Relu { float a; }; struct Silu { float a; };
template <typename T, typename P, typename Op>
int run(const void*, void*, long long, Op, cudaStream_t) { return P::kThreads; }
} }
""",
    "muh/kernels/histogram_host.cuh": """#pragma once
namespace muh { namespace histogram_impl {
template <typename T, typename P>
int run(const void*, long long, int, double, double, int*, cudaStream_t) { return P::kThreads; }
} }
""",
}
CALLS = {
    "reduce": "muh_reduce(MUH_SUM, MUH_{d}, 0, {n}LL, 0, 0, 0, 0)",
    "transform": "muh_transform(MUH_SCALE, MUH_{d}, 0, 0, {n}LL, 1.0f, 0)",
    "histogram": "muh_histogram_even(MUH_{d}, 0, {n}LL, 4, 0.0, 1.0, 0, 0)",
}


@pytest.mark.nvcc
def test_the_compiled_chain_calls_the_bucket_of_the_count(nvcc, built, tmp_path):
    for rel, text in STUBS.items():
        (tmp_path / "stub" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "stub" / rel).write_text(text)
    lines = [f'  printf("%d\\n", {CALLS[f].format(d=d, n=n)});' for f, d, n, _ in PICKS]
    (tmp_path / "main.cu").write_text(
        '#include <stdio.h>\n#include "muh/kernels/api.h"\nint main() {\n' + "\n".join(lines) + "\n  return 0;\n}\n"
    )
    exe = tmp_path / "picks"
    r = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            f"-I{tmp_path / 'stub'}",
            f"-I{built / 'include'}",
            *(str(built / "kernels" / f"{f}.cu") for f in FAMILIES),
            str(tmp_path / "main.cu"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    assert [int(g) for g in got] == [t for *_, t in PICKS], list(zip(PICKS, got))


@pytest.mark.parametrize("family", FAMILIES)
def test_a_parity_target_stays_bucket_free(family, tmp_path):
    """`cub_parity = true`: the policies are CUB's, one per type; a bucket in any family is refused."""
    from muh.diagnostics import MuhError
    from muh.pipeline import load_file

    algo = SPEC[SPEC.index(f"algorithm {family}") :]
    algo = algo[: algo.index("\n}\n") + 3]
    spec = tmp_path / "p.muh"
    spec.write_text("muh 1\n" + hardware("h200", cub_parity="true") + algo)
    with pytest.raises(MuhError) as err:
        load_file(spec)
    assert [d.code for d in err.value.diagnostics] == ["E-BUCKET"]
    assert "CUB parity target" in err.value.diagnostics[0].message
    spec.write_text(re.sub(r"when elements[^{]*\{[^}]*\}", "", spec.read_text()))
    assert load_file(spec).derived.algorithms[f"{family}@h200"]  # the same spec without its buckets loads
