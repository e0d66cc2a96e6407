"""The no-spill rule on a real compile: which variant of a unit spills registers (ptxas's report, read with the
tune's own nvcc flags), and the reason it is rejected with. The runner's side: tests/tune/test_runner.py."""

from __future__ import annotations

import pytest

from muh.tune.compile import LocalPool, compile_job
from muh.tune.unit import nvcc_args, spill_detail, spilled_variants, variant_of

# Variant 1 needs more registers than __launch_bounds__(1024, 2) leaves it (32 a thread): it spills.
# Variants 0 (the base) and 2 do not. The namespaces are those render_unit gives each variant.
UNIT = r"""
#define BODY { float a[64]; for (int i = 0; i < 64; i++) a[i] = p[i * n + threadIdx.x]; float s = 0; \
  for (int j = 0; j < 64; j++) for (int i = 0; i < 64; i++) s += a[(i * j + n) & 63] * a[i]; p[threadIdx.x] = s; }
namespace muh_v0 { namespace detail { __global__ void kern(float* p, int n) { p[threadIdx.x] = n; } } }
namespace muh_v1 { namespace detail { __global__ void __launch_bounds__(1024, 2) kern(float* p, int n) BODY } }
namespace muh_v2 { namespace detail { __global__ void kern(float* p, int n) { p[threadIdx.x] = 2 * n; } } }
int main() {
  muh_v0::detail::kern<<<1, 1>>>(nullptr, 0);
  muh_v1::detail::kern<<<1, 1>>>(nullptr, 0);
  muh_v2::detail::kern<<<1, 1>>>(nullptr, 0);
}
"""


def test_the_variant_index_is_read_from_the_mangled_namespace():
    # Itanium mangling: <length><identifier>, so `6muh_v3` is followed by `6detail`, not variant 36
    assert variant_of("_ZN6muh_v36detail4kernEPfi") == 3
    assert variant_of("_ZN7muh_v126detail4kernEPfi") == 12
    assert variant_of("muh_v4_reduce_sum") == 4  # a C interface function
    assert variant_of("_Z9spin_waitx") is None  # the harness's own


@pytest.mark.nvcc
def test_real_compile_rejects_only_the_variant_that_spills(loaded, nvcc, tmp_path):
    hw = loaded.spec.hardware["lab"]
    comp = compile_job(UNIT, nvcc_args(hw), nvcc, 300)  # the tune's own flags (with -w: spills still seen)
    assert comp.ok, comp.log
    bad = spilled_variants(comp.spills)
    assert set(bad) == {1}
    (s,) = bad[1]
    assert s.stores > 0 and s.loads > 0
    detail = spill_detail(bad[1])
    assert "muh_v1::detail::kern" in detail and f"{s.stores} bytes spill stores" in detail
    assert "bytes stack frame" not in comp.log  # the kept log holds diagnostics, not ptxas's report

    pool = LocalPool(1, cache=tmp_path / "units")  # the cache keeps the spill report with the binary
    try:
        first = pool.submit(UNIT, nvcc_args(hw), nvcc, 300).result()
        again = pool.submit(UNIT, nvcc_args(hw), nvcc, 300).result()
    finally:
        pool.shutdown()
    assert again.log == "cached" and again.binary == first.binary
    assert again.spills == first.spills == comp.spills


def test_a_trial_timed_without_the_rule_is_not_reused(loaded, monkeypatch):
    # the kernel key covers the nvcc flags: a database of trials timed before the no-spill rule (whose
    # winner may spill) gives no cache hits, so every variant is compiled, and checked, again
    from muh.runtime import ptxas
    from muh.tune import unit
    from muh.tune.space import build_space, effective

    hw = loaded.spec.hardware["lab"]
    eff = effective(build_space(loaded.spec, "reduce", "float32").base, build_space(loaded.spec, "reduce", "float32"))
    now = unit.source_hash(eff, hw)
    flags = unit.nvcc_args(hw)
    monkeypatch.setattr(unit, "nvcc_args", lambda h: [f for f in flags if f not in ptxas.FLAGS])
    assert unit.source_hash(eff, hw) != now
