"""`--apply`: values replaced in place by span, comments and layout kept, @measured parsed back,
`muh explain` says measured, stale once the hardware changes, `muh fmt --check` stays green."""

from __future__ import annotations

import pytest
from lab_card import KEYS, TOOLCHAIN, hardware

from muh.derive import derive, hardware_fingerprint
from muh.explain import explain
from muh.grammar.format import format_module
from muh.grammar.parser import parse
from muh.schema import load
from muh.schema.models import Delay
from muh.tune.rewrite import Evidence, annotation, apply_winner, value_text


def ev(fp="abc123def456", variant="ipt_12.tpb_384.ipv_2"):
    return Evidence(
        device="NVIDIA H200",
        date="2026-11-30",
        toolkit="CUDA 13.0.88",
        samples=75,
        variant=variant,
        score=1.0421,
        min=1.001,
        mean=1.04,
        max=1.09,
        fingerprint=fp,
    )


def test_annotation_format_is_the_documented_one():
    a = annotation(ev())
    assert a == (
        '@measured(device = "NVIDIA H200", date = "2026-11-30", toolkit = "CUDA 13.0.88", samples = 75, '
        'variant = "ipt_12.tpb_384.ipv_2", score = 1.042100, min = 1.001000, mean = 1.040000, max = 1.090000, '
        'fingerprint = "abc123def456")'
    )


def test_annotation_escapes_strings(small_text):
    SMALL = small_text
    a = annotation(Evidence('GPU "x" \\ y', "d", "t", 1, "v", 1, 1, 1, 1, "f"))
    spec = SMALL.replace("    items = 16\n", f"    items = 16 {a}\n")
    s = load(spec, "x.muh")
    assert s.measured["algorithms.reduce@lab.policies.default.items"].device == 'GPU "x" \\ y'


def test_values_with_units_and_delays():
    assert value_text(49152, "bytes_in_flight") == "48 KiB"
    assert value_text(1000, "bytes_in_flight") == "1000 B"
    from decimal import Decimal

    from muh.schema.units import Quantity

    d = Delay.model_validate(
        {"kind": "fixed", "ns": Quantity(Decimal(688), "ns"), "l2_write_latency": Quantity(Decimal(1140), "ns")}
    )
    assert value_text(d) == "fixed(ns = 688 ns, l2_write_latency = 1140 ns)"


def test_new_typed_policy_block_is_added_and_the_rest_is_byte_identical(small_text):
    SMALL = small_text
    hw = load(SMALL, "lab.muh").hardware["lab"]
    out = apply_winner(
        SMALL, "lab.muh", "reduce", "lab", "float32", {"items": 12, "threads": 384}, ev(hardware_fingerprint(hw))
    )
    assert "# CUB's sm_60 policy" in out and "# a small lab card" in out
    assert out.startswith(SMALL.split("  space {")[0])  # everything before the insertion point is untouched
    spec = load(out, "lab.muh")
    pol = spec.algorithms["reduce@lab"].policies["float32"]
    assert (pol.threads, pol.items) == (384, 12)
    m = spec.measured["algorithms.reduce@lab.policies.float32.items"]
    assert m.variant == "ipt_12.tpb_384.ipv_2" and m.samples == 75 and m.score == pytest.approx(1.0421)
    lines = "\n".join(explain(derive(spec), "reduce.float32.items"))
    assert "[measured on NVIDIA H200 2026-11-30" in lines and "STALE" not in lines


def test_existing_values_are_replaced_in_place_and_old_annotations_replaced(small_text):
    SMALL = small_text
    text = SMALL.replace(
        "algorithm reduce on lab {\n",
        "algorithm reduce on lab {\n  policy float32 { threads = 512  items = 8 }  # hand-tuned\n",
    )
    once = apply_winner(text, "lab.muh", "reduce", "lab", "float32", {"items": 12}, ev())
    assert "policy float32 { threads = 512  items = 12 @measured(" in once and once.count("# hand-tuned") == 1
    twice = apply_winner(
        once, "lab.muh", "reduce", "lab", "float32", {"items": 16, "vec": 2}, ev(variant="ipt_16.tpb_512.ipv_2")
    )
    assert twice.count("@measured(") == 2  # items replaced (one annotation), vec added
    spec = load(twice, "lab.muh")
    assert spec.algorithms["reduce@lab"].policies["float32"].items == 16
    assert spec.measured["algorithms.reduce@lab.policies.float32.items"].variant == "ipt_16.tpb_512.ipv_2"


