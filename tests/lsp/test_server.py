"""`muh lsp` driven as an editor drives it: a real LSP client over stdio (see conftest.Editor)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lab_card import hardware
from lsp_client import ROOT, Editor, uri_of
from lsprotocol import types as lsp

ERRORS = ROOT / "tests" / "errors"
BASELINE = ROOT / "specs" / "baseline.muh"
EXPECTED = re.compile(r"^[^:]+:(\d+):(\d+): (error|warning): .* \[(E-[A-Z-]+)\]$")


def at(text: str, needle: str, offset: int = 0, nth: int = 0) -> tuple[int, int]:
    """0-based (line, character) of ``needle`` (+offset) in an ASCII text."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += offset
    return text.count("\n", 0, i), i - (text.rfind("\n", 0, i) + 1)


def errors(got: lsp.PublishDiagnosticsParams) -> list[lsp.Diagnostic]:
    """The errors (a build's warnings, e.g. no target architecture for a test spec, may stay)."""
    return [d for d in got.diagnostics if d.severity == lsp.DiagnosticSeverity.Error]


def pos(p: lsp.Position) -> tuple[int, int]:
    return p.line, p.character


# -- diagnostics -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(p.stem for p in ERRORS.glob("*.muh")))
def test_diagnostics_match_the_cli_positions(editor, name, tmp_path):
    """Every bad spec of tests/errors: the first diagnostic sits where `muh build` reports it."""
    line, col, severity, code = EXPECTED.match((ERRORS / f"{name}.expected").read_text().strip()).groups()
    text = (ERRORS / f"{name}.muh").read_text()
    uri = uri_of(tmp_path / f"{name}.muh")
    got = editor.open(uri, text)
    editor.close(uri)
    assert got.diagnostics, "a bad spec must publish diagnostics"
    first = sorted(got.diagnostics, key=lambda d: pos(d.range.start))[0]
    assert first.code == code and first.source == "muh"
    assert pos(first.range.start) == (int(line) - 1, int(col) - 1)
    assert first.severity == lsp.DiagnosticSeverity.Error


def test_bad_spec_then_fix_clears_diagnostics(editor, tmp_path):
    text = (ERRORS / "bad_enum.muh").read_text()
    uri = uri_of(tmp_path / "fix.muh")
    got = editor.open(uri, text)
    (d,) = got.diagnostics
    assert d.code == "E-ENUM" and pos(d.range.start) == at(text, "lgd") and pos(d.range.end) == at(text, "lgd", 3)
    assert "did you mean `ldg`?" in d.message
    # the editor replaces the word (an incremental change), the server re-checks and clears
    got = editor.change(uri, edits=[(d.range, "ldg")])
    assert errors(got) == []
    editor.close(uri)


def test_derive_stage_diagnostic_appears_and_clears(editor, tmp_path):
    """E-SMEM is found by derive (the tile per element size), not by validation."""
    text = (ERRORS / "smem_overflow.muh").read_text()
    uri = uri_of(tmp_path / "smem.muh")
    (d,) = editor.open(uri, text).diagnostics
    assert d.code == "E-SMEM" and "256 KiB" in d.message
    got = editor.change(uri, text.replace("items = 64", "items = 4"))
    assert errors(got) == []
    editor.close(uri)


