"""topk policies chosen by k (`when k < 256 { … }  when k >= 256 { … }`) on the GPU: the generated
launch code picks the bucket by k, and both sides of the boundary give torch.topk's values (exactly)
and the stable sort's indices (ties to the lower index).

The two buckets get deliberately different policies (256 threads x 2 items x 8-bit passes below 256,
1024 x 4 x 11 from 256 on), so a dispatch that ran one bucket's kernel for the other's k would still
have to be right at every k — and a bucket whose kernel cannot serve its k range fails here."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]

BOUNDARY = 256
# (rows, row length, k): k on both sides of the boundary and at it, vocabulary rows (the split path),
# a short row (one block), an odd row length (scalar loads)
CASES = [
    (4, 152064, 1),
    (4, 152064, 50),
    (3, 152064, BOUNDARY - 1),
    (3, 152064, BOUNDARY),
    (3, 152064, BOUNDARY + 1),
    (2, 152064, 1024),
    (5, 4097, 255),
    (5, 4097, 256),
    (2, 40001, 700),
]


def _config():
    from bench import presets
    from muh.families import topk as T

    small = T.Policy(threads=256, items=2, bits_per_pass=8)
    large = T.Policy(threads=1024, items=4, bits_per_pass=11)
    buckets = {d: ((0, BOUNDARY, small), (BOUNDARY, None, large)) for d in T.RECORD.dtypes}
    cfg = replace(presets.h200(), policies={}, buckets={}, name="h200-topk-by-k")
    return cfg.with_policies("topk", {d: small for d in T.RECORD.dtypes}, buckets, {d: "k" for d in buckets})


@pytest.fixture(scope="module")
def by_k(tmp_path_factory):
    import torch

    from muh import families
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh.runtime.library import Kernels

    cfg = _config()
    root = tmp_path_factory.mktemp("topk-by-k")
    emitter.write(cfg, root)
    source = (root / "kernels" / "topk.cu").read_text()
    assert f"if (k < {BOUNDARY}LL)" in source  # the launch picks the bucket by k
    major, minor = torch.cuda.get_device_capability()
    return Kernels.from_library(build.build_capi(root, arch=f"sm_{major}{minor}"), families.api())


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_topk_by_k_matches_torch_on_both_sides_of_the_boundary(by_k, dtype):
    import gpu_helpers as refs
    import torch

    from muh.families import calls

    for rows, cols, k in CASES:
        x = refs.normal(rows * cols, dtype).reshape(rows, cols)
        vals = refs.poison(torch.empty((rows, k), dtype=x.dtype, device="cuda"))
        idx = torch.full((rows, k), -1, dtype=torch.int64, device="cuda")
        calls.topk(x, k, out=(vals, idx), kernels=by_k)
        want = torch.topk(x, k, dim=1, largest=True, sorted=True)
        where = (
            f"topk {dtype} {rows}x{cols} k={k} (bucket {'k < 256' if k < BOUNDARY else 'k >= 256'}, seed {refs.SEED})"
        )
        assert torch.equal(vals, want.values), f"values: {where}"
        assert torch.equal(x.gather(1, idx), vals), f"indices do not point at their values: {where}"
        stable = torch.sort(x, dim=1, descending=True, stable=True).indices[:, :k]
        assert torch.equal(idx, stable), f"indices (ties to the lower index): {where}"
