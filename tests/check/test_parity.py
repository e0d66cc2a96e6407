"""`muh check --only parity`: the CCCL parity suite end to end."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from muh.check import parity
from muh.derive import derive
from muh.schema import load

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = ROOT / "specs" / "nvidia.muh"
BASELINE = ROOT / "specs" / "baseline.muh"
SM90_LINE = "delay = fixed(ns = 576 ns"  # scan, sm90, float64.plus: unique in the spec


@pytest.fixture(scope="module")
def report(nvcc):
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    return parity.run_parity(spec)


@pytest.mark.nvcc
def test_nvidia_spec_reproduces_cub(report):
    assert report.ok, parity.render(report)
    groups = {g: sum(c.group == g for c in report.cases) for g in ("scaling", "policy", "gap")}
    assert groups["scaling"] >= 500 and groups["gap"] == 0
    names = {c.case for c in report.cases if c.group == "policy"}
    for alg in ("select_if", "merge_sort", "merge", "for_each", "transform", "partition"):
        for hw in ("sm80", "sm86", "sm90", "sm100"):
            for t in ("float32", "float64", "int32", "int64"):
                assert f"{alg} {hw} {t}" in names
    for hw in ("sm80", "sm86", "sm90", "sm100"):
        for op in ("plus", "max", "min", "mul"):
            for offset in (32, 64):
                assert f"reduce {hw} float32 {op} offset{offset}" in names
                assert f"scan {hw} int64 {op} offset{offset}" in names
        assert f"radix_sort {hw} uint8 offset64" in names and f"scan_by_key {hw} int32 bit_xor" in names
    assert "histogram sm100 uint8" in names


#: Families of the catalogue with a CCCL 3.0 tuning header that are not probed yet.
NOT_PROBED: set[str] = set()


@pytest.mark.nvcc
def test_every_cccl_30_family_is_compared(report):
    from muh.check import cub_truth
    from muh.schema.catalog import FAMILIES

    with_hub = {name for name, fam in FAMILIES.items() if fam.cub_header} - NOT_PROBED
    assert with_hub <= set(cub_truth.TABLES) and all(parity.compared_dims(f) for f in with_hub)
    counts = {f: (expected, compared, excused) for f, expected, compared, excused in report.families}
    assert set(counts) == with_hub
    assert all(expected == compared + excused and compared > 0 for expected, compared, excused in counts.values())
    # excused: the by-key cases whose keys and values differ in type of the families the spec writes no
    # key/value tunings for (its `parity` block), and only those
    left = {"radix_sort_pairs"}
    assert {f for f, c in counts.items() if c[2]} == left, counts
    assert sum(c[2] for c in counts.values()) == sum(
        1
        for p in parity.expected_probes(load(NVIDIA.read_text(), "specs/nvidia.muh"))
        if p.value and p.algorithm in left
    )
    # archs x (float ops + integer ops + user-defined records' ops) x offset widths
    assert counts["reduce"][0] == 4 * (2 * 4 + 4 * 7 + 3 * 4) * 2
    assert counts["radix_sort"][0] == 4 * 10 * 2  # no records: radix sorts take arithmetic keys
    assert sum(c[1] for c in counts.values()) == sum(c.group == "policy" for c in report.cases)


@pytest.mark.nvcc
def test_changed_sub_policy_value_fails(nvcc):
    # segmented sort on sm_90 runs CUB's sm_86 policy: medium segments are sorted by 16 threads.
    text = NVIDIA.read_text()
    at = text.index("algorithm segmented_sort on sm90")
    at = text.index("threads_per_segment = 16", at)
    bad = text[:at] + "threads_per_segment = 32" + text[at + len("threads_per_segment = 16") :]
    report = parity.run_parity(load(bad, "specs/nvidia.muh"))
    failed = {c.case for c in report.failed}
    assert failed == {
        f"segmented_sort sm90 {t}"
        for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64")
    }
    text = parity.render(report)
    assert "MISMATCH policy segmented_sort sm90 int32: medium/threads_per_segment: muh 32 != CUB 16" in text


@pytest.mark.nvcc
def test_render_ends_with_count(report):
    text = parity.render(report)
    got = re.search(
        r"\nparity: \d+ cases passed; CUB policy cases: (\d+) expected, (\d+) compared, (\d+) out of scope$", text
    )
    assert got and int(got[1]) == int(got[2]) + int(got[3])
    assert re.search(r"\nreduce_by_key +768 +768 +0 +0\n", text)  # keys and values of different types too
    assert "reduce sm90 float32 plus offset32" in text and "Policy600" in text
    assert re.search(r"\nreduce +384 +384 +0 +0\n", text)


@pytest.mark.nvcc
def test_cli_baseline_uses_reference_spec(cli, nvcc):
    code, out, err = cli("check", BASELINE, "--only", "parity", "-v", cwd=ROOT)
    assert code == 0, out + err
    assert "policies from" in out and "nvidia.muh" in out
    assert re.search(r"parity: (\d+) cases passed", out)
    assert int(re.search(r"parity: (\d+) cases passed", out).group(1)) >= 548
    # the BI-V100's own policies keep its rules: warp multiples of 64, tiles within 48 KiB
    assert "target   scan bi100 float64" in out


def in_block(text: str, block: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced once inside the block that starts with ``block``."""
    at = text.index(old, text.index(block))
    assert at < text.index("\n}\n", text.index(block))
    return text[:at] + new + text[at + len(old) :]


@pytest.mark.nvcc
def test_one_changed_sm90_value_fails(cli, tmp_path, nvcc):
    bad = tmp_path / "specs" / "nvidia.muh"
    bad.parent.mkdir()
    bad.write_text(in_block(NVIDIA.read_text(), "algorithm scan on sm90", SM90_LINE, SM90_LINE.replace("576", "580")))
    code, out, err = cli("check", bad, "--only", "parity")
    assert code == 1, out + err
    # float64.primitive: every basic operator (plus, min, max) with either offset width
    assert "MISMATCH policy scan sm90 float64 plus offset32: delay.ns: muh 580 != CUB 576" in out
    assert "MISMATCH policy scan sm90 float64 max offset64: delay.ns: muh 580 != CUB 576" in out
    assert "parity: 6 of" in out and "FAILED" in out


def test_bi100_8_byte_policies_fit_and_use_warp_multiples():
    spec = load(BASELINE.read_text(), "specs/baseline.muh")
    cases = parity.target_rules(spec, derive(spec))
    assert cases and all(c.ok for c in cases)
    d = derive(spec)
    for fam in ("reduce", "scan"):
        (alg,) = d.of(fam, "bi100")
        for key in ("float64", "int64"):
            pol = alg.policies[key]
            assert pol.value("threads") % 64 == 0
            assert pol.value("threads") * pol.value("items") * 8 <= 48 * 1024


def test_check_without_nvcc_fails_with_a_diagnostic(monkeypatch):
    from muh.check import cub_truth
    from muh.codegen.base import BuildContext

    monkeypatch.setattr(cub_truth.shutil, "which", lambda *a, **k: None)
    monkeypatch.delenv("MUH_NVCC", raising=False)
    monkeypatch.delenv("CUDACXX", raising=False)
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    res = parity.check_parity(BuildContext(spec, derive(spec)))
    assert res.status == "fail" and "nvcc" in res.detail
    assert any("[E-NVCC]" in line for line in res.cases)
