"""In-process pieces of the language server: the did-you-mean fix, the crash guard, units by field."""

from __future__ import annotations

from muh.diagnostics import Diagnostic, Span, did_you_mean, suggestion
from muh.lsp.features import fix, units_for
from muh.lsp.server import _safe
from muh.schema.models import Hardware, PolicyValues


def test_suggestion_reads_did_you_mean_hints_only():
    assert suggestion(did_you_mean("lgd", ["ldg", "cg"])) == "ldg"
    assert suggestion("unknown key; did you mean `warp_size`? see docs") == "warp_size"
    assert suggestion("add `warp_size = …` to this block") is None
    assert suggestion("did you mean 24..7?") is None


def test_fix_replaces_only_the_misspelt_segment():
    text = "x = hardware.smem_per_blok\n"
    d = Diagnostic("E-REF", "…", Span("f", 1, 5, 1, 27), hint=did_you_mean("smem_per_blok", ["smem_per_block"]))
    span, word = fix(d, text)
    assert (span.col, span.end_col, word) == (14, 27, "smem_per_block")
    d = Diagnostic("E-REF", "…", Span("f", 1, 5, 1, 27), hint=did_you_mean("hardwre", ["hardware"]))
    assert fix(d, "x = hardwre.smem_per_block\n")[0].col == 5
    assert (
        fix(Diagnostic("E-X", "…", Span("f", 9, 1, 9, 2), hint="did you mean `a`?"), text) is None
    )  # span off the text
    assert fix(Diagnostic("E-X", "…", None, hint="did you mean `a`?"), text) is None


def test_a_crashing_stage_becomes_a_diagnostic():
    def boom(text, file, *args):
        raise ValueError("kaputt")

    a = _safe(boom, "muh 1\n", "f.muh")
    (d,) = a.diagnostics
    assert d.code == "E-INTERNAL" and "kaputt" in d.message and d.span.line == 1


def test_units_follow_the_field_types():
    assert "KiB" in units_for(Hardware, "smem_per_block") and "GB/s" not in units_for(Hardware, "smem_per_block")
    assert "GB/s" in units_for(Hardware, "mem_bandwidth") and "us" in units_for(Hardware, "launch_latency")
    assert units_for(Hardware, "sm_count") == () and "MiB" in units_for(PolicyValues, "bytes_in_flight")


def test_hover_documents_keys_from_their_docstrings():
    """The models no longer read their docstrings at import (issue 11 item 20): the server asks for
    them once; hover still shows them."""
    from muh.lsp.features import _field_doc
    from muh.schema.models import Hardware

    assert "Threads per warp: 32 on NVIDIA, 64 on the BI-V100." in _field_doc(Hardware, "warp_size")


def test_serve_options_of_an_engine_without_a_flag_table_are_none(monkeypatch):
    """An engine whose ``flag_table`` has nothing for its variant (returns None) offers no serve keys; the
    hover and the completion of a ``serve`` key go through the interface, not vLLM's table shape."""
    from dataclasses import replace

    from muh import engines
    from muh.lsp.features import _engine_options, _serve_doc

    bare = replace(engines.REGISTRY["vllm"], flag_table=lambda variant: None)
    monkeypatch.setitem(engines.REGISTRY, "vllm", bare)
    assert _engine_options(("vllm", "0.6.3.post1")) == ()

    class A:  # the analysis of a buffer whose spec serves the bare engine
        spec = type(
            "S",
            (),
            {"deploys": {"d": type("D", (), {"engine": type("E", (), {"name": "vllm", "version": "0.6.3.post1"})})}},
        )

    assert _serve_doc(A, "max_num_seqs") is None
