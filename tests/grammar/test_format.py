from __future__ import annotations

from pathlib import Path

import pytest

from muh.grammar.format import format_module
from muh.grammar.parser import parse

SPECS = sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.muh"))


def fmt(text: str) -> str:
    return format_module(parse(text, "t.muh"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_bundled_specs_are_formatted(spec):
    text = spec.read_text()
    assert fmt(text) == text, f"run `muh fmt {spec}`"


def test_fixed_point_and_comments_kept():
    messy = (
        "# head\nmuh   1\nhardware   x{a=1 # one\n\n\n b = 2\n# lead\n c=[1,2 ,3]  t { x = 1 }\n"
        "  # tail\n}\nalgorithm reduce on x {policy default{threads=64 items=2}}\n# end\n"
    )
    once = fmt(messy)
    assert fmt(once) == once
    for c in ("# head", "# one", "# lead", "# tail", "# end"):
        assert c in once
    assert "  a = 1  # one\n\n  b = 2\n" in once
    assert "policy default { threads = 64  items = 2 }" in once


def test_long_blocks_break_into_lines():
    long = "muh 1\nhardware x { " + "  ".join(f"key_number_{i} = {i}" for i in range(12)) + " }\n"
    out = fmt(long)
    assert out.count("\n") > 12 and fmt(out) == out
