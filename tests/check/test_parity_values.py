"""Keys and values of different types in the by-key families: `values = […]`, policy keys with a value
part (`int32.int64`, size classes `prim4.prim8`), derive's combined rules with the value's size, and
parity against CUB's hubs instantiated with both types."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lab_card import hardware, line_col

from muh.check import parity
from muh.derive.resolve import resolve_query
from muh.diagnostics import MuhError
from muh.schema import load
from muh.schema.policy_key import Query, covering

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = ROOT / "specs" / "nvidia.muh"

HW = "muh 1\n" + hardware("g", cub_parity="true") + "type pair16 { size = 16 B  align = 8 B }\n"
RBK = """algorithm reduce_by_key on g {
  types = [int32, float64]
  values = [%s]
  policy default {
    threads = 128  items = 6  load = direct  modifier = default  block = warp_scans
    delay = reduce_by_key(ns = 350 ns, l2_write_latency = 450 ns)  scaling = combined_ceil
  }
  policy int32.primitive { threads = 256  items = 15 }
  policy prim4.prim8.primitive { threads = 224  items = 9 }
  policy int32.int64 { items = 8 }
  %s
}
"""


def errors(text: str) -> list:
    with pytest.raises(MuhError) as err:
        load(text, "t.muh")
    return err.value.diagnostics


def in_block(text: str, head: str, old: str, new: str) -> str:
    at = text.index(old, text.index(head))
    assert at < text.index("\n}\n", text.index(head))
    return text[:at] + new + text[at + len(old) :]


# ---- the language and derive ----------------------------------------------------------------------


def test_value_keys_layer_by_specificity():
    keys = ["default", "int32", "int32.primitive", "prim4.prim8.primitive", "int32.int64", "prim4.record"]
    # a key without a value part covers values of the key's own type only; `default` covers every pair
    assert covering(keys, Query("int32", "plus")) == ["default", "int32", "int32.primitive"]
    assert covering(keys, Query("int32", "max", 32, "int64")) == ["default", "prim4.prim8.primitive", "int32.int64"]
    assert covering(keys, Query("uint32", "mul", 32, "float64")) == ["default"]
    assert covering(keys, Query("float32", "plus", 32, "pair16")) == ["default", "prim4.record"]
    assert covering(keys, Query("int32", "plus", 32, "int32")) == ["default", "int32", "int32.primitive"]


def test_the_value_size_reaches_the_combined_rules():
    spec = load(HW + RBK % ("int64, pair16", ""), "t.muh")
    tuned = resolve_query(spec, "reduce_by_key@g", Query("int32", "max", 32, "int64"))
    assert (tuned.value("threads"), tuned.value("items")) == (224, 8)  # int32.int64 over prim4.prim8.primitive
    assert tuned.value_type == "int64" and tuned.get("items").inputs["value"] == 8
    # CUB's default: items = clamp(ceil(6 * 8 / (4 + 16)), 1, 6) = 3 once an input passes 8 bytes
    wide = resolve_query(spec, "reduce_by_key@g", Query("int32", "plus", 32, "pair16"))
    assert wide.value("items") == 3 and wide.get("items").inputs == {**wide.get("items").inputs, "size": 4, "value": 16}
    assert resolve_query(spec, "reduce_by_key@g", Query("float64", "plus", 32, "pair16")).value("items") == 2


@pytest.mark.parametrize(
    "values, extra, code, message, where",
    [
        (
            "int64",
            "policy int32.int32 { items = 7 }",
            "E-POLICYKEY",
            "names `int32` as both key and value type",
            "policy int32.int32",
        ),
        (
            "int64",
            "policy int32.plus.int64 { items = 7 }",
            "E-POLICYKEY",
            "`int64` cannot follow `int32.plus`",
            "policy int32.plus.int64",
        ),
        ("int46", "", "E-TYPE", "unknown value type `int46`", "values = [int46]"),
    ],
)
def test_bad_value_keys_are_refused_where_written(values, extra, code, message, where):
    text = HW + RBK % (values, extra)
    diags = errors(text)
    assert [d.code for d in diags] == [code], diags
    assert message in diags[0].message and diags[0].hint and diags[0].span.line == line_col(text, where)[0]


def test_values_belong_to_by_key_families_only():
    scan = """algorithm scan on g {
  values = [int64]
  policy default { threads = 128  items = 15 }
  policy int32.int64 { items = 7 }
}
"""
    diags = errors(HW + scan)
    assert [d.code for d in diags] == ["E-VALUES", "E-POLICYKEY"], diags
    assert "`values` is for by-key families" in diags[0].message and "reduce_by_key" in diags[0].hint
    assert "`scan` has no values" in diags[1].message and "write `int32`" in diags[1].hint
    assert (diags[1].span.line, diags[1].span.col) == line_col(HW + scan, "int32.int64")


# ---- parity: the pairs are compared, and a missing one is a gap -----------------------------------


def test_by_key_families_compare_every_pair():
    spec = load(NVIDIA.read_text(), "specs/nvidia.muh")
    counts = parity.family_counts(spec)
    # 4 arches x (9 keys x 3 values - 3 same) x (3 + 1 operator for records, 7 / 4 for catalogue values) …
    # whatever the product: every expected case is compared, none excused
    for family in ("reduce_by_key", "scan_by_key"):
        expected, compared, excused = counts[family]
        assert expected == compared == 768 and excused == 0
    assert counts["unique_by_key"] == (292, 292, 0) and counts["radix_sort_pairs"] == (448, 80, 368)


def test_a_value_type_missing_from_values_is_a_gap():
    text = in_block(
        NVIDIA.read_text(),
        "algorithm reduce_by_key on sm90",
        "values = [int32, int64, pair16]",
        "values = [int32, pair16]",
    )
    _, gaps, _ = parity.coverage(load(text, "specs/nvidia.muh"))
    names = {parity.case_name(p) for p, _ in gaps}
    assert "reduce_by_key sm90 int32:int64 plus" in names and "reduce_by_key sm90 struct16a8:int64 mul" in names
    assert {p.algorithm for p, _ in gaps} == {"reduce_by_key"} and {p.cc for p, _ in gaps} == {900}
    assert all("`int64` is not in the `values` of `algorithm reduce_by_key on sm90`" in why for _, why in gaps)


@pytest.mark.nvcc
def test_a_planted_wrong_value_in_a_key_value_policy_is_caught(nvcc):
    text = NVIDIA.read_text()
    head = "algorithm reduce_by_key on sm90"
    at = text.index("policy prim4.prim8.primitive", text.index(head))
    at = text.index("items = 13", at)
    report = parity.run_parity(load(text[:at] + "items = 12" + text[at + 10 :], "specs/nvidia.muh"))
    failed = {c.case for c in report.failed}
    assert failed == {
        f"reduce_by_key sm90 {k}:int64 {op}" for k in ("int32", "uint32", "float32") for op in ("plus", "max", "min")
    }
    out = parity.render(report)
    assert "MISMATCH policy reduce_by_key sm90 int32:int64 plus: items: muh 12 != CUB 13" in out
    assert re.search(r"\n\s*reduce_by_key +768 +768 +0 +0\n", out)


@pytest.mark.nvcc
def test_a_missing_pair_exits_1_with_counts(cli, tmp_path, nvcc):
    text = in_block(
        NVIDIA.read_text(),
        "algorithm scan_by_key on sm100",
        "values = [int32, int64, pair16]",
        "values = [int32, int64]",
    )
    path = tmp_path / "specs" / "nvidia.muh"
    path.parent.mkdir()
    path.write_text(text)
    code, out, err = cli("check", path, "--only", "parity")
    assert code == 1, out + err
    assert re.search(r"\n\s*scan_by_key +768 +736 +0 +32\n", out), out
    assert "GAP scan_by_key: 32 CUB cases not compared (no type of 16 B aligned to 8 B in the `values`" in out
    assert "32 MISSING" in out
