"""Size buckets on the GPU: the H200's reduce, transform and histogram kernels with a second policy
below 2^16 elements (other threads, items, bytes in flight: its own instantiation, picked by the
generated host chain), run at counts on both sides of the boundary and against the references of
test_kernels_gpu / test_histogram_gpu: sums of small integers and scales exactly, histograms
exactly (CUB's bin arithmetic on the CPU). Which bucket a count calls is checked on the CPU
(tests/codegen/test_size_buckets.py); here each bucket's kernels must be right. Builds only these
three families."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import NO_CUDA, requires_cuda  # noqa: E402

pytestmark = [pytest.mark.gpu, requires_cuda]
EDGE = 1 << 16  # the buckets' boundary
SIZES = (1, 33, EDGE - 1, EDGE, EDGE + 1, 3 * EDGE + 5, (1 << 22) + 3)
FAMILIES = ("reduce", "transform", "histogram")


def config():
    """The H200 preset's three families, each bucketed types' policy below EDGE replaced by a small one."""
    from bench import presets
    from muh.families import histogram, reduce, transform

    h200 = presets.h200()
    cfg = replace(h200, name="h200-buckets", policies={f: h200.of(f) for f in FAMILIES})
    small = {
        "reduce": {"float32": reduce.Policy(128, 4, 4, "default"), "float64": reduce.Policy(64, 2, 2)},
        "transform": {"float32": transform.Policy(128, 4 * 1024), "float16": transform.Policy(64, 2 * 1024)},
        "histogram": {"uint8": histogram.Policy(128, 4, 4, 2), "float32": histogram.Policy(64, 3, 1)},
    }
    for fam, pols in small.items():
        table = cfg.of(fam)
        cfg = cfg.with_policies(fam, table, {d: ((0, EDGE, p), (EDGE, None, table[d])) for d, p in pols.items()})
    return cfg


@pytest.fixture(scope="module")
def bucketed(tmp_path_factory):
    if NO_CUDA:
        pytest.skip(f"GPU test: {NO_CUDA}")
    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    major, minor = torch.cuda.get_device_capability()
    root = tmp_path_factory.mktemp("buckets")
    emitter.write(config(), root)
    return Kernels.from_library(build.build_capi(root, arch=f"sm_{major}{minor}"), families.api())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduce_on_both_sides_of_the_boundary(bucketed, dtype):
    import gpu_helpers as refs
    import torch

    from muh.families import calls

    for n in SIZES:
        x = refs.small_ints(n, dtype)
        got = calls.reduce(x, "sum", kernels=bucketed).item()
        want = int(x.to(torch.int64).sum().item())
        assert got == want, f"reduce {dtype} n={n}: {got} != {want} (seed {refs.SEED})"
        assert calls.reduce(x, "max", kernels=bucketed).item() == x.max().item(), f"reduce max {dtype} n={n}"


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_transform_on_both_sides_of_the_boundary(bucketed, dtype):
    import gpu_helpers as refs
    import torch

    from muh.families import calls

    for n in SIZES:
        x = refs.normal(n, dtype)
        out = refs.poison(torch.empty_like(x))
        calls.transform(x, "scale", alpha=0.75, out=out, kernels=bucketed)
        assert bool((out == (x.float() * 0.75).to(x.dtype)).all()), f"transform {dtype} n={n} (seed {refs.SEED})"


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_histogram_on_both_sides_of_the_boundary(bucketed, dtype):
    import gpu_helpers as refs
    from test_histogram_gpu import _check

    for n in SIZES:
        x = refs.small_ints(n, dtype, 0, 256) if dtype == "uint8" else refs.normal(n, dtype)
        lower, upper = (0, 256) if dtype == "uint8" else (-2.0, 2.0)
        _check(bucketed, x, 37, lower, upper, f"histogram {dtype} n={n} (seed {refs.SEED})")
