"""User-defined element types (`type <name> { size, align }`): the language, derive's scaling, and
parity cases enumerated from CUB with `struct alignas(A) { char bytes[S]; }`."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_card import hardware

from muh.check import cub_truth, parity
from muh.derive import scaling
from muh.derive.resolve import resolve_query
from muh.diagnostics import MuhError
from muh.schema import load
from muh.schema.policy_key import Query

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = ROOT / "specs" / "nvidia.muh"

HW = "muh 1\n" + hardware("g", cub_parity="true")
SCAN = """algorithm scan on g {
  types = [float32, %s]
  policy default {
    threads = 128  items = 15  load = warp_transpose  store = warp_transpose  modifier = default
    block = warp_scans  delay = fixed(ns = 350 ns, l2_write_latency = 450 ns)
  }
  policy record { delay = no_delay(l2_write_latency = 450 ns) }
  policy pair16.primitive { threads = 256 }
}
"""


def errors(text: str) -> list:
    with pytest.raises(MuhError) as err:
        load(text, "t.muh")
    return err.value.diagnostics


# ---- the language ---------------------------------------------------------------------------------


def test_a_type_by_size_and_alignment_scales_like_cub():
    spec = load(
        HW
        + "type pair16 { size = 16 B  align = 8 B }\ntype rec12 { size = 12 B  align = 4 B }\n"
        + SCAN % "pair16, rec12",
        "t.muh",
    )
    assert spec.element_sizes()["pair16"] == 16 and spec.types["rec12"].align == 4
    rec = resolve_query(spec, "scan@g", Query("rec12", "mul", 32))
    # CUB's MemBoundScaling<128, 15, T> for a 12-byte T: items 4*15/12 = 5, threads min(128, 49152/60 -> 832)
    assert (rec.value("threads"), rec.value("items")) == (128, 5)
    assert rec.get("delay").rule == "inherited from policy record"  # the class of user-defined types
    pair = resolve_query(spec, "scan@g", Query("pair16", "max", 64))
    assert pair.value("threads") == 256 and pair.value("items") == 3  # pair16.primitive over record
    assert resolve_query(spec, "scan@g", Query("pair16", "mul", 32)).value("threads") == 128
    flt = resolve_query(spec, "scan@g", Query("float32", "plus", 32))
    assert flt.value("delay").kind == "fixed"  # `record` does not cover catalogue types


@pytest.mark.parametrize(
    "decl, message, col",
    [
        ("type r { size = 12 B  align = 8 B }", "size = 12 B is not a multiple of align = 8 B", 17),
        ("type r { size = 12 B  align = 3 B }", "align = 3 B is not a power of two", 31),
        ("type r { size = 2048 B  align = 8 B }", "size = 2048 B exceeds 1024 B", 17),
        ("type r { size = 4 B  align = 8 B }", "align = 8 B exceeds size = 4 B", 30),
        ("type float32 { size = 4 B  align = 4 B }", "`float32` is a built-in element type", 6),
        ("type record { size = 4 B  align = 4 B }", "the policy key of every user-defined type", 6),
    ],
)
def test_impossible_types_are_refused_where_written(decl, message, col):
    diags = errors(HW + decl + "\n")
    assert [d.code for d in diags] == ["E-TYPEDEF"], diags
    assert message in diags[0].message and diags[0].hint
    assert (diags[0].span.line, diags[0].span.col) == (HW.count("\n") + 1, col)  # the line after the card


def test_an_undeclared_type_names_the_declaration():
    diags = errors(HW + SCAN % "pair16")
    assert any(d.code == "E-TYPE" and "type pair16 { size" in d.hint for d in diags)
    diags = errors(
        HW
        + "type pair16 { size = 16 B  align = 8 B }\n"
        + (SCAN % "pair16").replace("policy pair16.primitive", "policy pear16.primitive")
    )
    assert [d.code for d in diags] == ["E-POLICYKEY"] and "did you mean `pair16`" in diags[0].hint


def test_by_key_rules_combine_both_sizes():
    # CUB 3.0.1: scan by key Nominal4BItemsToItemsCombined (rounds down), reduce by key and RLE's
    # default ceil_div; both leave the items while neither input passes 8 bytes.
    assert scaling.combined_items(9, 8, 8, ceil=False) == 9
    assert scaling.combined_items(9, 12, 12, ceil=False) == 3  # 72 / 24
    assert scaling.combined_items(6, 12, 12, ceil=True) == 2  # ceil(48 / 24)
    assert scaling.combined_items(6, 16, 4, ceil=True) == 3  # ceil(48 / 20): RLE's int lengths
    assert scaling.combined_items(6, 64, 64, ceil=True) == 1


def test_headers_name_records_where_the_spec_lists_them():
    from muh.codegen.base import BuildContext
    from muh.codegen.cxx import tuning
    from muh.derive import derive

    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    files = {f.path.rsplit("/", 1)[1]: f.content for f in tuning.emit(BuildContext(spec, derive(spec)))}
    assert "pair16 = " in files["common.cuh"] and "e == element::pair16 ? 16 :" in files["common.cuh"]
    assert "element::record64" in files["tuning_scan.cuh"]  # a tile assert at 64 B
    assert "record64" not in files["tuning_radix_sort.cuh"]  # no radix sort lists records
    # one return per distinct nominal policy: the default serves every size through CUB's rule
    assert "mem_bound_items(15, element_size(type))" in files["tuning_scan.cuh"]


# ---- parity: CUB's case list holds records, and the spec must cover them ---------------------------


def test_records_are_in_cubs_case_list():
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    names = {parity.case_name(p) for p in parity.expected_probes(spec)}
    for size, align in cub_truth.STRUCT_SHAPES:
        t = cub_truth.struct_name(size, align)
        assert f"scan sm90 {t} max offset64" in names and f"merge_sort sm80 {t}" in names
        assert f"reduce_by_key sm100 {t} plus" in names and f"{t}" not in {
            n.split()[2] for n in names if n.startswith("radix_sort ")
        }


def test_a_record_the_spec_does_not_list_is_a_gap():
    text = NVIDIA.read_text()
    at = text.index("algorithm scan on sm90 {")
    at = text.index("record12, ", at)
    spec = load(text[:at] + text[at + len("record12, ") :], "specs/nvidia.muh")
    _, gaps, _ = parity.coverage(spec)
    assert {parity.case_name(p) for p, _ in gaps} == {
        f"scan sm90 struct12a4 {op} offset{w}" for op in ("plus", "max", "min", "mul") for w in (32, 64)
    }
    assert all("no type of 12 B aligned to 4 B" in why for _, why in gaps)


def test_a_declared_shape_is_probed_where_the_spec_lists_it():
    text = NVIDIA.read_text().replace("type pair16 {", "type rec40 { size = 40 B  align = 8 B }\ntype pair16 {", 1)
    at = text.index("types = [", text.index("algorithm scan on sm90 {"))
    text = text[:at] + "types = [rec40, " + text[at + len("types = [") :]
    spec = load(text, "specs/nvidia.muh")
    compared, gaps, _ = parity.coverage(spec)
    assert {p.cc for p, _ in compared if p.type == "struct40a8"} == {900}
    assert {(p.algorithm, p.cc) for p, _ in gaps} == {("scan", cc) for cc in (800, 860, 1000)}
    assert not any(p.type == "struct40a8" and p.algorithm != "scan" for p in parity.expected_probes(spec))


def test_keys_and_values_of_different_types_are_cubs_cases_too():
    # CUB keys the by-key hubs on both types; the spec covers the pairs of reduce, scan and unique by key with
    # `values = […]` and must say that it leaves the others out: without its `parity` block they are gaps.
    text = NVIDIA.read_text()
    start = text.index("\nparity {")
    spec = load(text[:start] + text[text.index("}\n", start) + 1 :], "specs/nvidia.muh")
    _, gaps, excused = parity.coverage(spec)
    names = {parity.case_name(p) for p, _ in gaps}
    assert not excused and {p.algorithm for p, _ in gaps} == {"radix_sort_pairs"}
    assert {"radix_sort_pairs sm100 uint8:struct16a8 offset64", "radix_sort_pairs sm80 int16:uint32 offset32"} <= names
    assert all("is not in the `values`" in why or "in the `values`" in why for _, why in gaps)


@pytest.mark.nvcc
def test_records_reproduce_cub_and_a_planted_error_is_caught(nvcc):
    text = NVIDIA.read_text()
    report = parity.run_parity(load(text, "specs/nvidia.muh"))
    ok = {c.case for c in report.cases if c.group == "policy" and c.ok}
    assert {
        "scan sm90 struct16a8 mul offset64",
        "reduce_by_key sm80 struct16a8 plus",
        "transform sm100 struct64a16",
        "three_way_partition sm90 struct16a8",
        "scan_by_key sm100 struct12a4 max",
    } <= ok
    at = text.index("policy record", text.index("algorithm scan on sm90 {"))
    at = text.index("450 ns", at)
    report = parity.run_parity(load(text[:at] + "460 ns" + text[at + 6 :], "specs/nvidia.muh"))
    failed = {c.case for c in report.failed}
    assert failed == {
        f"scan sm90 {t} {op} offset{w}"
        for t in ("struct12a4", "struct16a8", "struct64a16")
        for op in ("plus", "max", "min", "mul")
        for w in (32, 64)
    }
    assert "delay.l2_write_latency: muh 460 != CUB 450" in parity.render(report)
