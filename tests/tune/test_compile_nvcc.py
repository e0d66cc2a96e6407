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
    keep, _ = static_filter(sp)
    dims = tuple(sp.dims)
    base = UnitVariant(0, sp.base.label(dims), effective(sp.base, sp))
    out = []
    for u in range(n_units):
        chunk = keep[u * per_unit : (u + 1) * per_unit]
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


def test_the_harness_template_knows_no_family():
    """The per-family parts come from the family records' fragments (no `family ==` ladders)."""
    from importlib.resources import files as res

    text = res("muh.tune").joinpath("templates/harness.cu.j2").read_text()
    from muh import families

    assert "family ==" not in text and "family==" not in text
    for rec in families.records():
        assert f'"{rec.name}"' not in text, rec.name


@pytest.mark.nvcc
def test_every_tunable_family_has_a_harness_unit_that_compiles(nvcc, tmp_path):
    """Each family `muh tune` can vary has a harness fragment in its record, and the unit (the H200
    spec's base policy of one of its types) compiles: the fragment's calls match the family's C
    interface. Device code unoptimised (-Xptxas -O0): only whether it compiles is the question."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor
    from pathlib import Path

    from muh import families
    from muh.pipeline import load_file

    spec = load_file(Path(__file__).resolve().parents[2] / "specs" / "h200.muh").spec
    hw = next(iter(spec.hardware.values()))
    tunable = [r for r in families.records() if r.tunable]
    assert {r.name for r in tunable} >= {"reduce", "scan", "transform", "topk"}
    jobs = []
    for rec in tunable:
        assert rec.harness is not None, f"{rec.name} is tunable but its record has no harness"
        dtype = rec.dtypes[-1]
        sp = build_space(spec, rec.name, dtype)
        src = render_unit(rec.name, dtype, hw, [UnitVariant(0, "base", effective(sp.base, sp))], [1 << 16])
        cu = tmp_path / f"{rec.name}.cu"
        cu.write_text(src)
        jobs.append(
            [nvcc, "-std=c++17", "-arch=sm_90", "-O0", "-Xptxas", "-O0", "-w", "-c", str(cu), "-o", str(cu) + ".o"]
        )
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
    failed = [" ".join(c) + "\n" + r.stderr[-2000:] for c, r in zip(jobs, results) if r.returncode]
    assert not failed, "\n".join(failed)
