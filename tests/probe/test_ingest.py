"""`muh probe --ingest`: the H200 result measured on 2026-12-01 (bench/results/probe-h200.json) against
specs written from torch's view of the same card in the same run (bench/results/probe-2026-12-01/torch.json),
plus contradicting, foreign and broken documents. The spec is never half-written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lab_card import hardware

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "bench/results/probe-h200.json"
TORCH = json.loads((ROOT / "bench/results/probe-2026-12-01/torch.json").read_text())["properties"]

# A spec of the lab card with the facts torch's properties give (not the probe's), canonical once formatted.
SPEC = (
    """muh 1

# the lab card, as torch.cuda.get_device_properties describes it
"""
    + hardware(
        "h200",
        compute_capability=str(TORCH["major"] * 10 + TORCH["minor"]),
        device_name=f'"{TORCH["name"]}"',
        sm_count=str(TORCH["multi_processor_count"]),
        warp_size=str(TORCH["warp_size"]),
        smem_per_block=f"{TORCH['shared_memory_per_block']} B  # static",
        l2_cache=f"{TORCH['L2_cache_size']} B",
    )
    + """
algorithm reduce on h200 {
  policy default { threads = 256  items = 16  vec = 4  modifier = ldg  block = warp_reductions  scaling = mem_bound }
}
"""
)


@pytest.fixture
def spec(tmp_path):
    from muh.grammar.format import format_module
    from muh.grammar.parser import parse

    p = tmp_path / "h200.muh"
    text = format_module(parse(SPEC, str(p)))
    p.write_text(text)
    return p


def _result(tmp_path, edit=None, name="r.json", raw=None) -> Path:
    p = tmp_path / name
    if raw is not None:
        p.write_text(raw)
        return p
    d = json.loads(RESULT.read_text())
    if edit:
        edit(d)
    p.write_text(json.dumps(d))
    return p


def test_agreement_adds_provenance_and_explain_says_measured(cli, spec, tmp_path):
    before = spec.read_text()
    code, out, err = cli("probe", "--ingest", RESULT, spec)
    assert code == 0, err
    # a compare is read-only (issue 42: it wrote `@measured` into agreeing values without --apply)
    assert spec.read_text() == before and "unchanged (a compare is read-only); `--apply` writes the provenance" in out
    assert "not stated  mem_bandwidth" in out  # facts the spec does not state are reported, added with --apply
    for f in ("compute_capability", "device_name", "sm_count", "warp_size", "smem_per_block", "l2_cache"):
        assert f"agree       {f}" in out
    code, out, err = cli("probe", "--ingest", RESULT, spec, "--apply")
    assert code == 0, err
    text = spec.read_text()
    assert text != before
    assert "# static" in text and "# the lab card" in text  # comments kept
    code, _, _ = cli("fmt", "--check", spec)
    assert code == 0  # it was canonical; it stays canonical
    from muh.pipeline import load_file

    loaded = load_file(spec)
    m = loaded.spec.measured["hardware.h200.sm_count"]
    assert m.device == "NVIDIA H200" and m.date == "2026-12-01" and "distinct %smid 132" in m.method and m.samples > 1
    assert "hardware.h200.warp_size" in loaded.spec.measured
    code, explained, _ = cli("explain", spec, "reduce.float32.threads")
    assert (
        code == 0
        and "rests on measured: smem_per_block (NVIDIA H200 2026-12-01), warp_size (NVIDIA H200 2026-12-01)"
        in explained
    )
    # ingesting again replaces the annotations instead of piling them up
    code, _, _ = cli("probe", "--ingest", RESULT, spec, "--apply")
    assert code == 0 and spec.read_text() == text


@pytest.mark.parametrize(
    "line,new,field,shown",
    [
        ("sm_count = 132", "sm_count = 16", "sm_count", "sm_count = 16 in the spec, but the probe measured 132"),
        ("warp_size = 32", "warp_size = 64", "warp_size", "warp_size = 64 in the spec, but the probe measured 32"),
    ],
)
def test_contradiction_is_an_error_at_the_line_and_nothing_is_written(cli, spec, line, new, field, shown):
    text = spec.read_text().replace(line, new)
    spec.write_text(text)
    code, _, err = cli("probe", "--ingest", RESULT, spec)
    assert code == 1
    lineno = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip().startswith(new))
    assert f"{spec}:{lineno}:" in err and shown in err and "[E-PROBE-CONTRADICTS]" in err
    assert spec.read_text() == text


def test_apply_writes_values_keeps_comments_and_adds_facts(cli, spec):
    text = spec.read_text().replace("sm_count = 132", "sm_count = 16  # disputed")
    spec.write_text(text)
    code, out, err = cli("probe", "--ingest", RESULT, spec, "--apply")
    assert code == 0, err
    new = spec.read_text()
    assert "sm_count = 132 @measured(" in new and "# disputed" in new and "# static" in new
    for added in (
        "smem_per_block_optin = 227 KiB @measured(",
        "mem_bandwidth = 3924.5 GB/s @measured(",
        "launch_latency = 10 us @measured(",
    ):
        assert added in new, added
    assert cli("fmt", "--check", spec)[0] == 0
    from muh.pipeline import load_file

    hw = load_file(spec).spec.hardware["h200"]
    assert hw.sm_count == 132 and hw.smem_per_block_optin == 232448 and hw.mem_bandwidth == 3_924_500_000_000


def test_bandwidth_outside_tolerance_contradicts(cli, spec):
    spec.write_text(spec.read_text().replace("  toolchain", "  mem_bandwidth = 4225 GB/s\n  toolchain"))
    code, _, err = cli("probe", "--ingest", RESULT, spec)
    assert code == 1 and "mem_bandwidth = 4225 GB/s in the spec, but the probe measured 3924.5 GB/s" in err
    assert "tolerance ±5%" in err
    spec.write_text(spec.read_text().replace("4225 GB/s", "4100 GB/s"))  # within 5 % of 3924.5
    assert cli("probe", "--ingest", RESULT, spec)[0] == 0


def test_foreign_device_is_refused_with_the_reason(cli, spec, tmp_path):
    before = spec.read_text()
    other = _result(tmp_path, lambda d: d["hardware"]["device_name"].update(value="NVIDIA A100-SXM4-80GB"))
    code, _, err = cli("probe", "--ingest", other, spec)
    assert (
        code == 1 and "comes from another device" in err and "'NVIDIA A100-SXM4-80GB'" in err and "'NVIDIA H200'" in err
    )
    assert spec.read_text() == before
    # the spec's name was a guess: accepted, the name becomes a contradiction (fixed by --apply)
    code, _, err = cli("probe", "--ingest", other, spec, "--accept-device-name")
    assert (
        code == 1 and "device_name = 'NVIDIA H200' in the spec, but the probe measured 'NVIDIA A100-SXM4-80GB'" in err
    )
    # a bundle generated for another hardware block
    code, _, err = cli("probe", "--ingest", _result(tmp_path, lambda d: d["origin"].update(hardware="bi100")), spec)
    assert code == 1 and "bundle of `hardware bi100`" in err
    assert spec.read_text() == before


def test_an_emulation_run_is_not_a_cards_facts(cli, tmp_path):
    spec = tmp_path / "baseline.muh"
    spec.write_text((ROOT / "specs/baseline.muh").read_text())
    before = spec.read_text()
    code, _, err = cli("probe", "--ingest", ROOT / "bench/results/probe-2026-12-01/probe-bi100-emu64.json", spec)
    assert code == 1 and "warp-64 emulation run" in err
    assert spec.read_text() == before


def test_a_broken_warp_layer_is_an_error(cli, tmp_path):
    """The baseline's native warp-64 layer run on the H200 (32 lanes): the probe saw 32 of 64 lanes."""
    spec = tmp_path / "baseline.muh"
    spec.write_text((ROOT / "specs/baseline.muh").read_text())
    res = ROOT / "bench/results/probe-2026-12-01/probe-bi100-native-on-h200.json"
    code, _, err = cli("probe", "--ingest", res, spec, "--accept-device-name")
    assert code == 1
    assert "warp layer for warp_size = 64 (native) is wrong on NVIDIA H200: 32 of 64 lanes exchange" in err
    assert "warp_size = 64 in the spec, but the probe measured 32" in err


