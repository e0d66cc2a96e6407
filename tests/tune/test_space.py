"""Space enumeration, CCCL labels, scaling to effective policies, the static filter."""

from __future__ import annotations

import pytest

from muh.diagnostics import MuhError
from muh.tune.space import Variant, build_space, effective, static_filter, static_reasons
from muh.tune.unit import emitter_reasons


def test_space_is_the_cartesian_product_over_the_base(loaded):
    sp = build_space(loaded.spec, "reduce", "float32")
    assert sp.size == 3 * 4 * 2
    vs = sp.variants()
    assert len(vs) == 24 and len({v.label() for v in vs}) == 24
    assert all(v.get("modifier") == "ldg" for v in vs)  # dims outside the space come from the base
    assert sp.base.label(tuple(sp.dims)) == "ipt_16.tpb_256.ipv_4"
    assert sp.policy_key == "float32"


def test_labels_follow_cccl_token_order(loaded):
    sp = build_space(loaded.spec, "scan", "float32")
    assert sp.base.label(tuple(sp.dims)) == "ipt_24.tpb_128"
    full = sp.base.label()
    assert full.startswith("ipt_24.tpb_128.ns_688.dcid_1.l2w_1140")


def test_static_filter_rejects_warp_thread_and_smem_violations(loaded):
    hw = loaded.spec.hardware["lab"]
    sp = build_space(loaded.spec, "reduce", "float32")
    keep, rejected = static_filter(sp)
    reasons = {r for x in rejected for r in x.reasons}
    # `threads = 1056` is refused by `muh build` (validate checks the value written), so tune refuses
    # every variant with it, whatever the scaling would make of it: one rule for both
    assert "threads = 1056 exceeds max_threads_per_block = 1024 on `lab`" in reasons
    assert all(effective(v, sp).get("threads") <= 1024 for v in keep)
    assert not any(v.get("threads") == 1056 for v in keep) and len(keep) == 3 * 3 * 2
    scan = build_space(loaded.spec, "scan", "float32")
    keep, rejected = static_filter(scan, extra=lambda e: emitter_reasons(e, hw))
    # the scan kernel holds its tile in registers: a full 48 KiB tile (512 x 24 x 4 B), which the
    # old padded shared-memory layout could not take, is kept; none is larger
    assert any(effective(v, scan).get("threads") * effective(v, scan).get("items") * 4 == 48 * 1024 for v in keep)
    for v in keep:
        e = effective(v, scan)
        assert e.get("threads") * e.get("items") * 4 <= 48 * 1024


def test_static_reasons_are_validates_and_derives(loaded, tmp_path):
    """A candidate is checked by the stages a spec goes through: validate's policy checks (a block of
    96 threads on a 64-lane warp) and derive's (a tile over shared memory), with their messages."""
    from muh.pipeline import load_file

    w64 = tmp_path / "w64.muh"
    w64.write_text(
        loaded.source.replace("warp_size = 32", "warp_size = 64").replace("vendor = nvidia", "vendor = iluvatar")
    )
    sp = build_space(load_file(w64).spec, "reduce", "float32")
    bad = Variant("reduce", "float32", (("items", 16), ("modifier", "ldg"), ("threads", 96), ("vec", 4)))
    assert static_reasons(bad, sp) == ["threads = 96 is not a multiple of warp_size = 64 on `lab`"]
    ok = Variant("reduce", "float32", (("items", 16), ("modifier", "ldg"), ("threads", 128), ("vec", 4)))
    assert static_reasons(ok, sp) == []
    scan = build_space(loaded.spec, "scan", "float64")
    huge = Variant(
        "scan",
        "float64",
        tuple(sorted({**scan.base.as_dict(), "threads": 1024, "items": 48, "scaling": "none"}.items())),
    )
    assert any("E-SMEM" not in r and "exceeds smem_per_block" in r for r in static_reasons(huge, scan))


def test_effective_scaling_dedupes_identical_kernels(loaded):
    sp = build_space(loaded.spec, "reduce", "float64")
    effs = {effective(v, sp).key for v in sp.variants()}
    assert len(effs) < sp.size  # vec 4 and 2 are both capped to 2 doubles per 16-byte load
    a = Variant("reduce", "float64", (("items", 16), ("modifier", "ldg"), ("threads", 256), ("vec", 4)))
    b = Variant("reduce", "float64", (("items", 16), ("modifier", "ldg"), ("threads", 256), ("vec", 2)))
    assert effective(a, sp).key == effective(b, sp).key
    assert dict(effective(a, sp).params)["kVec"] == 2


def test_build_space_errors_are_diagnostics(loaded):
    with pytest.raises(MuhError) as e:
        build_space(loaded.spec, "redcue", "float32")
    assert "did you mean `reduce`" in (e.value.diagnostics[0].hint or "")
    with pytest.raises(MuhError):
        build_space(loaded.spec, "reduce", "float33")


