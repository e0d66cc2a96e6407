"""Issue 42, the output / CLI / runtime half: the last tracebacks (a full standard output, the language
server's lifecycle), deploy state that is corrupt or gone, a detached HEAD, a submodule where muh deploys.

Each case runs the real command in a fresh process (a traceback is a failure)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def muh(*args, cwd: Path | None = None, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "muh.cli", *map(str, args)], text=True, cwd=cwd or ROOT, timeout=timeout, env=env, **kw
    )


# -- a standard output that cannot be written ----------------------------------------------------------
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize(
    "args", [("schema",), ("build", BASELINE, "-o", "{tmp}/out"), ("explain", BASELINE, "reduce"), ("--version",)]
)
def test_a_full_stdout_is_one_line_and_exit_1(args, tmp_path):
    with open("/dev/full", "w") as full:
        proc = muh(*(str(a).format(tmp=tmp_path) for a in args), stdout=full, stderr=subprocess.PIPE)
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr[-2000:]
    assert lines == ["error: cannot write to standard output: No space left on device [E-STDOUT]"]


# -- the language server's lifecycle --------------------------------------------------------------------
def _frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def _responses(raw: bytes) -> list[dict]:
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        n = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        out.append(json.loads(rest[:n]))
        raw = rest[n:]
    return out


def _lsp(messages: list[dict]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "muh.cli", "lsp"],
        input=b"".join(map(_frame, messages)),
        capture_output=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )


HOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "textDocument/hover",
    "params": {"textDocument": {"uri": "file:///x.muh"}, "position": {"line": 0, "character": 0}},
}
OPEN = {
    "jsonrpc": "2.0",
    "method": "textDocument/didOpen",
    "params": {"textDocument": {"uri": "file:///x.muh", "languageId": "muh", "version": 1, "text": "muh 1\n"}},
}
INIT = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}}
SHUTDOWN = {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}
EXIT = {"jsonrpc": "2.0", "method": "exit"}


def test_lsp_answers_a_request_before_initialize_with_server_not_initialized():
    proc = _lsp([HOVER, OPEN, INIT, SHUTDOWN, EXIT])
    err = proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
    got = {r.get("id"): r for r in _responses(proc.stdout)}
    assert got[1]["error"]["code"] == -32002 and "result" not in got[1]
    assert "capabilities" in got[2]["result"] and 3 in got
    assert "answered textDocument/hover before initialize" in err


def test_lsp_exit_without_shutdown_exits_1():
    proc = _lsp([INIT, EXIT])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Traceback" not in err, err[-2000:]
    assert _lsp([INIT, SHUTDOWN, EXIT]).returncode == 0


# -- build speed -----------------------------------------------------------------------------------------
LAZY = """
import sys
sys.argv = ["muh", "build", *sys.argv[1:]]
from muh.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
print("exit", code, "| probe result models loaded:", "muh.codegen.probe.result" in sys.modules)
"""


def test_a_build_does_not_build_the_probe_result_models(tmp_path):
    """Issue 42 (build speed): the probe result's pydantic models are ingest's (~13 ms to build), not a build's."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", LAZY, str(BASELINE), "-o", str(tmp_path / "a")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.stdout.splitlines()[-1] == "exit 0 | probe result models loaded: False", proc.stdout + proc.stderr
    assert (tmp_path / "a" / "probe" / "probe.cu").is_file()


# -- docs that agree with the code -------------------------------------------------------------------------
def test_docs_tune_lists_the_tunable_families_the_help_lists(cli):
    from muh.families import registry

    names = [r.name for r in registry.tunable()]
    text = (ROOT / "docs" / "tune.md").read_text()
    sentence = text[text.index("`ALGO` is one of the tunable families:") :]
    listed = re.findall(r"`(\w+)`", sentence[len("`ALGO` is one of the tunable families:") : sentence.index("\n(")])
    assert listed == names
    code, out, _ = cli("tune", "--help")
    assert code == 0 and ", ".join(names) in " ".join(out.split())


def test_explain_and_docs_agree_on_a_flag_every_good_run_had():
    proc = muh("explain", BASELINE, "deploy.serve.disable_log_requests")
    assert proc.returncode == 0, proc.stderr
    assert "rule: spec; in every reported run of enginex bi100-v1.2.3: in every run file the team used" in proc.stdout
    assert "no run record" not in proc.stdout
    deploy_md = " ".join((ROOT / "docs" / "deploy.md").read_text().split())
    assert "flags every known good run had (`--disable-log-requests`," in deploy_md
    assert "says of one it sets `in every reported run of <variant>: <why>`" in deploy_md


def test_nothing_cites_the_private_fact_sheets():
    """Users of the repository do not have the project's fact sheets: cite the public sources."""
    private = "shared" + "/facts"
    found = []
    for top in ("README.md", "docs", "muh", "specs", "tests", "bench", "tools", "generated", "editors"):
        base = ROOT / top
        for p in [base] if base.is_file() else sorted(base.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".png", ".so", ".sqlite"):
                try:
                    text = p.read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
                found += [
                    f"{p.relative_to(ROOT)}:{i}" for i, line in enumerate(text.splitlines(), 1) if private in line
                ]
    assert not found, found


def test_help_texts_are_one_style():
    """Every command's and option's help: one line, a sentence (capital first letter, full stop)."""
    import typer.main

    import muh.cli as cli_mod

    cli_mod._register_optional_commands()
    bad = []
    for name, cmd in sorted(typer.main.get_command(cli_mod.app).commands.items()):
        for what, text in [(name, cmd.help)] + [(f"{name} {p.name}", getattr(p, "help", None)) for p in cmd.params]:
            if text is not None and ("\n" in text.strip() or not text[:1].isupper() or not text.rstrip().endswith(".")):
                bad.append(f"{what}: {text!r}")
    assert not bad, bad


def test_readme_names_probe_s_folder_optional():
    readme = (ROOT / "README.md").read_text()
    assert (
        "`muh probe SPEC [-o DIR] [--emulate-warp N]`" in readme and "`DIR` defaults to `probe-<spec name>`" in readme
    )
