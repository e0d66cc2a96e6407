"""GPU test fixtures: generate every kernel variant (gpu_helpers.variant_configs) and build them
(C interface, cached by content hash) in parallel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_helpers (pytest runs with --import-mode=importlib)
from gpu_helpers import NO_CUDA, variant_configs  # noqa: E402


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    from muh.codegen.kernels import emitter

    root = tmp_path_factory.mktemp("generated")
    out = {}
    for name, cfg in variant_configs().items():
        emitter.write(cfg, root / name)
        out[name] = root / name
    return out


@pytest.fixture(scope="session")
def kernels(generated):
    if NO_CUDA:
        pytest.skip(f"GPU test: {NO_CUDA}")
    from gpu_helpers import prebuild

    from muh import families
    from muh.runtime.library import Kernels

    libs = prebuild(next(iter(generated.values())).parent)
    return {name: Kernels.from_library(path, families.api()) for name, path in libs.items()}
