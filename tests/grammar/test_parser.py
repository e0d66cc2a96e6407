from __future__ import annotations

from decimal import Decimal

import pytest

from muh.diagnostics import MuhError
from muh.grammar import ast
from muh.grammar.parser import parse, read_source


def test_values_and_spans():
    m = parse(
        "muh 1\nhardware h {\n  smem = 48 KiB\n  r = 7..24 step 2\n  l = [1, 2, 4]\n"
        '  d = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)\n  e = vllm "0.6.3"\n'
        '  ref = hardware.sm_count\n  b = true\n  s = "a\\"b"\n}\n',
        "t.muh",
    )
    assert m.version == 1
    (hw,) = m.members
    vals = {a.name: a.value for a in hw.assigns()}
    assert vals["smem"] == ast.Number(Decimal(48), "48", "KiB", vals["smem"].span)
    assert (vals["smem"].span.line, vals["smem"].span.col) == (3, 10)
    assert isinstance(vals["r"], ast.Range) and vals["r"].step.value == 2
    assert [i.value for i in vals["l"].items] == [1, 2, 4]
    assert vals["d"].name == "backon_jitter" and vals["d"].args[1].value.unit == "ns"
    assert vals["e"].tag == "vllm" and vals["e"].value.value == "0.6.3"
    assert vals["ref"].path == ("hardware", "sm_count")
    assert vals["b"].value is True
    assert vals["s"].value == 'a"b'


def test_units_bind_to_numbers_only():
    m = parse("muh 1\nhardware h { a = 3 GB/s  b = 2 TB/s  c = 6.2 us  d = 5 }")
    vals = {a.name: a.value for a in m.members[0].assigns()}
    assert (vals["a"].unit, vals["b"].unit, vals["c"].unit, vals["d"].unit) == ("GB/s", "TB/s", "us", None)


@pytest.mark.parametrize(
    "text,hint",
    [
        ("hardware x { a 1 }", "missing `=`"),
        ("hardware x { a = [1 2] }", "a list needs `,`"),
        ("hardware x { a = 1", "not closed"),
    ],
)
def test_friendly_syntax_errors(text, hint):
    with pytest.raises(MuhError) as e:
        parse(text, "x.muh")
    d = e.value.diagnostics[0]
    assert d.code == "E-SYNTAX" and hint in (d.hint or "")


def test_deep_nesting_is_a_clean_error():
    with pytest.raises(MuhError) as e:
        parse("hardware x { a = " + "[" * 10_000 + "]" * 10_000 + " }")
    assert e.value.diagnostics[0].code == "E-DEPTH"


def test_binary_and_huge_files(tmp_path):
    junk = tmp_path / "junk.muh"
    junk.write_bytes(b"muh 1\n\xff\xfe\x00garbage")
    with pytest.raises(MuhError) as e:
        read_source(junk)
    assert e.value.diagnostics[0].code == "E-ENCODING"
    assert (e.value.diagnostics[0].span.line, e.value.diagnostics[0].span.col) == (2, 1)
    big = tmp_path / "big.muh"
    big.write_bytes(b"# " + b"x" * (10 * 1024 * 1024))
    with pytest.raises(MuhError) as e:
        read_source(big)
    assert "larger than" in e.value.diagnostics[0].message
    nul = tmp_path / "nul.muh"
    nul.write_text("muh 1\nhardware x {\x00}")
    with pytest.raises(MuhError) as e:
        read_source(nul)
    assert e.value.diagnostics[0].code == "E-ENCODING"


def test_missing_file_and_directory(tmp_path):
    for p in (tmp_path / "nope.muh", tmp_path):
        with pytest.raises(MuhError) as e:
            read_source(p)
        assert e.value.diagnostics[0].code == "E-IO"


def test_the_grammar_is_collision_free_in_larks_strict_mode():
    """The command runs the parser without lark's `strict` check (a second of start-up, issue 11
    item 20); this test keeps the check: no two terminals may match the same text."""
    from muh.grammar.parser import _parser

    assert _parser(strict=True).parse("muh 1\nhardware x { a = 48 KiB  b = [1, 2]  c = f(n = 1 ns) }\n")


def test_the_lexers_units_are_the_schemas_units():
    """One list of units: the grammar's UNIT terminal (what the lexer reads, and what an unknown-unit
    hint lists) names exactly the units the schema converts."""
    from muh.grammar.parser import units
    from muh.schema.units import DIMENSION_OF_UNIT

    assert sorted(units()) == sorted(DIMENSION_OF_UNIT)
