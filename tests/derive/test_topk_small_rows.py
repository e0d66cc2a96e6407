"""topk's small-row path (`warp_cols`: rows of at most that many columns take one warp each) on the CPU
side: the spec's policies decide it (a `k` bucket may turn it off), derive reads it into the kernels'
config and refuses what a warp cannot hold (E-KERNELS at the hardware), `muh explain` shows where it
came from, and params.cuh prints the small-row numbers with their rules. The kernels themselves:
tests/gpu/test_topk_small_gpu.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lab_card import hardware, line_col

from muh.derive import kernels as derive_kernels
from muh.pipeline import load_file

TOPK = (
    "muh 1\n"
    + hardware("h200")
    + """\
algorithm topk on h200 {
  types = [float32, float16]
  policy default { threads = 512  items = 4  bits_per_pass = 11 }
  policy float32 {
    threads = 256  bits_per_pass = 8  warp_cols = 512
    when k < 256 {}
    when k >= 256 { threads = 512  warp_cols = 0 }
  }
}
"""
)


def _spec(tmp_path, text: str = TOPK) -> Path:
    f = tmp_path / "topk.muh"
    f.write_text(text)
    return f


def _targets(path: Path):
    loaded = load_file(path)
    return derive_kernels.targets(loaded.spec, loaded.derived)


def test_warp_cols_reaches_each_bucket_s_kernels_with_its_rule(tmp_path):
    [target], diags = _targets(_spec(tmp_path))
    assert diags == []
    cfg = target.config
    by_k = cfg.buckets_of("topk", "float32")
    assert [(lo, hi, p.warp_cols) for lo, hi, p in by_k] == [(0, 256, 512), (256, None, 0)]
    assert cfg.of("topk")["float16"].warp_cols == 0  # unset: every row takes a block

    from muh.families import topk

    got = {p.cname: p for p in topk.params(cfg, "float32", by_k[0][2])}
    # 256 threads of 32 lanes: 8 rows per block; 512 columns in 4-element vectors: 4 per lane;
    # k up to min(max_k 1024, warp_cols 512, 8 ranks per lane x 32 lanes) = 256
    assert (got["kWarpCols"].value, got["kWarpRows"].value, got["kWarpVecs"].value, got["kWarpMaxK"].value) == (
        512,
        8,
        4,
        256,
    )
    assert got["kWarpCols"].rule.startswith("policy warp_cols")
    half = {p.cname: p.value for p in topk.params(cfg, "float16", cfg.of("topk")["float16"])}
    assert half["kWarpCols"] == 0


def test_explain_and_params_show_where_warp_cols_came_from(cli, tmp_path):
    from muh.pipeline import build

    path = _spec(tmp_path)
    code, out, err = cli("explain", path, "topk.float32.warp_cols")
    assert code == 0, err
    line, col = line_col(TOPK, "warp_cols = 512", len("warp_cols = "))  # the value's place
    assert f"      warp_cols = 512    [spec]\n          rule: spec\n          from: {path.name}:{line}:{col}" in out
    line, col = line_col(TOPK, "warp_cols = 0", len("warp_cols = "))
    assert (
        "    when k >= 256  (policy float32)\n      warp_cols = 0    [spec]\n          rule: bucket `k >= 256`\n"
        f"          from: {path.name}:{line}:{col}"
    ) in out
    out_dir, _ = build(path, tmp_path / "out")
    params = (out_dir / "include" / "muh" / "kernels" / "params.cuh").read_text()
    b0 = params[params.index("namespace topk_float32 {") : params.index("namespace topk_float32_b1 {")]
    b1 = params[params.index("namespace topk_float32_b1 {") :]
    assert re.search(r"constexpr int kWarpCols = 512;\s*// policy warp_cols", b0)
    assert re.search(r"constexpr int kWarpRows = 8;\s*// threads / warp size", b0)
    assert re.search(r"constexpr int kWarpCols = 0;", b1)


def test_a_row_a_warp_cannot_hold_in_registers_is_a_derive_diagnostic(tmp_path):
    """4096 float32 columns on 32 lanes are 128 keys a lane; the small-row path holds 64."""
    text = TOPK.replace("warp_cols = 512", "warp_cols = 4096")
    found, diags = _targets(_spec(tmp_path, text))
    assert found == [] and [d.code for d in diags] == ["E-KERNELS"]
    msg = diags[0].message
    assert "topk.float32 (k 0..256): warp_cols=4096 puts 128 keys in each of a warp's 32 lanes" in msg
    assert "lower warp_cols to 2048 or less" in msg
    assert "k 256.." not in msg  # the bucket that turns it off is fine
    loaded = load_file(tmp_path / "topk.muh")
    assert diags[0].span == loaded.spec.span_of(("hardware", "h200"))


def test_the_small_row_path_s_shared_memory_is_checked(tmp_path):
    """1024 threads are 32 rows a block, each with room for 256 survivors of 8 bytes: 64 KiB > 48 KiB."""
    text = TOPK.replace(
        "threads = 256  bits_per_pass = 8  warp_cols = 512", "threads = 1024  bits_per_pass = 8  warp_cols = 512"
    )
    found, diags = _targets(_spec(tmp_path, text))
    assert found == [] and [d.code for d in diags] == ["E-KERNELS"]
    assert (
        "topk.float32 (k 0..256): the small-row path (warp_cols=512) needs 65536 B of shared memory "
        "(32 rows x 256 survivors x 8 B), the hardware has 49152 B per block"
    ) in diags[0].message


@pytest.mark.parametrize("bad,code", [("warp_cols = -1", "E-VALUE"), ("warp_cols = 9000", "E-VALUE")])
def test_warp_cols_out_of_range_is_a_schema_error(tmp_path, bad, code):
    from muh.diagnostics import MuhError

    with pytest.raises(MuhError) as e:
        load_file(_spec(tmp_path, TOPK.replace("warp_cols = 512", bad)))
    assert code in {d.code for d in e.value.diagnostics}


def test_warp_cols_belongs_to_topk_only(tmp_path):
    from muh.diagnostics import MuhError

    text = (
        "muh 1\n"
        + hardware("h200")
        + "algorithm reduce on h200 { policy default { threads = 256  warp_cols = 256 } }\n"
    )
    with pytest.raises(MuhError) as e:
        load_file(_spec(tmp_path, text))
    assert [d.code for d in e.value.diagnostics] == ["E-DIM"]


def test_an_emulated_warp_of_more_than_two_hardware_warps_has_no_small_row_path():
    """The path is verified natively and with a logical warp of up to 2 hardware warps (the BI-V100's 64
    lanes on 32-lane hardware); at 128 lanes emulated it faulted in the GPU test run (cause not found:
    muh/families/topk MAX_EMULATED_PARTS), so that build's params turn it off, saying why."""
    from bench import presets
    from muh.families import topk

    bi = presets.bi100()
    for cfg, want in ((bi, 1024), (bi.emulated(64), 1024), (bi.emulated(16), 1024), (bi.emulated(128), 0)):
        pol = cfg.of("topk")["float32"]
        got = {p.cname: p for p in topk.params(cfg, "float32", pol)}
        assert got["kWarpCols"].value == want, cfg.name
        assert topk.checks(cfg, "float32", pol) == []
    off = {p.cname: p for p in topk.params(bi.emulated(128), "float32", bi.of("topk")["float32"])}
    assert off["kWarpCols"].rule.startswith("0: a logical warp of 128 lanes emulated on 4 hardware warps")
    assert (off["kWarpVecs"].value, off["kWarpMaxK"].value) == (0, 0)