def test_generate_stage_diagnostics_follow_as_muh_build_reports_them(editor, tmp_path):
    """A spec that derives cleanly still gets what the generate stage of `muh build` says (here a warning)."""
    path = tmp_path / "warn.muh"
    path.write_text((ERRORS / "bad_enum.muh").read_text().replace("lgd", "ldg"))
    build = subprocess.run(
        [sys.executable, "-m", "muh.cli", "build", str(path), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert build.returncode == 0
    expected = sorted(
        re.findall(r"^\S+:(\d+):(\d+): (?:error|warning): .*\[([EW]-[A-Z-]+)\]$", build.stderr, flags=re.M)
    )
    assert expected, "the fixture should make `muh build` warn"
    uri = uri_of(path)
    n = editor.count(uri)
    first = editor.open(uri, path.read_text())
    assert errors(first) == []
    final = editor.wait_diagnostics(uri, n + 1, version=1)  # published again once generation found something
    got = sorted((str(d.range.start.line + 1), str(d.range.start.character + 1), d.code) for d in final.diagnostics)
    assert got == expected
    editor.close(uri)


def test_several_errors_are_published_together(editor, tmp_path):
    card = hardware("x", smem_per_block="48")  # a size without its unit
    assert "  warp_size = " in card
    text = (
        "muh 1\n"
        + card.replace("  warp_size = ", "  warp_sise = ")  # a misspelt key
        + "algorithm sacn on x { policy default { threads = 64 } }\n"
    )
    uri = uri_of(tmp_path / "many.muh")
    got = editor.open(uri, text).diagnostics
    editor.close(uri)
    assert {d.code for d in got} >= {"E-KEY", "E-VALUE", "E-FAMILY"}
    by_code = {d.code: d for d in got}
    assert pos(by_code["E-KEY"].range.start) == at(text, "warp_sise")
    assert pos(by_code["E-FAMILY"].range.start) == at(text, "sacn")


def test_positions_count_utf16_units(editor, tmp_path):
    """A character outside the BMP counts two UTF-16 units before the error on the same line."""
    text = (ERRORS / "bad_enum.muh").read_text().replace('cuda = "10.2"', 'cuda = "10.2"  cxxx = 1', 1)
    text = text.replace("toolchain {", 'toolchain { arch = "\U0001f600"', 1)
    uri = uri_of(tmp_path / "emoji.muh")
    got = editor.open(uri, text).diagnostics
    editor.close(uri)
    key = next(d for d in got if d.code == "E-KEY")
    line_text = text.split("\n")[key.range.start.line]
    assert key.range.start.character == len(line_text[: line_text.index("cxxx")].encode("utf-16-le")) // 2
    assert key.range.start.character == line_text.index("cxxx") + 1


def test_baseline_is_clean(editor):
    got = editor.open(uri_of(BASELINE), BASELINE.read_text())
    assert list(got.diagnostics) == []


# -- hover -----------------------------------------------------------------------------------------
def _hover(editor, text, needle, offset=0, nth=0) -> str:
    h = editor.hover(uri_of(BASELINE), *at(text, needle, offset, nth))
    assert h is not None, needle
    return h.contents.value


def test_hover_shows_resolved_values_with_provenance(editor):
    text = BASELINE.read_text()
    editor.open(uri_of(BASELINE), text)
    # threads of `policy float32.plus` (512 nominal): derived by the mem_bound rule from the hardware
    shown = _hover(editor, text, "threads = 512", 1)
    assert "threads per block" in shown  # the catalogue's documentation of the key
    explained = (
        subprocess.run(
            [sys.executable, "-m", "muh.cli", "explain", str(BASELINE), "reduce.float32.plus.threads"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        .stdout.strip()
        .splitlines()
    )
    for line in explained[1:]:  # what `muh explain` prints, minus its header
        assert line in shown
    assert (
        "[derived]" in shown
        and "mem_bound" in shown
        and "T4=512" in shown
        and "smem=49152" in shown
        and "warp=64" in shown
    )


def test_hover_on_inherited_value_and_hardware(editor):
    text = BASELINE.read_text()
    editor.open(uri_of(BASELINE), text)
    shown = _hover(editor, text, "items = 4", 0)  # topk default: int8 and uint8 inherit it
    assert "[inherited]" in shown and "inherited from policy default" in shown
    shown = _hover(editor, text, "smem_per_block", 2)
    assert "Shared memory" in shown and "49152" in shown  # 48 KiB, in bytes
    shown = _hover(editor, text, "on bi100", 4)
    assert "warp 64" in shown and "16 SMs" in shown
    shown = _hover(editor, text, "algorithm scan", 11)
    assert (
        "DeviceScan" in shown and "tuning_scan.cuh" in shown and "delay" in shown
    )  # CCCL's header; scan tunes its look-back delay
    shown = _hover(editor, text, "max_num_seqs", 2)
    assert "--max-num-seqs" in shown and "serve.max_num_seqs = 2" in shown


# -- definition ------------------------------------------------------------------------------------
def _lines_of(locations) -> list[int]:
    return sorted(loc.range.start.line for loc in locations or [])


def test_definition_of_target_policy_and_derived_value(editor):
    text = BASELINE.read_text()
    uri = uri_of(BASELINE)
    editor.open(uri, text)
    hw_line = at(text, "hardware bi100")[0]
    # `on bi100` → the hardware block
    (loc,) = editor.definition(uri, *at(text, "on bi100", 4))
    assert pos(loc.range.start) == at(text, "hardware bi100", 9) and loc.range.start.line == hw_line
    # a typed policy → the policy it inherits from
    (loc,) = editor.definition(uri, *at(text, "float32.plus", 2))
    assert pos(loc.range.start) == at(text, "default", 0, 0)
    # a derived value → its inputs: the nominal threads and items, the hardware's smem and warp size
    got = _lines_of(editor.definition(uri, *at(text, "threads = 512", 11)))
    assert got == sorted({at(text, "smem_per_block")[0], at(text, "warp_size")[0], at(text, "threads = 512")[0]})


def test_definition_of_a_hardware_reference(editor, tmp_path):
    text = BASELINE.read_text().replace(
        "policy float32.plus { threads = 512", "policy float32.plus { threads = hardware.max_threads_per_block"
    )
    uri = uri_of(tmp_path / "ref.muh")
    assert errors(editor.open(uri, text)) == []
    (loc,) = editor.definition(uri, *at(text, "hardware.max_threads_per_block", 12))
    assert pos(loc.range.start) == at(text, "max_threads_per_block = 1024")
    h = editor.hover(uri, *at(text, "hardware.max_threads_per_block", 12))
    assert "1024" in h.contents.value
    editor.close(uri)


# -- completion ------------------------------------------------------------------------------------
def _complete(editor, tmp_path, text: str, cursor: str = "|") -> list[str]:
    i = text.index(cursor)
    text = text.replace(cursor, "", 1)
    uri = uri_of(tmp_path / "complete.muh")
    editor.open(uri, text)
    try:
        return editor.completion(uri, text.count("\n", 0, i), i - (text.rfind("\n", 0, i) + 1))
    finally:
        editor.close(uri)


HEAD = "muh 1\n" + hardware()


def head(**keys) -> str:
    """HEAD with keys replaced or added (the cursor `|` in one of them)."""
    return "muh 1\n" + hardware(**keys)


def test_completion_of_keys_families_enums_types_units(editor, tmp_path):
    assert {"hardware", "algorithm", "deploy"} <= set(_complete(editor, tmp_path, HEAD + "|"))
    families = _complete(editor, tmp_path, HEAD + "algorithm |")
    assert {"reduce", "scan", "radix_sort", "topk", "transform"} <= set(families) and "lab" not in families
    assert _complete(editor, tmp_path, HEAD + "algorithm reduce on |") == ["lab"]
    keys = _complete(editor, tmp_path, HEAD + "algorithm reduce on lab {\n  policy default {\n    |\n  }\n}\n")
    assert (
        {"threads", "items", "vec", "modifier", "block"} <= set(keys)
        and "radix_bits" not in keys
        and "store" not in keys
    )
    mods = _complete(editor, tmp_path, HEAD + "algorithm reduce on lab {\n  policy default { modifier = |")
    assert {"ldg", "ca", "cg", "cs", "default"} <= set(mods) and "warp_transpose" not in mods
    blocks = _complete(editor, tmp_path, HEAD + "algorithm reduce on lab {\n  policy default { block = l|")
    assert "warp_reductions" in blocks and "warp_scans" not in blocks  # reduce's block algorithms, not scan's
    assert "warp_scans" in _complete(editor, tmp_path, HEAD + "algorithm scan on lab { policy default { block = |")
    types = _complete(editor, tmp_path, HEAD + "algorithm reduce on lab { types = [float32, |")
    assert {"float16", "bfloat16", "int8", "uint64"} <= set(types)
    keys = _complete(editor, tmp_path, HEAD + "algorithm reduce on lab { policy |")
    assert {"default", "float32", "float32.plus"} <= set(keys)
    hw_keys = _complete(editor, tmp_path, HEAD.replace("  toolchain", "  |\n  toolchain"))
    assert {"mem_bandwidth", "l2_cache", "cub_parity", "toolchain"} <= set(hw_keys) and "name" not in hw_keys
    sizes = _complete(editor, tmp_path, head(smem_per_block="48 |"))
    assert {"KiB", "MiB", "B"} <= set(sizes) and "GB/s" not in sizes and "ns" not in sizes
    rates = _complete(editor, tmp_path, head(mem_bandwidth="584 |"))
    assert "GB/s" in rates and "KiB" not in rates
    assert {"nvcc", "clang"} <= set(_complete(editor, tmp_path, head(toolchain={"compiler": "|"})))


def test_completion_of_calls_and_sub_policies(editor, tmp_path):
    delays = _complete(editor, tmp_path, HEAD + "algorithm scan on lab { policy default { delay = |")
    assert {"no_delay", "fixed", "backon_jitter"} <= set(delays)
    args = _complete(editor, tmp_path, HEAD + "algorithm scan on lab { policy default { delay = fixed(ns = 350 ns, |")
    assert set(args) == {"ns", "l2_write_latency"}
    units = _complete(editor, tmp_path, HEAD + "algorithm scan on lab { policy default { delay = fixed(ns = 350 |")
    assert {"ns", "us"} <= set(units) and "KiB" not in units
    subs = _complete(editor, tmp_path, HEAD + "algorithm radix_sort on lab {\n  policy default {\n    |")
    assert {"onesweep", "histogram", "radix_bits"} <= set(subs)
    inside = _complete(editor, tmp_path, HEAD + "algorithm radix_sort on lab {\n  policy default {\n    onesweep { |")
    assert "radix_bits" in inside and "onesweep" not in inside
    assert _complete(editor, tmp_path, HEAD + "# a comment |") == []
    assert _complete(editor, tmp_path, HEAD + 'deploy d on lab { base_image = "a b |') == []


def test_completion_on_baseline_positions(editor):
    """Completion inside specs/baseline.muh as it stands (the rest of the file parses on)."""
    text = BASELINE.read_text()
    uri = uri_of(BASELINE)
    editor.open(uri, text)
    assert "warp_transpose" in editor.completion(uri, *at(text, "load = warp_transpose", 7))
    serve = editor.completion(uri, *at(text, "max_num_seqs = 2", 0))
    assert {"max_num_seqs", "tensor_parallel_size", "gpu_memory_utilization"} <= set(serve)
    engines = editor.completion(uri, *at(text, "engine = enginex", len("engine = ")))
    assert {'enginex "bi100-v1.2.3"', 'vllm "0.6.3.post1"'} <= set(engines)  # every registered engine's variants
    tune = editor.completion(uri, *at(text, "prefix_prefill.head_dim = 256", 0))
    assert {"paged_attention.v1_threshold", "moe.default_config", "ops"} <= set(tune)  # the spec's engine: enginex


# -- formatting, symbols, code actions --------------------------------------------------------------
def test_formatting_equals_muh_fmt(editor, tmp_path):
    messy = BASELINE.read_text().replace(
        "  policy float32.plus { threads = 512  items = 24  vec = 2 }",
        "policy   float32.plus {threads=512\n items = 24 vec=2}",
    )
    path = tmp_path / "messy.muh"
    path.write_text(messy)
    uri = uri_of(path)
    editor.open(uri, messy)
    (edit,) = editor.formatting(uri)
    assert pos(edit.range.start) == (0, 0) and pos(edit.range.end) == (messy.count("\n"), 0)
    subprocess.run([sys.executable, "-m", "muh.cli", "fmt", str(path)], check=True, capture_output=True, cwd=ROOT)
    assert edit.new_text == path.read_text() != messy
    editor.close(uri)
    editor.open(uri_of(BASELINE), BASELINE.read_text())
    assert list(editor.formatting(uri_of(BASELINE))) == []  # already formatted: no edit


def test_document_symbols(editor):
    editor.open(uri_of(BASELINE), BASELINE.read_text())
    syms = editor.symbols(uri_of(BASELINE))
    names = [s.name for s in syms]
    assert names == [
        "hardware bi100",
        "algorithm reduce",
        "algorithm scan",
        "algorithm transform",
        "algorithm topk",
        "algorithm histogram",
        "algorithm segmented_reduce",
        "algorithm radix_sort",
        "deploy competition",
    ]
    reduce = syms[1]
    assert reduce.detail == "on bi100"
    assert [c.name for c in reduce.children] == ["policy default", "policy float32.plus", "space"]
    assert "threads" in [c.name for c in reduce.children[0].children]


def test_code_action_applies_the_did_you_mean(editor, tmp_path):
    text = (ERRORS / "bad_ref.muh").read_text()
    uri = uri_of(tmp_path / "ref.muh")
    diags = editor.open(uri, text).diagnostics
    ref = next(d for d in diags if d.code == "E-REF")
    (action,) = editor.code_actions(uri, ref.range, [ref])
    (edit,) = action.edit.changes[uri]
    assert action.kind == lsp.CodeActionKind.QuickFix and edit.new_text == "smem_per_block"
    assert pos(edit.range.start) == at(text, "smem_per_blok")  # only the misspelt part of `hardware.smem_per_blok`
    after = editor.change(uri, edits=[(edit.range, edit.new_text)])
    assert "E-REF" not in [d.code for d in after.diagnostics]  # (the fixture's knob `x` is still unknown: E-VLLM-KNOB)
    editor.close(uri)


def test_no_code_action_without_a_single_fix(editor, tmp_path):
    text = (ERRORS / "typo_key.muh").read_text()
    uri = uri_of(tmp_path / "typo.muh")
    diags = editor.open(uri, text).diagnostics
    missing = next(d for d in diags if d.code == "E-MISSING")  # "add `warp_size = …`": no one edit
    assert editor.code_actions(uri, missing.range, [missing]) == [] or all(
        a.edit.changes[uri][0].range != missing.range for a in editor.code_actions(uri, missing.range, [missing])
    )
    editor.close(uri)


# -- hostile input -----------------------------------------------------------------------------------
def test_malformed_binary_and_huge_documents(editor, tmp_path):
    uri = uri_of(tmp_path / "hostile.muh")
    got = editor.open(uri, "muh 1\nhardware x { \x00\x01\x02 }\n")
    assert got.diagnostics and got.diagnostics[0].code == "E-SYNTAX"
    got = editor.change(uri, "\ufffd" * 1000 + "\U0001f600{{{{[[[(((")
    assert got.diagnostics
    got = editor.change(uri, "muh 1\n" + "hardware x { a { " * 200)
    assert {d.code for d in got.diagnostics} == {"E-DEPTH"}
    got = editor.change(uri, "muh 1\n" + "# padding\n" * 150_000)  # 1.5 MB
    assert [d.code for d in got.diagnostics] == ["E-IO"]
    for line, char in ((0, 0), (3, 2), (10**6, 10**6)):
        editor.hover(uri, line, char)
        editor.completion(uri, line, char)
        editor.definition(uri, line, char)
    assert editor.formatting(uri) is None  # too large to format, as `muh fmt` refuses it
    editor.close(uri)
    assert editor.alive() and b"Traceback" not in editor.stderr


def test_clean_shutdown_and_exit(tmp_path):
    ed = Editor(encoding="utf-8")
    assert ed.init.capabilities.hover_provider and ed.init.capabilities.definition_provider
    assert ed.init.capabilities.document_formatting_provider and ed.init.capabilities.completion_provider
    ed.open(uri_of(tmp_path / "x.muh"), "muh 1\n")
    assert ed.shutdown() == 0
    assert b"Traceback" not in ed.stderr


def test_hover_without_a_valid_spec_and_on_sub_policies(editor, tmp_path):
    text = (ERRORS / "bad_enum.muh").read_text()
    uri = uri_of(tmp_path / "invalid.muh")
    editor.open(uri, text)
    shown = editor.hover(uri, *at(text, "threads", 2)).contents.value
    assert "threads per block" in shown and "[derived]" not in shown  # documentation only: nothing resolves yet
    editor.close(uri)
    text = BASELINE.read_text()  # its radix_sort policy is CUB's sub-policies (onesweep { … radix_bits = 8 … })
    assert "onesweep {" in text
    uri = uri_of(tmp_path / "subs.muh")
    assert errors(editor.open(uri, text)) == []
    shown = editor.hover(uri, *at(text, "radix_bits = 8", 1)).contents.value
    assert "sub-policy onesweep" in shown and "float32: radix_bits = 8" in shown and "radix bits per pass" in shown
    editor.close(uri)
