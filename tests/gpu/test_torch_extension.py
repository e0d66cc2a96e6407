"""The PyTorch-extension backend (torch.utils.cpp_extension.load) builds, loads and computes."""

from __future__ import annotations

import pytest
from gpu_helpers import requires_cuda

pytestmark = [pytest.mark.gpu, requires_cuda, pytest.mark.slow]


def test_torch_extension_backend(generated):
    import torch

    from muh.families import calls
    from muh.runtime import load

    k = load(generated["h200"], backend="torch")
    assert k.warp_size == 32
    x = torch.randint(-8, 9, (100_003,), device="cuda").float()
    assert calls.reduce(x, kernels=k).item() == x.double().sum().item()
    assert torch.equal(calls.scan(x, kernels=k), torch.cumsum(x.double(), 0).float())
    v, i = calls.topk(x.reshape(1, -1), 5, kernels=k)
    assert torch.equal(v, torch.sort(x, descending=True, stable=True).values[:5].reshape(1, -1))
