"""Feed muh bad input the way a new user (or a hostile value) would, through the real command, and
count the outcomes: a clean diagnostic (exit 1 or 2, a message, no traceback) or not.

Cases: edits of specs/baseline.muh (every reproducer of issue 11 among them), bad command lines,
and file-system situations (output folders muh must not touch, odd spec names), and behaviour an exit
code does not show (``must_hold``). A diagnostic in the implementation's words (``LEAKS``: pydantic's
"Input should …") is not clean. Runs this checkout's muh. Prints a Markdown table per category and
every case that was not clean.
Usage: python tools/bad_inputs.py [--jobs 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = (ROOT / "specs" / "baseline.muh").read_text()
DEPLOY = (ROOT / "tests" / "fixtures" / "deploy" / "competition.muh").read_text()

# (old, new) edits of the baseline spec
SPEC_EDITS = [
    ("threads = 256\n    items = 16\n    vec = 4", 'threads = "256"\n    items = 16\n    vec = 4'),
    ("sm_count = 16", "sm_count = 1e3"),
    ("sm_count = 16", "sm_count = 0x10"),
    ("sm_count = 16", "sm_count = 0"),
    ("sm_count = 16", "sm_count = -16"),
    ("sm_count = 16", "sm_count = 16.5"),
    ("sm_count = 16", "sm_count = 99999999999999999999999999"),
    ("sm_count = 16", "sm_count = true"),
    ("sm_count = 16", "sm_count = [16]"),
    ("sm_count = 16", "sm_count = 16 KiB"),
    ("sm_count = 16", "sm_count = 1..16"),
    ("sm_count = 16", "sm_count ="),
    ("sm_count = 16", "sm_count 16"),
    ("sm_count = 16", "sm_cuont = 16"),
    ("sm_count = 16", "sm_count = 16\n  sm_count = 16"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1208925819614629174706176 KiB"),
    ("smem_per_block = 48 KiB", "smem_per_block = -48 KiB"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 kib"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 KiBs"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48KB/s"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48"),
    ("smem_per_block = 48 KiB", "smem_per_block = 0.5 B"),
    ("smem_per_block = 48 KiB", "smem_per_block = 48 ms"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = nan GB/s"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = inf GB/s"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = 1e30 GB/s"),
    ("launch_latency = 6.2 us", "launch_latency = -6.2 us"),
    ("launch_latency = 6.2 us", "launch_latency = 6.2 hours"),
    ("warp_size = 64", "warp_size = 63"),
    ("warp_size = 64", "warp_size = 0"),
    ("hardware bi100 {", "hаrdware bi100 {"),  # Cyrillic а
    ("hardware bi100 {", "hardware bi100 {\u200b"),
    ("hardware bi100 {", "hardware bi100"),
    ("vendor = iluvatar", "vendor = amd"),
    ("cxx = 14", "cxx = 15"),
    ("cxx = 14", 'cxx = "14"'),
    ('cuda = "10.2"', "cuda = 10.2"),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "Iluvatar/BI,V100"'),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "a\\qb"'),
    ("muh 1", "muh 2"),
    ("muh 1", ""),
    ("algorithm reduce on bi100 {", "algorithm reduce on bi200 {"),
    ("algorithm reduce on bi100 {", "algorithm reduse on bi100 {"),
    ("algorithm reduce on bi100 {", "algorithm reduce bi100 {"),
    ("    threads = 256\n    items = 16", "    threads = 96\n    items = 16"),
    ("    threads = 256\n    items = 16", "    threads = 8192\n    items = 16"),
    ("    modifier = ldg", "    modifier = ldgg"),
    ("    modifier = ldg", "    load = ldg"),
    ("    block = warp_reductions", "    block = warp_scans"),
    ("policy float32.plus {", "policy float33.plus {"),
    ("policy float32.plus {", "policy float32.pluss {"),
    ("policy float32.plus {", "policy float32.plus.x {"),
    ("space { items = 7..24", "space { items = 24..7"),
    ("space { items = 7..24", "space { items = 7..24 step 0"),
    ("space { items = 7..24", "space { items = 1..999999999"),
    ("space { items = 7..24", "space { items = 7.5..24"),
    ("space { items = 7..24", "space { items = []"),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitterz(ns = 952 ns, l2_write_latency = 415 ns)",
    ),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitter(ns = 952, l2_write_latency = 415 ns)",
    ),
    (
        "delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)",
        "delay = backon_jitter(ns = 952 ns, bogus = 3 ns)",
    ),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(952 ns)"),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(ns = 1 ns, ns = 2 ns)"),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = backon_jitter(ns = 952 ns"),
    ('served_model_name = "llm"', 'served_model_name = ["llm", "-x"]'),
    ('served_model_name = "llm"', 'served_model_name = "line\\nbreak"'),
    ('served_model_name = "llm"', 'served_model_name = "bad \\x escape"'),
    ('served_model_name = "llm"', 'served_model_name = "unterminated'),
    ("max_num_seqs = 2", "max_num_seqs = two"),
    ("max_num_seqs = 2", "max_num_seq = 2"),
    ("max_num_seqs = 2", "max_num_seqs = -2"),
    ("dtype = half", "dtype = fp16"),
    ("dtype = half", "dtype = bfloat16"),
    ("tensor_parallel_size = 4", "tensor_parallel_size = 8"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0.90 GB"),
    ("{", "{{"),
    ("}", "}}"),
    ("muh 1", "muh 1\n" + "{" * 200),
    ("muh 1", "muh 1\n" + "x = 1\n"),
    ("muh 1", "muh 1\nhardware bi100 { }"),
    ("muh 1", "muh 1\n\x00"),
    # issue 28
    ("sm_count = 16", "sm_count = 2^99999999"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1e999999999 B"),
    ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = 1e999999999 GB/s"),
    ("sm_count = 16", "sm_count = 1e999999999"),
    ("smem_per_block = 48 KiB", "smem_per_block = 1 B"),
    ("tensor_parallel_size = 4", "tensor_parallel_size = 0"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1.5"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1e309"),
    ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1e999999999"),
    ("max_num_seqs = 2", "max_num_seqs = 0"),
    ("max_model_len = 80000", "max_model_len = 2^80"),
    ('model = "/model"', 'model = ""'),
    ("max_threads_per_block = 1024", "max_threads_per_block = 1024\n  smem_per_block_optin = 32 KiB"),
    ('cuda = "10.2"', 'cuda = "banana"'),
    ('arch = "ivcore10"', 'arch = "sm_90; rm -rf /"'),
    ('served_model_name = "llm"', 'served_model_name = "ll\u202em"'),
    ('device_name = "Iluvatar BI-V100"', 'device_name = "Iluvatar\u202eBI-V100"'),
    ("muh 1", 'muh 1\nparity { out_of_scope = ["[[[", "*", ""] }'),
    ("delay = backon_jitter(ns = 952 ns, l2_write_latency = 415 ns)", "delay = no_delay"),
]

# values that are not errors but used to go wrong: each must build, and correctly (tests check how)
GOOD_EDITS = [
    ('served_model_name = "llm"', 'served_model_name = "--api-key=leak"'),  # emitted --served-model-name=--api-key=leak
    ('served_model_name = "llm"', 'served_model_name = "a\\\\\\"b"'),  # CMD JSON hadolint reads as JSON
]

# command lines (after `muh`); {spec} is a good copy of the baseline, {tmp} a scratch folder
COMMANDS = [
    ["build", "{tmp}/missing.muh"],
    ["build", "{tmp}"],
    ["build", "{tmp}/binary.muh"],
    ["build", "{tmp}/latin1.muh"],
    ["build", "{tmp}/huge.muh"],
    ["build", "{spec}", "--emulate-warp", "48"],
    ["build", "{spec}", "--emulate-warp", "-4"],
    ["build", "{spec}", "--emulate-warp", "0"],
    ["build", "{spec}", "--emulate-warp", "abc"],
    ["build", "{spec}", "--emulate-warp", "100000"],
    ["build", "{spec}", "-o", "{tmp}/file.txt"],
    ["build", "{spec}", "-o", "{tmp}/foreign"],
    ["build", "{spec}", "-o", "{tmp}/fake_manifest"],
    ["build", "{tmp}/..muh"],
    ["build"],
    ["build", "{spec}", "--bogus"],
    ["explain", "{spec}", "reduce.float33"],
    ["explain", "{spec}", "reduce.int8"],
    ["explain", "{spec}", "reduce.float32.max"],
    ["explain", "{spec}", "reduce.float32.thread"],
    ["explain", "{spec}", "redcue"],
    ["explain", "{spec}", "deploy.nope"],
    ["explain", "{spec}", ""],
    ["explain", "{spec}", "...."],
    ["check", "{spec}", "--only", "parityy"],
    ["check", "{tmp}/missing.muh"],
    ["fmt", "{tmp}/missing.muh"],
    ["fmt", "{tmp}/broken.muh"],
    ["fmt", "--check", "{tmp}/binary.muh"],
    ["tune", "{spec}", "redcue", "--dry-run"],
    ["tune", "{spec}", "reduce", "--dry-run", "--types", "float33"],
    ["tune", "{tmp}/bigspace.muh", "reduce", "--dry-run"],
    ["tune", "{spec}", "reduce", "--time", "ten minutes", "--dry-run"],
    ["tune", "{spec}", "reduce", "--strategy", "genetic", "--dry-run"],
    ["tune", "{spec}", "reduce", "--sizes", "2^x", "--dry-run"],
    ["deploy", "{spec}", "--repo", "{tmp}/missing"],
    ["deploy", "{spec}", "--repo", "{tmp}/notgit"],
    ["deploy", "{tmp}/nodeploy.muh", "--repo", "{tmp}/repo", "--skip-checks"],
    ["deploy", "{tmp}/dockerfolder.muh", "--repo", "{tmp}/repo", "--skip-checks", "--apply"],
    ["build", "/dev/zero"],
    ["fmt", "--check", "/dev/zero"],
    ["probe", "--ingest", "/dev/zero", "{spec}"],
    ["build", "{tmp}/fifo.muh"],
    ["tune", "{spec}", "reduce", "--dry-run", "--db", "{tmp}"],
    ["tune", "{spec}", "reduce", "--dry-run", "--sizes", "-5"],
    ["tune", "{spec}", "reduce", "--dry-run", "--sizes", "2^99"],
    ["deploy", "{spec}", "--repo", ""],
    ["deploy", "{spec}", "--bogus"],
    ["schema", "extra"],
    ["nosuchcommand"],
]


# ==== issue 42, the language and spec half (branch harden-a) ==========================================
SPEC_EDITS += [
    # a size bucket beyond what its key's C type holds (elements: long long)
    (
        "policy float32.plus {",
        "policy float64 { when elements < 2^24 { }  when elements >= 2^70 { } }\n  policy float32.plus {",
    ),
    (
        "policy float32.plus {",
        "policy float64 { when elements < 2^24 { }  when elements >= 2^63 { } }\n  policy float32.plus {",
    ),
    # hardware no vendor built, a launch in no time, a keyword as a name, an untested entry for nothing
    ("warp_size = 64", "warp_size = 1"),
    ("vendor = iluvatar", "vendor = nvidia"),  # a 64-lane warp: no NVIDIA GPU has one
    ("launch_latency = 6.2 us", "launch_latency = 0 s"),
    *[("hardware bi100 {", f"hardware {word} {{") for word in ("when", "true", "in", "step", "muh")],
    ("  api {  #", '  untested { env.PYTORCH_CUDA_ALOC_CONF = "x" }\n  api {  #'),
    # messages that leaked the implementation (see LEAKS)
    ("accept = [max_completion_tokens,", "accept = [bogus, max_completion_tokens,"),
    ("  env {  # R4's env", '  env = ["VLLM_X=1", "B=2"]\n  env_old {  # R4\'s env'),
    ('VLLM_IMAGE_FETCH_TIMEOUT = "10"', 'VLLM_IMAGE_FETCH_TIMEOUT = ["10", "20"]'),  # four errors, one per union member
    ('engine = enginex "bi100-v1.2.3"', "engine = vllm"),
    ("muh 1\n", 'muh 1\ninclude "x.muh"\n'),
    ("head_dim = 256", "head_dim = 0"),
    ("concurrency = 1", "concurrency = 65"),
    ("experts = 256", "experts = 0"),
    ("gpu_count = 4", "gpu_count = 2000"),
    # an acknowledgment of a warning that does not exist, of an error, without its reason
    ('@acknowledged(warning = "W-DEPLOY-PARSER"', '@acknowledged(warning = "W-DEPLOY-PARSR"'),
    ('@acknowledged(warning = "W-DEPLOY-PARSER"', '@acknowledged(warning = "E-DEPLOY-VALUE"'),
    ('@acknowledged(warning = "W-DEPLOY-PARSER", reason = ', '@acknowledged(warning = "W-DEPLOY-PARSER", because = '),
]
COMMANDS += [
    ["tune", "{spec}", "reduce", "--dry-run", "--sizes", ""],
    ["tune", "{spec}", "reduce", "--dry-run", "--plot", "{tmp}/nodir/heat.png"],
    ["tune", "{spec}", "reduce", "--dry-run", "--against", "{tmp}/missing.muh"],
]
# Words of the implementation, not of the language: a message holding one is not clean.
LEAKS = ("Input should", "input should", "instance of", "valid dictionary", "not a valid `0`", "Value error")


def must_hold(tmp: Path) -> list[tuple[str, int, str]]:
    """Behaviour an exit code does not show (label, 0 when it holds else 1, what was seen): CR and CRLF
    specs build as their LF twin, fmt keeps a file's line endings, a probe compare is read-only, the
    bundled specs build without a warning."""
    import re

    out = []

    def files(folder: Path) -> dict:
        """A build's files; the manifest without the spec's path from the output folder (``source``)."""
        import json

        out = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        if "manifest.json" in out:
            manifest = json.loads(out["manifest.json"])
            manifest.pop("source", None)
            out["manifest.json"] = manifest
        return out

    (tmp / "lf").mkdir()
    (tmp / "lf" / "s.muh").write_text(BASE)
    run(["build", str(tmp / "lf" / "s.muh"), "-o", str(tmp / "built-lf")], tmp)
    for name, ending in (("CR", "\r"), ("CRLF", "\r\n")):
        (tmp / name).mkdir()
        spec = tmp / name / "s.muh"
        spec.write_bytes(BASE.replace("\n", ending).encode())
        rc, text = run(["build", str(spec), "-o", str(tmp / f"built-{name}")], tmp)
        same = rc == 0 and files(tmp / f"built-{name}") == files(tmp / "built-lf")
        out.append((f"a {name} spec builds as its LF twin", 0 if same else 1, text))
        messy = tmp / name / "messy.muh"
        messy.write_bytes(BASE.replace("sm_count = 16", "sm_count   =   16").replace("\n", ending).encode())
        rc, text = run(["fmt", str(messy)], tmp)
        kept = rc == 0 and messy.read_bytes() == BASE.replace("\n", ending).encode()
        out.append((f"muh fmt keeps {name} line endings", 0 if kept else 1, text))
    bare = tmp / "h200-bare.muh"
    measured = r' @measured\((?:[^()"]|"(?:[^"\\]|\\.)*")*\)'  # strings may hold parentheses
    bare.write_text(re.sub(measured, "", (ROOT / "specs" / "h200.muh").read_text()))
    before = bare.read_bytes()
    rc, text = run(["probe", "--ingest", str(ROOT / "bench" / "results" / "probe-h200.json"), str(bare)], tmp)
    out.append(
        ("muh probe --ingest without --apply writes nothing", 0 if rc == 0 and bare.read_bytes() == before else 1, text)
    )
    for spec in sorted((ROOT / "specs").glob("*.muh")):
        rc, text = run(["build", str(spec), "-o", str(tmp / f"bundled-{spec.stem}")], tmp)
        quiet = rc == 0 and text.strip().startswith("wrote ") and "warning" not in text
        out.append((f"muh build specs/{spec.name} prints no warning", 0 if quiet else 1, text))
    return out


# ==== end of harden-a's block ============================================================================


# ==== harden-b: issue 42, the output / CLI / runtime half ==========================================================
# Cases that need more than one command line: a full standard output, the language server's lifecycle, a second
# spec of the same name, deploy state that is broken, a detached HEAD, a submodule, backward through an operator.
# Each case is (category, label, run() -> (exit, output), verdict(exit, output) -> bool or None for `clean`).
def _b42_git(repo: Path, *args: str) -> None:
    import os

    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(
        ["git", "-C", str(repo), "-c", "protocol.file.allow=always", *args], check=True, capture_output=True, env=env
    )


def _b42_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    _b42_git(path, "init", "-q")
    (path / "README.md").write_text("x\n")
    _b42_git(path, "add", "README.md")
    _b42_git(path, "commit", "-q", "-m", "init")
    return path


def _b42_to_full(args: list[str], cwd: Path) -> tuple[int, str]:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "muh.cli", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            timeout=120,
            env=_env(),
        )
    return proc.returncode, proc.stderr


def _b42_lsp(messages: list[dict], cwd: Path) -> tuple[int, str]:
    import json

    body = b"".join(
        f"Content-Length: {len(b)}\r\n\r\n".encode() + b for b in (json.dumps(m).encode() for m in messages)
    )
    proc = subprocess.run(
        [sys.executable, "-m", "muh.cli", "lsp"], input=body, capture_output=True, cwd=cwd, timeout=120, env=_env()
    )
    return proc.returncode, proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


_B42_AUTOGRAD = """
import sys, torch
from muh.runtime import operators
from muh.runtime.errors import NotDifferentiable
operators._define(torch)
operators.register_autograd(torch, operators._state["lib"])
cpu = torch.library.Library("muh", "IMPL")  # a stand-in CPU kernel (kept referenced: else unregistered)
cpu.impl("gated_rms_norm", lambda x, g, w, e: x * w, "CPU")
x = torch.randn(2, 8, requires_grad=True)
try:
    torch.ops.muh.gated_rms_norm(x, x, torch.ones(8), 1e-6).sum().backward()
