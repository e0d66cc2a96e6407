"""`muh tune` per size bucket, with a fake compiler and a fake GPU (synthetic timings, no speed asserts):
each bucket is searched at its own sizes, CCCL's no-regression rule decides per bucket, and `--apply`
writes `when` blocks with `@measured` evidence — a winner only in the bucket where it wins."""

from __future__ import annotations

import re

import pytest
from lab_card import hardware

from muh.tune.measure import Result

SPEC = (
    """muh 1

"""
    + hardware()
    + """
algorithm scan on lab {
  types = [float32, float64]
  policy default { threads = 128  items = 24  delay = fixed(ns = 688 ns, l2_write_latency = 1140 ns) }
  policy float64 { threads = 256 }
  space { threads = [256, 384] }
}
"""
)
LARGE = 1 << 24


class SizeGpu:
    """384 threads: 20 % faster from 2^24 elements on, 30 % slower below (the issue's scan float64 shape)."""

    fast_label = "tpb_384"

    def __init__(self, pool):
        self.pool = pool
        self.sizes_seen: list[tuple[int, ...]] = []

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        self.sizes_seen.append(tuple(sizes))
        src = self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1]
        labels = dict((int(i), lab) for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", src))
        base = [1000.0 * (k + 1) for k in range(len(sizes))]
        out = {}
        for i in indices:
            lab = labels[i]
            fast = self.fast_label in lab and not lab.startswith("twin:")
            var = [b * ((0.8 if n >= LARGE else 1.3) if fast else 1.0) for b, n in zip(base, sizes)]
            out[i] = Result("ok", "", list(sizes), var, base, runs)
        return out


@pytest.fixture
def tuned(tmp_path, fake_pool, fake_gpu, cli):
    spec = tmp_path / "lab.muh"
    spec.write_text(SPEC)
    gpu = SizeGpu(fake_pool)
    fake_gpu(gpu)

    def run(*args):
        return cli(
            "tune",
            spec,
            "scan",
            "--types",
            "float64",
            "--sizes",
            "2^16,2^24,2^26",
            "--strategy",
            "exhaustive",
            "--db",
            tmp_path / "t.sqlite",
            "--confirm-rounds",
            "2",
            *args,
        )

    return spec, gpu, run


def test_one_search_over_every_size_keeps_the_incumbent(tuned):
    spec, gpu, run = tuned
    code, out, err = run("--apply")
    assert code == 0, err
    assert "when" not in spec.read_text()  # 384 is slower at 2^16: no winner for every size
    assert "threads = 256 @measured(" in spec.read_text() and "kept = true" in spec.read_text()


def test_per_bucket_search_applies_a_winner_in_the_large_bucket_only(tuned):
    from muh.pipeline import load_file

    spec, gpu, run = tuned
    code, out, err = run("--buckets", "2^24", "--apply")
    assert code == 0, err
    assert set(gpu.sizes_seen) == {(1 << 16,), (1 << 24, 1 << 26)}  # each bucket at its own sizes only
    text = spec.read_text()
    small = re.search(r"when elements < 2\^24 \{(.*?)\}", text, re.S).group(1)
    large = re.search(r"when elements >= 2\^24 \{(.*?)\}", text, re.S).group(1)
    assert "threads = 256 @measured(" in small and "kept = true" in small
    assert "threads = 384 @measured(" in large and "kept = true" not in large and 'variant = "tpb_384"' in large
    pol = load_file(spec).derived.algorithms["scan@lab"].policies["float64"]
    assert [(b.lo, b.hi) for b in pol.buckets] == [(0, LARGE), (LARGE, None)]
    assert pol.buckets[1].values["threads"].origin == "measured" and pol.buckets[1].values["threads"].measured
    assert pol.buckets[1].values["threads"].inputs["T4"] == 384
    from muh.check.measured import measured_values
    from muh.codegen.base import BuildContext

    loaded = load_file(spec)
    got = {(p, d) for _, p, d, _ in measured_values(BuildContext(loaded.spec, loaded.derived))}
    assert ("float64 [elements >= 2^24]", "threads") in got  # `muh check`'s measured check sees buckets
    # the spec's buckets are searched again without --buckets; other bounds are refused
    code, out, err = run("--dry-run")
    assert code == 0 and "bucket `elements >= 2^24`" in out and "bucket `elements < 2^24`" in out
    code, out, err = run("--buckets", "2^20", "--dry-run")
    assert code == 2 and "differs from the buckets of the spec's scan float64 policy" in err


def test_sizes_in_one_bucket_search_it_and_keep_the_other(tuned):
    """`--sizes` in the small bucket only, on a spec that has buckets: the large bucket is not searched
    and keeps its values and their evidence, as they were; the small one gets its decision."""
    from muh.pipeline import load_file

    spec, gpu, run = tuned
    code, out, err = run("--buckets", "2^24", "--apply")
    assert code == 0, err
    large_before = re.search(r"when elements >= 2\^24 \{(.*?)\}", spec.read_text(), re.S).group(1)
    spec.write_text(re.sub(r"when elements < 2\^24 \{.*?\}", "when elements < 2^24 {}", spec.read_text(), flags=re.S))
    gpu.sizes_seen.clear()
    code, out, err = run("--sizes", "2^16,2^20", "--db", spec.parent / "fresh.sqlite", "--apply")
    assert code == 0, err
    assert "scan float64 [elements >= 2^24]: not searched (no value of --sizes in it)" in out
    assert set(gpu.sizes_seen) == {(1 << 16, 1 << 20)}
    text = spec.read_text()
    assert re.search(r"when elements >= 2\^24 \{(.*?)\}", text, re.S).group(1) == large_before
    assert "kept = true" in re.search(r"when elements < 2\^24 \{(.*?)\}", text, re.S).group(1)
    pol = load_file(spec).derived.algorithms["scan@lab"].policies["float64"]
    assert pol.buckets[1].values["threads"].value == 384 and pol.buckets[1].values["threads"].origin == "measured"
    # a bucket --buckets names must get a size
    code, out, err = run("--buckets", "2^24", "--sizes", "2^16,2^20", "--dry-run")
    assert code == 2 and "no size of --sizes" in err and "elements >= 2^24" in err


def test_a_bucket_without_a_size_is_refused(tuned):
    spec, gpu, run = tuned
    code, out, err = run("--buckets", "2^17,2^18", "--dry-run")
    assert code == 2 and "no size of --sizes" in err and "elements in 2^17..2^18" in err
    assert "Traceback" not in err


TOPK_SPEC = (
    """muh 1

"""
    + hardware()
    + """
algorithm topk on lab {
  types = [float32]
  policy default { threads = 512  items = 4  bits_per_pass = 11 }
  policy float32 { threads = 256  bits_per_pass = 8 }
  space { threads = [256, 1024]  bits_per_pass = [8, 11] }
}
"""
)


class KGpu:
    """topk: 1024 threads x 11 bits twice as fast at k = 1024, 20 % slower at k = 50 (the H200's shape)."""

    def __init__(self, pool):
        self.pool = pool
        self.ks: list[int] = []

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        src = self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1]
        k = int(re.search(r"const int kK = (\d+);", src).group(1))
        self.ks.append(k)
        labels = dict((int(i), lab) for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", src))
        base = [1000.0 * (j + 1) for j in range(len(sizes))]
        out = {}
        for i in indices:
            lab = labels[i]
            wide = "tpb_1024" in lab and "bpp_11" in lab and not lab.startswith("twin:")
            var = [b * ((0.5 if k >= 256 else 1.2) if wide else 1.0) for b in base]
            out[i] = Result("ok", "", list(sizes), var, base, runs)
        return out


@pytest.fixture
def tuned_k(tmp_path, fake_pool, fake_gpu, cli):
    spec = tmp_path / "lab.muh"
    spec.write_text(TOPK_SPEC)
    gpu = KGpu(fake_pool)
    fake_gpu(gpu)

    def run(*args):
        return cli(
            "tune",
            spec,
            "topk",
            "--types",
            "float32",
            "--sizes",
            "152064,1216512",
            "--strategy",
            "exhaustive",
            "--db",
            tmp_path / "t.sqlite",
            "--confirm-rounds",
            "2",
            *args,
        )

    return spec, gpu, run


def test_topk_searched_per_k_bucket_applies_when_k_blocks(tuned_k):
    """`--buckets k:256` with one k per bucket: each bucket measured at its own k only, the no-regression
    rule per bucket, `--apply` writes `when k < 256` (kept, with evidence) and `when k >= 256` (the winner);
    the spec then derives to k buckets and its topk launch picks them by k."""
    from muh.pipeline import load_file

    spec, gpu, run = tuned_k
    code, out, err = run("--buckets", "k:256", "--topk-shape", "152064x50,1024", "--apply")
    assert code == 0, err
    assert set(gpu.ks) == {50, 1024}
    text = spec.read_text()
    small = re.search(r"when k < 256 \{(.*?)\}", text, re.S).group(1)
    large = re.search(r"when k >= 256 \{(.*?)\}", text, re.S).group(1)
    assert "kept = true" in small and "threads = 256 @measured(" in small
    assert "threads = 1024 @measured(" in large and "bits_per_pass = 11 @measured(" in large
    assert "kept = true" not in large and 'variant = "tpb_1024.bpp_11"' in large
    loaded = load_file(spec)
    pol = loaded.derived.algorithms["topk@lab"].policies["float32"]
    assert [(b.size, b.lo, b.hi) for b in pol.buckets] == [("k", 0, 256), ("k", 256, None)]
    assert pol.buckets[1].values["threads"].origin == "measured"
    # searched again from the spec's own buckets (same k per bucket); other bounds or keys are refused
    code, out, err = run("--topk-shape", "152064x50,1024", "--dry-run")
    assert code == 0 and "bucket `k >= 256`" in out and "k = 1024" in out and "k = 50" in out
    code, out, err = run("--buckets", "k:512", "--topk-shape", "152064x50,1024", "--dry-run")
    assert code == 2 and "differs from the buckets of the spec's topk float32 policy (k < 256, k >= 256)" in err
    code, out, err = run("--buckets", "2^20", "--dry-run")
    assert code == 2 and "differs from the buckets" in err


def test_topk_k_bucket_flag_errors(tuned_k):
    spec, gpu, run = tuned_k
    code, out, err = run("--buckets", "k:256", "--topk-shape", "152064x50", "--dry-run")
    assert code == 0 and "topk float32 [k >= 256]: not searched" in out and "bucket `k < 256`" in out
    code, out, err = run("--buckets", "k:256", "--topk-shape", "152064x50,100,1024", "--dry-run")
    assert code == 2 and "more than one k" in err
    code, out, err = run("--buckets", "rows:256", "--dry-run")
    assert code == 2 and "topk's buckets cannot test `rows`" in err and "elements, k" in err
    code, out, err = run("--topk-shape", "152064x50,1024", "--dry-run")
    assert code == 2 and "several values of k" in err
    assert "Traceback" not in err


def test_a_k_bucket_without_a_k_keeps_the_policy_values(tuned_k):
    """Only k = 1024 measured: `k < 256` is not searched and becomes an empty `when` block (the policy's
    own values, as they were); `k >= 256` gets the winner."""
    from muh.pipeline import load_file

    spec, gpu, run = tuned_k
    code, out, err = run("--buckets", "k:256", "--topk-shape", "152064x1024", "--apply")
    assert code == 0, err
    assert set(gpu.ks) == {1024} and "not searched" in out
    text = spec.read_text()
    assert re.search(r"when k < 256 \{\}", text)
    assert "threads = 1024 @measured(" in re.search(r"when k >= 256 \{(.*?)\}", text, re.S).group(1)
    pol = load_file(spec).derived.algorithms["topk@lab"].policies["float32"]
    assert pol.buckets[0].values["threads"].value == 256 and pol.buckets[1].values["threads"].value == 1024
    # `--against` the untuned spec at k = 1024 times the bucket that k falls in (old time / new time = 2)
    old = spec.parent / "old.muh"
    old.write_text(TOPK_SPEC)
    code, out, err = run("--topk-shape", "152064x1024", "--against", str(old))
    assert code == 0, err
    assert "tpb_1024.bpp_11 (this spec) against tpb_256.bpp_8" in out and "2.0000, 2.0000" in out


HARDWARE = SPEC[: SPEC.index("algorithm scan")]
FAMILY = """algorithm {family} on lab {{
  types = [float64]
  policy default {{ {base} }}
  space {{ threads = [256, 512] }}
}}
"""
BASES = {
    "reduce": "threads = 256  items = 16  vec = 2",
    "transform": "threads = 256  bytes_in_flight = 48 KiB",
    "histogram": "threads = 256  pixels_per_thread = 8  vec = 4",
}


class FamilyGpu(SizeGpu):
    """512 threads: 20 % faster from 2^24 elements on, 30 % slower below; remembers each variant's
    kernel source (the inlined params.cuh of the library the harness launches) by label and sizes."""

    fast_label = "tpb_512"

    def __init__(self, pool, family):
        super().__init__(pool)
        self.family, self.launched = family, {}

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        src = self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1]
        parts = re.split(r"// ---- variant (\d+): (\S+) ----", src)
        for i, lab, body in zip(parts[1::3], parts[2::3], parts[3::3]):
            got = re.search(rf"namespace {self.family}_float64 \{{\nconstexpr int kThreads = (\d+);", body)
            self.launched.setdefault((lab, tuple(sizes)), (int(got.group(1)), f"{self.family}_float64_b1" in body))
        return super().__call__(
            binary, indices, gpu, sizes=sizes, runs=runs, warmup=warmup, seed=seed, timeout=timeout, stop=stop
        )