def test_canonical_input_stays_canonical(small_text):
    SMALL = small_text
    canon = format_module(parse(SMALL, "lab.muh"))
    out = apply_winner(canon, "lab.muh", "reduce", "lab", "float32", {"items": 12}, ev())
    assert format_module(parse(out, "lab.muh")) == out
    out2 = apply_winner(out, "lab.muh", "scan", "lab", "default", {"threads": 256}, ev())
    assert format_module(parse(out2, "lab.muh")) == out2
    assert load(out2, "lab.muh").algorithms["scan@lab"].policies["default"].threads == 256


def test_multiline_policy_gets_a_new_line_with_its_indent(small_text):
    SMALL = small_text
    out = apply_winner(SMALL, "lab.muh", "reduce", "lab", "default", {"vec": 2, "threads": 128}, ev())
    line = next(x for x in out.splitlines() if "threads = 128 @measured(" in x)
    assert line.startswith("    threads") and line.endswith("  # CUB's sm_60 policy")  # the trailing comment stays
    assert "    vec = 2 @measured(" in out
    assert load(out, "lab.muh").algorithms["reduce@lab"].policies["default"].vec == 2


def test_stale_when_the_hardware_changes(small_text):
    SMALL = small_text
    hw = load(SMALL, "lab.muh").hardware["lab"]
    out = apply_winner(SMALL, "lab.muh", "reduce", "lab", "float32", {"items": 12}, ev(hardware_fingerprint(hw)))
    changed = out.replace(TOOLCHAIN, TOOLCHAIN.replace('cuda = "13.0"', 'cuda = "13.1"'))
    assert changed != out  # the card's CUDA version changed
    lines = "\n".join(explain(derive(load(changed, "lab.muh")), "reduce.float32.items"))
    assert "STALE" in lines


def test_measured_check_fails_on_stale_values(small_text):
    SMALL = small_text
    from muh.check.measured import check_measured
    from muh.codegen.base import BuildContext

    hw = load(SMALL, "lab.muh").hardware["lab"]
    out = apply_winner(SMALL, "lab.muh", "reduce", "lab", "float32", {"items": 12}, ev(hardware_fingerprint(hw)))
    s = load(out, "lab.muh")
    assert check_measured(BuildContext(s, derive(s))).status == "pass"
    card = f"  sm_count = {KEYS['sm_count']}\n"
    assert card in out
    s2 = load(out.replace(card, "  sm_count = 114\n"), "lab.muh")
    res = check_measured(BuildContext(s2, derive(s2)))
    assert res.status == "fail" and "stale" in res.detail and any(c.startswith("STALE") for c in res.cases)
    s3 = load(SMALL, "lab.muh")
    assert check_measured(BuildContext(s3, derive(s3))).status == "skip"


def test_a_kept_incumbent_is_measured_and_kept(small_text):
    """No challenger won: the incumbent's values stay, with evidence, and explain says "measured, kept"."""
    hw = load(small_text, "lab.muh").hardware["lab"]
    e = Evidence(
        device="NVIDIA H200",
        date="2026-12-01",
        toolkit="CUDA 13.0.88",
        samples=75,
        variant="ipt_12.tpb_256.ipv_4",
        score=1.003,
        min=0.99,
        mean=1.003,
        max=1.01,
        fingerprint=hardware_fingerprint(hw),
        kept=True,
    )
    assert annotation(e).endswith(", kept = true)")
    out = apply_winner(small_text, "lab.muh", "reduce", "lab", "float32", {"items": 16, "threads": 256, "vec": 4}, e)
    spec = load(out, "lab.muh")
    pol = spec.algorithms["reduce@lab"].policies["float32"]
    assert (pol.threads, pol.items, pol.vec) == (256, 16, 4)  # the values did not change
    assert spec.measured["algorithms.reduce@lab.policies.float32.threads"].kept is True
    lines = "\n".join(explain(derive(spec), "reduce.float32.threads"))
    assert "measured, kept on NVIDIA H200 2026-12-01 [best challenger ipt_12.tpb_256.ipv_4 score 1.003]" in lines
    assert format_module(parse(out, "lab.muh")) == out or format_module(parse(small_text, "lab.muh")) != small_text


def test_the_fingerprint_hashes_the_facts_set_not_the_fields_left_unset(small_text):
    """A new optional hardware key in the language (unset in the spec) must not mark every measurement
    stale; declaring a fact does change it."""
    from typing import Optional

    from muh.schema.models import Hardware

    hw = load(small_text, "lab.muh").hardware["lab"]

    class Wider(Hardware):  # the language one release later: one more optional key
        future_key: Optional[int] = None

    assert hardware_fingerprint(Wider.model_construct(**dict(hw))) == hardware_fingerprint(hw)
    assert "l2_cache" not in small_text
    declared = load(small_text.replace(hardware(), hardware(l2_cache="60 MiB")), "lab.muh")
    assert hardware_fingerprint(declared.hardware["lab"]) != hardware_fingerprint(hw)