except NotDifferentiable as err:
    print(f"error: {err}")
    sys.exit(1)
print("backward ran: a gradient through an inference kernel")
"""


def b42_cases(tmp: Path) -> list[tuple[str, str, object, object]]:
    """Set up what the cases need in ``tmp`` and return them."""
    root = ROOT
    spec = tmp / "spec.muh"
    cases: list[tuple[str, str, object, object]] = []
    full = lambda *a: lambda: _b42_to_full([str(x) for x in a], tmp)  # noqa: E731
    one_line = lambda rc, out: rc == 1 and "Traceback" not in out and out.count("error:") == 1  # noqa: E731
    cases += [
        ("tracebacks (issue 42)", "muh schema > /dev/full", full("schema"), one_line),
        ("tracebacks (issue 42)", "muh build SPEC > /dev/full", full("build", spec, "-o", tmp / "b42-full"), one_line),
        ("tracebacks (issue 42)", "muh explain SPEC reduce > /dev/full", full("explain", spec, "reduce"), one_line),
    ]
    hover = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///x.muh"}, "position": {"line": 0, "character": 0}},
    }
    init = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}}
    exit_ = {"jsonrpc": "2.0", "method": "exit"}
    cases += [
        (
            "tracebacks (issue 42)",
            "muh lsp: a request before initialize",
            lambda: _b42_lsp([hover, init, {"jsonrpc": "2.0", "id": 3, "method": "shutdown"}, exit_], tmp),
            lambda rc, out: rc == 0 and '"code": -32002' in out and "Traceback" not in out,
        ),
        (
            "tracebacks (issue 42)",
            "muh lsp: exit without shutdown",
            lambda: _b42_lsp([init, exit_], tmp),
            lambda rc, out: rc == 1 and "Traceback" not in out,
        ),
    ]
    # two specs of one name in different folders share generated/<name>/ only by -o
    for d in ("b42a", "b42b"):
        (tmp / d).mkdir()
        (tmp / d / "same.muh").write_text(BASE)
    subprocess.run(
        [sys.executable, "-m", "muh.cli", "build", "b42a/same.muh"],
        cwd=tmp,
        capture_output=True,
        timeout=120,
        env=_env(),
    )
    cases.append(
        (
            "file system",
            "muh build b/same.muh after a/same.muh (one generated/same/)",
            lambda: run(["build", "b42b/same.muh"], tmp),
            None,
        )
    )
    # deploy: a broken state, a detached HEAD, a submodule at muh/
    dspec = tmp / "b42-deploy.muh"
    dspec.write_text(DEPLOY)
    for how in ("corrupt", "deleted"):
        repo = _b42_repo(tmp / f"b42-{how}")
        subprocess.run(
            [sys.executable, "-m", "muh.cli", "deploy", str(dspec), "--repo", str(repo), "--skip-checks", "--apply"],
            cwd=tmp,
            capture_output=True,
            timeout=300,
            env=_env(),
        )
        state = repo / "muh" / "deploy-state.json"
        state.write_text("{") if how == "corrupt" else state.unlink()
        _b42_git(repo, "add", "-A")
        _b42_git(repo, "commit", "-q", "-m", how)
        cases.append(
            (
                "deploy (issue 42)",
                f"muh deploy with a {how} deploy-state.json",
                lambda repo=repo: run(["deploy", str(dspec), "--repo", str(repo), "--skip-checks"], tmp),
                lambda rc, out: (
                    rc == 1
                    and "deploy-state.json" in out
                    and "checkout HEAD --" in out
                    and "not written by muh" not in out
                    and "Traceback" not in out
                ),
            )
        )
    detached = _b42_repo(tmp / "b42-detached")
    _b42_git(detached, "checkout", "-q", "--detach")
    cases.append(
        (
            "deploy (issue 42)",
            "muh deploy onto a detached HEAD (a warning in the plan)",
            lambda: run(["deploy", str(dspec), "--repo", str(detached), "--skip-checks"], tmp),
            lambda rc, out: rc == 2 and "W-DEPLOY-DETACHED" in out and "HEAD is detached" in out,
        )
    )
    sub = _b42_repo(tmp / "b42-sub")
    withsub = _b42_repo(tmp / "b42-withsub")
    _b42_git(withsub, "submodule", "add", "-q", str(sub), "muh")
    _b42_git(withsub, "commit", "-q", "-m", "sub")
    cases.append(
        (
            "deploy (issue 42)",
            "muh deploy into a repository whose muh/ is a submodule",
            lambda: run(["deploy", str(dspec), "--repo", str(withsub), "--skip-checks", "--apply"], tmp),
            lambda rc, out: rc == 1 and "muh/ is a git submodule" in out and "Traceback" not in out,
        )
    )
    import importlib.util

    if importlib.util.find_spec("torch") is not None:

        def autograd() -> tuple[int, str]:
            proc = subprocess.run(
                [sys.executable, "-c", _B42_AUTOGRAD], capture_output=True, text=True, cwd=root, timeout=300, env=_env()
            )
            return proc.returncode, proc.stdout + proc.stderr

        cases.append(
            (
                "tracebacks (issue 42)",
                "backward through torch.ops.muh.gated_rms_norm (CPU stand-in)",
                autograd,
                lambda rc, out: rc == 1 and "is not differentiable" in out and "Traceback" not in out,
            )
        )
    return cases


# ==== end harden-b =================================================================================================


def _env() -> dict:
    """This checkout's muh first (the cases run in a scratch folder, where an installed muh would be found)."""
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run(args: list[str], cwd: Path) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "muh.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120, env=_env()
        )
    except subprocess.TimeoutExpired:
        return -1, "HANG (no answer in 120 s)"
    return proc.returncode, proc.stdout + proc.stderr


