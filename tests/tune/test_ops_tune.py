"""`muh tune` of the LLM ops' own policies (rms_norm, silu_and_mul), with a fake compiler and a fake GPU
(synthetic timings, no speed asserts): searched per size bucket of rows × hidden, the winners written
back as `when` blocks with `@measured` evidence (a kept incumbent as kept), read by derive into the ops'
Policy<T, B> and the generated dispatch; a second run with --apply takes every trial from the database
(the device script's flow: search side by side, apply one after the other)."""

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
algorithm rms_norm on lab {
  types = [float32, float16, bfloat16]
  policy default { threads = 256  items = 1 }
  space { threads = [256, 1024]  items = [1, 2] }
}
"""
)
BOUND = 1 << 22


class RowGpu:
    """1024 threads × 1 item: 25 % faster below 2^22 elements, 10 % slower from it."""

    def __init__(self, pool):
        self.pool = pool
        self.calls = 0

    def __call__(self, binary, indices, gpu, *, sizes, runs, warmup, seed, timeout, stop=None):
        self.calls += 1
        src = self.pool.units[int(open(binary, "rb").read().split(b" ")[1]) - 1]
        labels = dict((int(i), lab) for i, lab in re.findall(r"// ---- variant (\d+): (\S+) ----", src))
        base = [1000.0 * (k + 1) for k in range(len(sizes))]
        out = {}
        for i in indices:
            lab = labels[i]
            fast = lab == "ipt_1.tpb_1024"
            var = [b * ((0.75 if n < BOUND else 1.1) if fast else 1.0) for b, n in zip(base, sizes)]
            out[i] = Result("ok", "", list(sizes), var, base, runs)
        return out


@pytest.fixture
def tuned(tmp_path, fake_pool, fake_gpu, cli):
    spec = tmp_path / "lab.muh"
    spec.write_text(SPEC)
    gpu = RowGpu(fake_pool)
    fake_gpu(gpu)

    def run(*args):
        return cli(
            "tune",
            spec,
            "rms_norm",
            "--types",
            "bfloat16",
            "--sizes",
            "2^13,2^20,2^23,2^26",
            "--strategy",
            "exhaustive",
            "--db",
            tmp_path / "t.sqlite",
            "--confirm-rounds",
            "2",
            "--buckets",
            "2^22",
            *args,
        )

    return spec, gpu, run, fake_pool


def test_ops_policy_tuned_per_bucket_and_applied_from_the_database(tuned):
    from muh.codegen import ops
    from muh.pipeline import load_file

    spec, gpu, run, pool = tuned
    code, out, err = run()
    assert code == 0, err
    assert "when" not in spec.read_text()  # no --apply: the spec is untouched
    calls, units = gpu.calls, len(pool.units)
    code, out, err = run("--apply")
    assert code == 0, err
    assert gpu.calls == calls and len(pool.units) == units  # every trial from the database
    text = spec.read_text()
    small = re.search(r"when elements < 2\^22 \{(.*?)\}", text, re.S).group(1)
    large = re.search(r"when elements >= 2\^22 \{(.*?)\}", text, re.S).group(1)
    assert "threads = 1024 @measured(" in small and 'variant = "ipt_1.tpb_1024"' in small and "kept" not in small
    assert "threads = 256 @measured(" in large and "kept = true" in large
    loaded = load_file(spec)
    pol = loaded.derived.ops["lab"].policies["bfloat16"]
    assert [(b.lo, b.hi) for b in pol.buckets] == [(0, BOUND), (BOUND, None)]
    assert [b.row_threads.value for b in pol.buckets] == [1024, 256]
    assert pol.buckets[0].row_threads.origin == "measured" and pol.buckets[0].row_threads.measured is not None
    assert pol.buckets[0].max_items.value == 2  # the register rule at 1024 threads: 16 floats / 8 per vector
    assert loaded.derived.ops["lab"].policies["float16"].buckets == []  # only the type tuned
    cu = dict(ops.generate(loaded.derived.ops["lab"], lambda prefix: prefix))["kernels/ops.cu"]
    bf16 = cu[cu.index("case MUH_OP_BFLOAT16") :]
    assert f"if ((n) < {BOUND}LL)" in bf16 and "struct Policy<muh::bf16, 1>" in cu


def test_ops_family_without_a_block_or_with_a_foreign_type_is_refused(tuned, cli, tmp_path):
    spec, gpu, run, pool = tuned
    code, out, err = cli("tune", spec, "silu_and_mul", "--types", "bfloat16", "--dry-run")
    assert code == 2 and "no algorithm `silu_and_mul`" in err and "algorithm silu_and_mul on <hardware>" in err
    assert "Traceback" not in err
    code, out, err = cli("tune", spec, "rms_norm", "--types", "int32", "--dry-run")
    assert code == 2 and "int32" in err and "Traceback" not in err
