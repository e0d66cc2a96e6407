"""The tune harness's correctness gate on the GPU: a unit of histogram variants (the H200 spec's space)
built and run as `muh tune` runs it, every variant must pass the gate (its counts exact).

On the H200 (2026-12-02) the first histogram campaign reported 183 of 600 variants, and the spec's own
policies under `--against`, as `wrong_result: bin 0 = N - 1`: the gate uploaded its input and poisoned
the output on the legacy stream, which does not order the harness's non-blocking stream, so the poison
sometimes landed after the histogram had zeroed its counts. The kernel was right; the gate was not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import requires_cuda  # noqa: E402

pytestmark = [requires_cuda, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dtype", ["uint8", "int32"])
def test_every_histogram_variant_passes_the_tune_gate(dtype, nvcc, tmp_path):
    from muh.pipeline import load_file
    from muh.tune.compile import LocalPool
    from muh.tune.space import build_space, effective
    from muh.tune.unit import UnitVariant, nvcc_args, render_unit

    spec = load_file(ROOT / "specs" / "h200.muh").spec
    hw = next(iter(spec.hardware.values()))
    sp = build_space(spec, "histogram", dtype)
    picked = sp.variants()[::4]  # 19 of 75 (a stride prime to the 5 threads and 3 copies values: all of them)
    vs = [UnitVariant(0, "base", effective(sp.base, sp))]
    vs += [UnitVariant(i + 1, v.label(), effective(v, sp)) for i, v in enumerate(picked)]
    unit = render_unit("histogram", dtype, hw, vs, [1 << 16, 1 << 20])
    pool = LocalPool(1)
    try:
        built = pool.submit(unit, nvcc_args(hw), nvcc, 900).result()
    finally:
        pool.shutdown()
    assert built.ok, built.log
    exe = tmp_path / "unit"
    exe.write_bytes(built.binary)
    exe.chmod(0o755)
    todo = ",".join(str(v.index) for v in vs[1:])
    r = subprocess.run(
        [str(exe), "--variants", todo, "--runs", "3", "--warmup", "1"], capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    status = {x["variant"]: (x["status"], x.get("detail", "")) for x in lines if "variant" in x}
    assert set(status) == {v.index for v in vs[1:]}, r.stdout
    bad = {vs[i].label: s for i, s in status.items() if s[0] != "ok"}
    assert not bad, bad