@pytest.mark.parametrize("family", sorted(BASES))
def test_reduce_transform_histogram_tune_per_bucket_and_the_result_builds(family, tmp_path, fake_pool, fake_gpu, cli):
    """`muh tune <family> --buckets 2^24 --apply`: each bucket's variants are measured in a library whose
    one policy for every size is the variant's (the harness launches the bucket's policy), the winner
    is written into the large bucket only, and the spec then builds with a dispatch by element count."""
    from muh.pipeline import build

    spec = tmp_path / "lab.muh"
    spec.write_text(HARDWARE + FAMILY.format(family=family, base=BASES[family]))
    gpu = FamilyGpu(fake_pool, family)
    fake_gpu(gpu)
    code, out, err = cli(
        "tune",
        spec,
        family,
        "--types",
        "float64",
        "--sizes",
        "2^16,2^24,2^26",
        "--strategy",
        "exhaustive",
        "--db",
        tmp_path / "t.sqlite",
        "--confirm-rounds",
        "2",
        "--buckets",
        "2^24",
        "--apply",
    )
    assert code == 0, err
    assert gpu.launched[("tpb_512", (1 << 24, 1 << 26))] == (512, False)  # the variant's policy, no buckets
    assert gpu.launched[("tpb_512", (1 << 16,))] == (512, False)
    text = spec.read_text()
    large = re.search(r"when elements >= 2\^24 \{(.*?)\}", text, re.S).group(1)
    small = re.search(r"when elements < 2\^24 \{(.*?)\}", text, re.S).group(1)
    assert "threads = 512 @measured(" in large and "threads = 256 @measured(" in small
    built, _ = build(spec, tmp_path / "out")
    cu = re.sub(r"\s+", " ", (built / "kernels" / f"{family}.cu").read_text())
    assert f"if (n < 16777216LL) // elements 0..16777215 return {family}_run::run<double, 0>(" in cu
    assert f"return {family}_run::run<double, 1>(" in cu
    assert re.search(
        rf"namespace {family}_float64_b1 {{\nconstexpr int kThreads = 512;",
        (built / "include" / "muh" / "kernels" / "params.cuh").read_text(),
    )


