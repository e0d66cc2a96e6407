"""Negative control (issue 8): a block reduce that assumes 32-lane warps.

The planted variant is correct on the H200 natively (its warps ARE 32 lanes), so a native run
cannot see the bug; the same kernels with the logical warp emulated at 64 lanes (the BI-V100's)
must produce wrong sums. If the emulated run passed, the emulation would not be emulating.
"""

from __future__ import annotations

import pytest
from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda]


def _sum(k, n):
    import gpu_helpers as refs
    import torch

    from muh.families import calls

    x = refs.small_ints(n, "float32", 1, 9)  # positive: a double-counted warp always shows
    return calls.reduce(x, "sum", kernels=k).item(), int(x.to(torch.int64).sum().item())


def test_planted_bug_invisible_natively(kernels):
    for n in (1000, 65537, 1 << 20):
        got, want = _sum(kernels["planted-native32"], n)
        assert got == want


def test_planted_bug_caught_by_warp64_emulation(kernels):
    wrong = 0
    for n in (1000, 65537, 1 << 20):
        got, want = _sum(kernels["planted-emu64"], n)
        wrong += got != want
    assert wrong == 3, "the 32-lane assumption was NOT caught under 64-lane emulation"


def test_real_kernels_pass_where_planted_fails(kernels):
    for n in (1000, 65537, 1 << 20):
        got, want = _sum(kernels["bi100-emu64"], n)
        assert got == want