def test_a_unit_holds_the_emitters_code_renamed_per_variant(loaded):
    from muh.codegen.kernels import generate
    from muh.tune.unit import UnitVariant, kernel_config, render_unit

    hw = loaded.spec.hardware["lab"]
    sp = build_space(loaded.spec, "reduce", "float32")
    vs = sp.variants()[:2]
    uv = [UnitVariant(0, "base", effective(sp.base, sp))] + [
        UnitVariant(i, v.label(), effective(v, sp)) for i, v in enumerate(vs, 1)
    ]
    src = render_unit("reduce", "float32", hw, uv, [1 << 16])
    for i in range(3):
        assert f"#define muh muh_v{i}\n" in src and f"#define muh_reduce muh_v{i}_reduce\n" in src
        assert f"muh_v{i}_reduce_workspace_bytes, muh_v{i}_reduce, muh_v{i}_last_error" in src
    # the kernel body is the emitter's own output for the variant's config
    reduce_cu = dict(generate(kernel_config(uv[1].eff, hw)))["kernels/reduce.cu"]
    body = reduce_cu.split("namespace reduce_run", 1)[1].split("}  // namespace reduce_run")[0]
    assert body in src


def test_build_and_tune_agree_on_items_not_a_multiple_of_vec(loaded, tmp_path):
    """Issue 11 item 13: `items = 15  vec = 4` — one rule (families.base.load_vec) for build and tune.
    The build derives kVec = 1 and says why in params.cuh; tune keeps the variant (no rejection) and
    measures it as the scalar-load kernel it is."""
    import re

    from muh.codegen.kernels import emitter
    from muh.derive.kernels import config_from_derived
    from muh.pipeline import load_file

    src = tmp_path / "v.muh"
    text = loaded.source.replace("    items = 16\n", "    items = 15\n", 1)
    assert text != loaded.source
    src.write_text(text)
    spec = load_file(src)
    hw = spec.spec.hardware["lab"]
    cfg = config_from_derived(spec.derived, hw)
    params = dict(emitter.generate(cfg))["include/muh/kernels/params.cuh"]
    block = re.search(r"namespace reduce_float32 \{(.*?)\}", params, re.S).group(1)
    assert "constexpr int kItems = 15;" in block
    assert re.search(r"// items 15 is not a multiple of vec 4: scalar loads.*\nconstexpr int kVec = 1;", block)
    v = Variant("reduce", "float32", (("items", 15), ("modifier", "ldg"), ("threads", 256), ("vec", 4)))
    sp = build_space(spec.spec, "reduce", "float32")
    e = effective(v, sp)
    assert dict(e.params)["kVec"] == 1  # the kernel tune measures is the one build generates
    assert static_reasons(v, sp) == [] and emitter_reasons(e, hw) == []


def test_scan_ring_dims_are_searched_like_a_build_would_take_them():
    """`stages` (a pipelined ring of staged tiles) is a tunable scan dimension: on the H200 spec a
    ring of 3 passes the static filter, a ring of 2 is refused with the kernel's reason (the lag needs
    a third stage) and the ring's effective kernel carries the number of stages."""
    from pathlib import Path

    from muh.pipeline import load_file
    from muh.tune.space import TUNABLE

    assert "stages" in TUNABLE["scan"]
    spec = load_file(Path(__file__).resolve().parents[2] / "specs" / "h200.muh").spec
    sp = build_space(spec, "scan", "float32", bucket=(1 << 24, None))
    assert "stages" in sp.dims
    base = sp.base.as_dict()

    def variant(**kw):
        return Variant("scan", "float32", tuple(sorted({**base, **kw}.items())))

    hw = spec.hardware["h200"]
    ring = effective(variant(stage="ublkcp", passes=4, stages=3), sp)
    assert dict(ring.params)["kStages"] == 3 and emitter_reasons(ring, hw) == []
    two = effective(variant(stage="ublkcp", passes=4, stages=2), sp)
    assert any("stages=2 must be 1" in r for r in emitter_reasons(two, hw))


def test_a_candidate_keeps_the_spec_s_sub_policies(tmp_path):
    """`muh tune` varies a policy's own dims; its candidates are built with the spec's sub-policies (the
    record's ``get.sub``), as `muh build` builds the winner — not with the record's defaults."""
    from pathlib import Path

    from muh.pipeline import load_file
    from muh.tune.unit import kernel_config

    src = Path(__file__).resolve().parents[2] / "specs" / "h200.muh"
    text = src.read_text()
    at = text.index("algorithm segmented_reduce on h200")
    text = text[:at] + text[at:].replace("warp { items = 32", "warp { items = 7", 1).replace(
        "small { threads = 256  items = 8", "small { threads = 128  items = 3", 1
    )
    spec = tmp_path / "h200.muh"
    spec.write_text(text)
    loaded = load_file(spec)
    sp = build_space(loaded.spec, "segmented_reduce", "float32")
    eff = effective(sp.base, sp)
    pol = kernel_config(eff, loaded.spec.hardware["h200"]).of("segmented_reduce")["float32"]
    assert (pol.small_threads, pol.small_items, pol.warp_items) == (128, 3, 7)
    assert ("kWarpItems", 7) in eff.params
