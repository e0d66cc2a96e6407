"""Real nvcc compilations of generated variant units (several variants per translation unit), on
the local thread pool and, when Ray is installed, on a local Ray cluster. No GPU needed."""
from __future__ import annotations

import pytest

from muh.tune.space import build_space, effective, static_filter
from muh.tune.unit import UnitVariant, nvcc_args, render_unit

pytestmark = [pytest.mark.slow]


def _units(loaded, family, n_units=2, per_unit=2):
    hw = loaded.spec.hardware["lab"]
    sp = build_space(loaded.spec, family, "float32")
    keep, _ = static_filter(sp, hw)
    dims = tuple(sp.dims)
    base = UnitVariant(0, sp.base.label(dims), effective(sp.base, sp))
    out = []
    for u in range(n_units):
        chunk = keep[u * per_unit:(u + 1) * per_unit]
        vs = [base] + [UnitVariant(i, v.label(dims), effective(v, sp)) for i, v in enumerate(chunk, start=1)]
        out.append(render_unit(family, "float32", hw, vs, [1 << 16]))
    return hw, out


@pytest.mark.nvcc
def test_units_compile_locally(loaded, nvcc):
    from muh.tune.compile import LocalPool

    hw, units = _units(loaded, "scan", n_units=1, per_unit=3)
    pool = LocalPool(2)
    try:
        res = [f.result() for f in [pool.submit(u, nvcc_args(hw), nvcc, 600) for u in units]]
    finally:
        pool.shutdown()
    assert all(r.ok for r in res), res[0].log
    assert all(r.binary[:4] == b"\x7fELF" for r in res)


@pytest.mark.nvcc
def test_a_compile_error_is_a_result_not_an_exception(nvcc):
    from muh.tune.compile import compile_job

    r = compile_job("this is not C++", ["-O0"], nvcc, 120)
    assert not r.ok and not r.killed and r.log


@pytest.mark.nvcc
def test_ray_local_cluster_compiles_real_units(loaded, nvcc):
    # Marked `nvcc`: on CI (which installs '.[test,tune]') a skip is a failure.
    ray = pytest.importorskip("ray", reason="Ray is the optional extra muh[tune]")
    from muh.tune.compile import RayPool

    hw, units = _units(loaded, "reduce", n_units=2, per_unit=2)
    pool = RayPool(None, workers=2)
    try:
        res = [f.result(timeout=900) for f in [pool.submit(u, nvcc_args(hw), nvcc, 600) for u in units]]
    finally:
        pool.shutdown()
    assert ray.is_initialized() is False
    assert all(r.ok for r in res), res[0].log
    assert all(r.binary[:4] == b"\x7fELF" for r in res)
