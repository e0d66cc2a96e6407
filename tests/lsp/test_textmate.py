"""The TextMate grammar is current, and it highlights a real spec the way the language reads it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from lsp_client import ROOT

from muh.lsp.textmate import OUTPUT, render

VSCODE = ROOT / "editors" / "vscode"


def test_committed_grammar_is_current():
    assert (ROOT / OUTPUT).read_text(encoding="utf-8") == render(), "run `python -m muh.lsp.textmate`"


def scopes_of(text: str) -> dict[int, str]:
    """Scope per character offset, by TextMate's rule: at each position the earliest match wins, the
    first pattern on a tie; a pattern with captures scopes only its captured groups."""
    patterns = json.loads(render())["patterns"]
    compiled = [(re.compile(p["match"]), p) for p in patterns]
    out: dict[int, str] = {}
    i = 0
    while i < len(text):
        best = None
        for rx, p in compiled:
            m = rx.search(text, i)
            if m and m.end() > m.start() and (best is None or m.start() < best[0].start()):
                best = (m, p)
        if best is None:
            break
        m, p = best
        if "captures" in p:
            for group, cap in p["captures"].items():
                if m.group(int(group)) is not None:
                    for k in range(m.start(int(group)), m.end(int(group))):
                        out[k] = cap["name"]
        else:
            for k in range(m.start(), m.end()):
                out[k] = p["name"]
        i = m.end()
    return out


def test_baseline_highlighting():
    text = (ROOT / "specs" / "baseline.muh").read_text()
    scopes = scopes_of(text)

    def scope(needle: str, offset: int = 0) -> str:
        return scopes.get(text.index(needle) + offset, "")

    assert scope("# The competition").startswith("comment.")
    assert scope("hardware bi100").startswith("storage.type.block") and scope("hardware bi100", 9).startswith(
        "entity.name"
    )
    assert scope("algorithm reduce on bi100", 10).startswith("entity.name.section")
    assert scope("algorithm reduce on bi100", 17).startswith("keyword.control")
    assert scope("algorithm reduce on bi100", 20).startswith("entity.name.type")
    assert scope("48 KiB").startswith("constant.numeric") and scope("48 KiB", 3).startswith("keyword.other.unit")
    assert scope("584.2 GB/s", 6).startswith("keyword.other.unit") and scope("584.2 GB/s", 9).startswith(
        "keyword.other.unit"
    )
    assert scope('"Iluvatar BI-V100"').startswith("string.")
    assert scope("sm_count = 16").startswith("variable.other.property") and scope("sm_count = 16", 9).startswith(
        "keyword.operator"
    )
    assert scope("paged_attention.v1_threshold").startswith("variable.other.property")
    assert scope("enable_chunked_prefill = true", 25).startswith("constant.language")
    assert scope("backon_jitter(").startswith("entity.name.function")
    assert scope("7..24", 1).startswith("keyword.operator.range")
    assert scope("muh 1").startswith("keyword.control")
    assert scope("modifier = ldg", 11) == "variable.other.muh"  # an enum value is a plain name
    # every character outside whitespace gets a scope
    uncovered = [text[k] for k in range(len(text)) if not text[k].isspace() and k not in scopes]
    assert uncovered == []


def test_vscode_extension_starts_muh_lsp():
    manifest = json.loads((VSCODE / "package.json").read_text())
    (lang,) = manifest["contributes"]["languages"]
    assert lang["extensions"] == [".muh"] and (VSCODE / lang["configuration"]).is_file()
    (grammar,) = manifest["contributes"]["grammars"]
    assert (VSCODE / grammar["path"]).resolve() == (ROOT / OUTPUT).resolve()
    assert grammar["scopeName"] == json.loads(render())["scopeName"]
    command = manifest["contributes"]["configuration"]["properties"]["muh.server.command"]["default"]
    assert command == ["muh", "lsp"]
    assert '"server.command"' in (VSCODE / manifest["main"]).read_text()  # the extension starts what the setting says
    helped = subprocess.run(
        [sys.executable, "-m", "muh.cli", *command[1:], "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert helped.returncode == 0 and "Language server" in helped.stdout


def test_lsp_reads_the_parsers_grammar():
    """The completion context and the TextMate generator use the parser muh parses with (built once,
    from muh's grammar cache), not a second lark build of muh.lark."""
    from muh.grammar import parser
    from muh.lsp import context, textmate

    assert context.grammar() is parser._parser()
    assert textmate.grammar() is parser._parser()
