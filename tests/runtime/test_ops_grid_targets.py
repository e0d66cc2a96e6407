"""bench/ops_grid.py's verdict per cell (issue 16's targets), on hand-made cells: no GPU."""

from __future__ import annotations

from bench import ops_grid

OPS = ("rms_norm", "gemma_rms_norm", "fused_add_rms_norm", "gemma_fused_add", "silu_and_mul")
REFS = ("F.rms_norm", "gemma_eager", "add+F.rms_norm", "silu*mul eager")


def cell(mib, pct, us=1.0, ref_us=2.0, **over):
    us_ = {n: us for n in OPS} | {n: ref_us for n in REFS} | {"copy": us}
    pct_ = {n: pct for n in OPS}
    for k, v in over.items():
        (pct_ if k.startswith("pct_") else us_)[k.split("_", 1)[1] if k.startswith("pct_") else k] = v
    return {"dtype": "bfloat16", "hidden": 2048, "tokens": 1, "mib": mib, "us": us_, "pct_copy": pct_}


def verdict(rows, **extra):
    return "\n".join(ops_grid.targets({"grid": rows, **extra}))


def test_percent_of_copy_counts_from_8_mib_only():
    out = verdict([cell(0.5, 50.0), cell(16.0, 95.0)])
    assert "50 % (n/a)" in out and "Misses: 0" in out
    out = verdict([cell(16.0, 95.0, pct_rms_norm=84.0)])
    assert "Misses: 1" in out and "rms_norm 84 % < 90 %" in out


def test_slower_than_the_reference_is_a_miss_at_any_size():
    out = verdict([cell(0.01, 50.0, gemma_eager=0.9)])
    assert "Misses: 1" in out and "gemma_rms_norm 0.90× gemma_eager" in out


def test_routing_and_host_cost():
    ok = verdict(
        [cell(16.0, 95.0)],
        routing_us={"muh": 1.0, "topk(softmax)": 8.0},
        host_us={"torch.ops.muh.rms_norm (4 args)": 9.0, "F.rms_norm (4 args)": 12.0},
    )
    assert "8.0× topk(softmax) (target ≥ 5×): met" in ok and "Misses: 0" in ok
    bad = verdict(
        [cell(16.0, 95.0)],
        routing_us={"muh": 1.0, "topk(softmax)": 4.0},
        host_us={"torch.ops.muh.rms_norm (4 args)": 13.0, "F.rms_norm (4 args)": 12.0},
    )
    assert "Misses: 2" in bad and "routing 4.0×" in bad and "host cost 13.00 > 12.00 µs" in bad