def clean(rc: int, out: str) -> bool:
    return (
        rc in (1, 2, 64)
        and "Traceback" not in out
        and ("error" in out.lower() or "usage" in out.lower())
        and not any(leak in out for leak in LEAKS)
    )


def setup(tmp: Path) -> dict[str, str]:
    (tmp / "spec.muh").write_text(BASE)
    (tmp / "binary.muh").write_bytes(b"muh 1\n\x00\x01\x02")
    (tmp / "latin1.muh").write_bytes("muh 1\n# caf\xe9\n".encode("latin-1"))
    (tmp / "huge.muh").write_text("muh 1\n" + "# " + "x" * (2 << 20) + "\n")
    (tmp / "broken.muh").write_text("muh 1\nhardware x {\n")
    (tmp / "file.txt").write_text("mine\n")
    (tmp / "foreign").mkdir()
    (tmp / "foreign" / "app.js").write_text("x\n")
    (tmp / "fake_manifest" / "src").mkdir(parents=True)
    (tmp / "fake_manifest" / "manifest.json").write_text("{}")
    (tmp / "fake_manifest" / "src" / "app.js").write_text("x\n")
    (tmp / "..muh").write_text(BASE)
    (tmp / "bigspace.muh").write_text(
        BASE.replace(
            "space { items = 7..24  threads = 128..1024 step 64  vec = [1, 2, 4] }",
            "space { items = 1..1024  threads = 64..1024  vec = [1, 2, 4, 8, 16] }",
        )
    )
    (tmp / "nodeploy.muh").write_text(BASE.split("deploy ")[0])
    (tmp / "dockerfolder.muh").write_text(
        DEPLOY.replace("deploy competition on bi100 {", 'deploy competition on bi100 {\n  folder = "Dockerfile"')
    )
    (tmp / "notgit").mkdir()
    import os

    os.mkfifo(tmp / "fifo.muh")  # a FIFO as spec blocked forever
    subprocess.run(["git", "init", "-q", str(tmp / "repo")], check=True)
    return {"spec": str(tmp / "spec.muh"), "tmp": str(tmp)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=3)
    args = ap.parse_args()
    results: dict[str, list[tuple[str, int, str]]] = {
        "spec edits": [],
        "command lines": [],
        "file system": [],
        "hostile values (must build)": [],
        "behaviour (must hold)": [],
    }
    verdicts: dict[str, object] = {}  # label -> its own verdict (cases of the harden-b block)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        names = setup(tmp)
        jobs = []
        for i, (old, new) in enumerate(SPEC_EDITS):
            assert old in BASE, old
            p = tmp / f"edit{i:03d}.muh"
            p.write_text(BASE.replace(old, new, 1))
            jobs.append(("spec edits", f"`{old[:40]}` → `{new[:40]}`", ["build", str(p), "-o", str(tmp / f"o{i}")]))
        for i, (old, new) in enumerate(GOOD_EDITS):
            assert old in BASE, old
            p = tmp / f"good{i:03d}.muh"
            p.write_text(BASE.replace(old, new, 1))
            jobs.append(("hostile values (must build)", f"`{new[:40]}`", ["build", str(p), "-o", str(tmp / f"g{i}")]))
        for cmd in COMMANDS:
            argv = [a.format(**names) for a in cmd]
            cat = (
                "file system"
                if any(x in " ".join(cmd) for x in ("-o", "..muh", "binary", "latin1", "huge", "missing", '{tmp}"'))
                or cmd[:2] == ["build", "{tmp}"]
                else "command lines"
            )
            jobs.append((cat, "muh " + " ".join(cmd), argv))
        for cat, label, fn, verdict in b42_cases(tmp):  # harden-b's block
            results.setdefault(cat, [])
            jobs.append((cat, label, fn))
            if verdict is not None:
                verdicts[label] = verdict
        with ThreadPoolExecutor(args.jobs) as ex:
            outs = list(ex.map(lambda j: j[2]() if callable(j[2]) else run(j[2], tmp), jobs))
        for (cat, label, _), (rc, out) in zip(jobs, outs):
            results[cat].append((label, rc, out))
        results["behaviour (must hold)"] += must_hold(tmp)
        # nothing the user owns was touched
        untouched = (
            (tmp / "file.txt").read_text() == "mine\n"
            and (tmp / "foreign" / "app.js").read_text() == "x\n"
            and (tmp / "fake_manifest" / "src" / "app.js").read_text() == "x\n"
        )
    print("| category | inputs | clean diagnostics (or, for hostile values, a correct build) | tracebacks | other |")
    print("|---|---|---|---|---|")
    total = [0, 0, 0, 0]
    bad = []
    for cat, rows in results.items():
        n = len(rows)
        default = clean if "must" not in cat else (lambda rc, out: rc == 0 and "Traceback" not in out)
        good = lambda label, rc, out: verdicts.get(label, default)(rc, out)  # noqa: E731
        ok = sum(good(label, rc, out) for label, rc, out in rows)
        tb = sum("Traceback" in out for _, _, out in rows)
        print(f"| {cat} | {n} | {ok} | {tb} | {n - ok - tb} |")
        total = [total[0] + n, total[1] + ok, total[2] + tb, total[3] + n - ok - tb]
        bad += [(cat, label, rc, out) for label, rc, out in rows if not good(label, rc, out)]
    print(f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |")
    print(f"\nuser files next to the refused outputs untouched: {untouched}")
    for cat, label, rc, out in bad:
        print(f"\nNOT CLEAN ({cat}) {label}: exit {rc}\n" + "\n".join("    " + line for line in out.splitlines()[:8]))


if __name__ == "__main__":
    main()