@pytest.mark.parametrize(
    "mutate,expect",
    [
        (lambda d: d["hardware"]["bandwidth_copy"].update(plateau_gbps=0), "plateau_gbps"),
        (lambda d: d["hardware"]["warp_size_attribute"].update(value=48), "warp_size_attribute = 48"),
        (lambda d: d["hardware"]["sm_count_attribute"].update(value=0), "sm_count_attribute = 0"),
        (lambda d: d.update(schema_version=2), "schema version 2; this muh reads version 1"),
        (lambda d: d.update(schema="something.else"), "not a muh probe result"),
        (lambda d: d["hardware"].pop("l2_cache"), "hardware.l2_cache: Field required"),
        (lambda d: d["hardware"]["bandwidth_copy"].update(sweep=[]), "sweep"),
    ],
)
def test_bad_result_files_are_refused(cli, spec, tmp_path, mutate, expect):
    before = spec.read_text()
    code, _, err = cli("probe", "--ingest", _result(tmp_path, mutate), spec)
    assert code == 2 and "[E-PROBE-RESULT]" in err and expect in err, err
    assert "Traceback" not in err
    assert spec.read_text() == before


def test_truncated_and_missing_files(cli, spec, tmp_path):
    raw = RESULT.read_text()
    code, _, err = cli("probe", "--ingest", _result(tmp_path, raw=raw[: len(raw) // 2]), spec)
    assert code == 2 and "not JSON" in err and "truncated" in err
    code, _, err = cli("probe", "--ingest", tmp_path / "nope.json", spec)
    assert code == 2 and "no such file" in err
    code, _, err = cli("probe", spec, "--apply")
    assert code == 2 and "need --ingest" in err


def test_the_committed_result_validates_and_matches_torch():
    """The committed H200 run: schema-valid, and the facts torch also reports agree with it."""
    from muh.probe_ingest.ingest import read_result

    r = read_result(RESULT)
    h = r.hardware
    assert h.device_name.value == TORCH["name"]
    assert (
        h.sm_count_attribute.value
        == h.sm_count_kernel.value
        == h.sm_count_residency.value
        == TORCH["multi_processor_count"]
    )
    assert h.warp_size_attribute.value == h.warp_size_kernel.value == TORCH["warp_size"]
    assert h.smem_per_block.value == h.smem_dynamic_max_default.value == TORCH["shared_memory_per_block"]
    assert h.smem_per_block_optin.value == h.smem_dynamic_max_optin.value == TORCH["shared_memory_per_block_optin"]
    assert h.l2_cache.value == TORCH["L2_cache_size"] and h.global_memory.value == TORCH["total_memory"]
    assert h.warp_layer.lanes_exchanging.value == 32 and h.warp_layer.syncwarp_orders_smem.value is True


def test_the_committed_h200_spec_with_warp_64_contradicts_and_apply_repairs_it(cli, tmp_path):
    """warp_size = 64 makes the spec's own policies invalid (threads 224): the measured fact still
    decides, at the warp_size line, and --apply writes the card's 32 back so the spec loads again."""
    import re

    spec = tmp_path / "h200.muh"
    committed = (ROOT / "specs/h200.muh").read_text()
    # a policy of 7 warps of 32 (the committed scan float64 policy had 224 threads until issue 17)
    at = committed.index(
        "threads = 256", committed.index("policy float64 {", committed.index("algorithm scan on h200"))
    )
    base = committed[:at] + "threads = 224" + committed[at + len("threads = 256") :]
    text = re.sub(r"warp_size = 32 @measured\([^)]*\)", "warp_size = 64", base)
    spec.write_text(text)
    code, _, err = cli("probe", "--ingest", RESULT, spec)
    assert code == 1 and "warp_size = 64 in the spec, but the probe measured 32" in err
    assert "does not load as a whole" in err and spec.read_text() == text
    code, _, err = cli("probe", "--ingest", RESULT, spec, "--apply")
    assert code == 0, err
    assert spec.read_text() == base
    copy = tmp_path / "committed.muh"
    copy.write_text(committed)
    code, out, _ = cli("probe", "--ingest", RESULT, copy)
    assert code == 0 and "nothing to change" in out and copy.read_text() == committed