def test_buckets_are_refused_where_the_kernels_do_not_dispatch_by_size(tuned, monkeypatch):
    """--buckets for a family whose launch picks no bucket (as if scan's did not) is a flag error:
    `--apply` would write `when` blocks its build refuses."""
    import dataclasses

    from muh import families

    real = families.get
    unsized = dataclasses.replace(real("scan"), size_buckets=False)
    monkeypatch.setattr(families, "get", lambda name: unsized if name == "scan" else real(name))
    monkeypatch.setattr(families, "find", lambda name: unsized if name == "scan" else families.registry.find(name))
    spec, gpu, run = tuned
    code, out, err = run("--buckets", "2^24", "--dry-run")
    assert code == 2 and "--buckets 2^24: the scan kernels do not dispatch by size" in err, err
    assert "Traceback" not in err


class ConfirmFailsGpu(SizeGpu):
    """The search measures as SizeGpu; in the confirmation (the unit with the base's twin) every
    candidate fails its gate while the base and the twin measure: the H200's uint32 histogram run of
    2026-12-02, where a harness race failed every confirmed candidate."""

    def __call__(self, binary, indices, gpu, **kw):
        out = super().__call__(binary, indices, gpu, **kw)
        src = self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1]
        labels = dict((int(i), lab) for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", src))
        if any(lab.startswith("twin:") for lab in labels.values()):
            for i in indices:
                if not labels[i].startswith("twin:"):
                    out[i] = Result("wrong_result", "bin 0 = 1 != reference 2")
        return out


def test_candidates_whose_every_confirmation_failed_keep_the_incumbent_with_search_evidence(
    tmp_path, fake_pool, fake_gpu, cli
):
    spec = tmp_path / "lab.muh"
    spec.write_text(SPEC)
    fake_gpu(ConfirmFailsGpu(fake_pool))
    code, out, err = cli(
        "tune",
        spec,
        "scan",
        "--types",
        "float64",
        "--sizes",
        "2^24,2^26",
        "--strategy",
        "exhaustive",
        "--db",
        tmp_path / "t.sqlite",
        "--confirm-rounds",
        "2",
        "--apply",
    )
    assert code == 0, err
    assert "no candidate beats the base" in out
    text = spec.read_text()
    # kept, with the search's best challenger (tpb_384, 1.25 at both sizes) as the evidence
    assert "threads = 256 @measured(" in text and "kept = true" in text and 'variant = "tpb_384"' in text
