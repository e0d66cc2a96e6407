"""Issue 28: no hang, no traceback, no nonsense in a run file, checks that work outside the checkout.

Spec-level cases are tests/errors pairs; these are the ones that need a command line, a process, a
file system situation or a deploy target.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def muh(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """A fresh `python -m muh.cli` process with this checkout's muh (a hang is a timeout, a failure)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "muh.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        timeout=timeout,
        env=env,
    )


def baseline_with(tmp_path: Path, old: str, new: str) -> Path:
    text = BASELINE.read_text()
    assert old in text, old
    p = tmp_path / "spec.muh"
    p.write_text(text.replace(old, new, 1))
    return p


def first_error(err: str) -> str:
    return next(line for line in err.splitlines() if ": error: " in line or line.startswith("error: "))


# -- hangs and unbounded memory ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [["build", "/dev/zero"], ["fmt", "--check", "/dev/zero"], ["probe", "--ingest", "/dev/zero", "specs/h200.muh"]],
)
def test_a_device_is_refused_not_read_forever(args):
    proc = muh(*args, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "it is a device, not a regular file" in first_error(proc.stderr)


def test_a_fifo_as_spec_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe.muh"
    os.mkfifo(fifo)
    proc = muh("build", fifo, "-o", tmp_path / "o", timeout=30)  # before: blocked forever waiting for a writer
    assert proc.returncode == 2 and "it is a named pipe (FIFO), not a regular file" in first_error(proc.stderr)


def test_at_most_limit_plus_one_bytes_are_read_whatever_st_size_says(tmp_path, monkeypatch):
    """/proc files and devices report st_size 0: the limit is on the bytes read, not on stat."""
    from muh.diagnostics import MuhError
    from muh.grammar import parser

    big = tmp_path / "big.muh"
    big.write_text("muh 1\n" + "# " + "x" * (3 << 20) + "\n")
    real_stat, real_read = os.stat, os.read
    read = []

    class Zero:  # an os.stat_result whose size is 0, as for /proc files
        def __init__(self, st):
            self._st = st

        def __getattr__(self, name):
            return 0 if name == "st_size" else getattr(self._st, name)

    monkeypatch.setattr(os, "stat", lambda *a, **k: Zero(real_stat(*a, **k)))
    monkeypatch.setattr(os, "fstat", lambda fd: Zero(real_stat(fd)))
    monkeypatch.setattr(os, "read", lambda fd, n: read.append(n) or real_read(fd, n))
    with pytest.raises(MuhError) as got:
        parser.read_source(big)
    assert "is larger than 1024 KiB" in got.value.diagnostics[0].message
    assert sum(read) <= parser.MAX_BYTES + 1


# -- tracebacks ----------------------------------------------------------------------------------------
def test_tensor_parallel_size_zero_is_an_error_at_its_line(tmp_path):
    spec = baseline_with(tmp_path, "tensor_parallel_size = 4", "tensor_parallel_size = 0")
    proc = muh("build", spec, "-o", tmp_path / "o")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-800:]
    line = BASELINE.read_text().splitlines().index("    tensor_parallel_size = 4") + 1
    assert first_error(proc.stderr).startswith(
        f"{spec}:{line}:28: error: `--tensor-parallel-size` = 0 is out of the engine's range: it takes values ≥ 1"
    )


def test_tune_db_that_is_no_file_is_an_option_error(tmp_path):
    """Before: sqlite's `unable to open database file` as a traceback once measuring started."""
    proc = muh("tune", BASELINE, "reduce", "--db", tmp_path, "--dry-run")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert first_error(proc.stderr).startswith(f"error: --db {tmp_path}: not a file")
    (tmp_path / "file.txt").write_text("x")
    proc = muh("tune", BASELINE, "reduce", "--db", tmp_path / "file.txt" / "tune.sqlite", "--dry-run")
    assert proc.returncode == 2 and first_error(proc.stderr).startswith(
        f"error: --db {tmp_path}/file.txt/tune.sqlite: {tmp_path}/file.txt is not a folder"
    )


@pytest.mark.parametrize("sizes", ["-5", "2^99", "0", "2^99999999999"])
def test_tune_sizes_are_positive_and_bounded(sizes):
    proc = muh("tune", BASELINE, "reduce", "--sizes", sizes, "--dry-run", timeout=30)
    assert proc.returncode == 2 and first_error(proc.stderr).startswith(f"error: --sizes '{sizes}': write sizes like")


# -- the language server -------------------------------------------------------------------------------
def _frame(obj=None, raw: bytes | None = None, length: int | None = None) -> bytes:
    body = raw if raw is not None else json.dumps(obj).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def test_lsp_survives_a_huge_content_length_and_bodies_that_are_no_json_rpc():
    msgs = [
        _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        _frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _frame(raw=b"{not json"),
        _frame(raw=b"x\n", length=99999999999),
        _frame(raw=b"[1, 2]"),
        _frame({"jsonrpc": "2.0", "method": "initialized"}),  # JSON-RPC, but no params: pygls cannot read it
        _frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        _frame({"jsonrpc": "2.0", "method": "exit"}),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "muh.cli", "lsp"], input=b"".join(msgs), capture_output=True, timeout=60, env=env
    )
    err = proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err and "MemoryError" not in err, err[-1500:]
    assert b'"id": 2' in proc.stdout or b'"id":2' in proc.stdout  # still serving after all of them
    assert "ignored a message of Content-Length 99999999999" in err and "ignored a message that is not JSON" in err


@pytest.mark.parametrize(
    "old,new,code",
    [
        ("smem_per_block = 48 KiB", "smem_per_block = 1e999999999 B", "E-VALUE"),
        ("mem_bandwidth = 584.2 GB/s", "mem_bandwidth = 1e999999999 GB/s", "E-VALUE"),
        ("sm_count = 16", "sm_count = 2^99999999", "E-NUMBER"),
    ],
)
def test_lsp_reports_what_build_reports_for_huge_numbers(old, new, code):
    """Before: E-INTERNAL (decimal.Overflow) and a hang (2^99999999) in the language server."""
    from muh.lsp.analysis import analyze

    text = BASELINE.read_text().replace(old, new, 1)
    got = analyze(text, "spec.muh")
    assert [d.code for d in got.diagnostics if d.is_error] == [code]


# -- deploy -------------------------------------------------------------------------------------------
def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "submission"
    r.mkdir()
    _git(r, "init", "-q")
    (r / "README.md").write_text("# ours\n")
    _git(r, "add", "README.md")
    _git(r, "commit", "-q", "-m", "init")
    return r


DEPLOY_SPEC = ROOT / "tests" / "fixtures" / "deploy" / "competition.muh"


def test_deploy_refuses_an_empty_repo(cli, tmp_path):
    code, out, err = cli("deploy", DEPLOY_SPEC, "--repo", "", "--skip-checks", cwd=tmp_path)
    assert code == 1 and "--repo is empty" in err
    assert not list(tmp_path.iterdir())  # nothing planned into the current folder


def test_deploy_option_errors_do_not_read_as_changes(cli, repo):
    code, _, err = cli("deploy", DEPLOY_SPEC, "--repo", repo, "--bogus")
    assert code == 64 and "No such option" in err  # 2 is "changes planned"
    code, _, _ = cli("deploy", DEPLOY_SPEC)
    assert code == 64


def test_deploy_prints_the_spec_warnings_as_build_does(cli, repo, tmp_path):
    _, _, build_err = cli("build", DEPLOY_SPEC, "-o", tmp_path / "o")
    code, _, err = cli("deploy", DEPLOY_SPEC, "--repo", repo, "--skip-checks")
    warnings = [line for line in build_err.splitlines() if ": warning: " in line]
    assert code == 2 and warnings and all(w in err for w in warnings)


def test_a_gitignored_target_folder_is_one_line(cli, repo):
    (repo / ".gitignore").write_text("muh/\n")
    _git(repo, "add", ".gitignore")
    _git(repo, "commit", "-q", "-m", "ignore")
    code, _, err = cli("deploy", DEPLOY_SPEC, "--repo", repo, "--skip-checks", "--apply")
    errors = [line for line in err.splitlines() if "error" in line and line != "1 error"]
    assert code == 1 and len(errors) == 1, err
    assert "are ignored by the repository (.gitignore:1:muh/)" in errors[0] and "muh/vllm" not in errors[0]
    assert _git(repo, "status", "--porcelain") == ""


def test_ctrl_c_during_the_swap_and_commit_waits_for_the_commit(repo, monkeypatch):
    from muh import deploy as D
    from muh.deploy import git as g

    real = g.commit

    def interrupted_commit(*a, **k):
        os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C with the new files in place
        return real(*a, **k)

    monkeypatch.setattr(g, "commit", interrupted_commit)
    # Python's own Ctrl-C handler, whatever this process inherited (a job started with `&` ignores SIGINT)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        res = D.run(DEPLOY_SPEC, repo, apply=True, checks=False)
        restored = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert res.code == 0 and res.commit and "interrupted: the deploy was finished first" in res.lines[-1]
    assert _git(repo, "status", "--porcelain") == ""  # new files and their commit, never one without the other
    assert restored is signal.default_int_handler  # the deploy gives back the handler it found


# -- checks outside the checkout ---------------------------------------------------------------------
def test_parity_finds_the_packaged_reference_from_any_folder(tmp_path, monkeypatch):
    from muh.check.parity import reference_spec_path

    spec = tmp_path / "my.muh"
    spec.write_text((ROOT / "specs" / "h200.muh").read_text())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MUH_PARITY_SPEC", raising=False)
    ref = reference_spec_path(str(spec))
    assert ref is not None and ref.resolve() == (ROOT / "specs" / "nvidia.muh").resolve()
    # one copy: the repository's specs/nvidia.muh is the package's file
    assert (ROOT / "specs" / "nvidia.muh").is_symlink() and ref.resolve() == (ROOT / "muh" / "check" / "nvidia.muh")


def test_the_wheel_carries_the_parity_reference():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "nvidia.muh" in data.get("muh.check", [])


def test_fetch_engine_is_an_installed_command(vllm_wheel):
    proc = muh("fetch-engine", cwd=Path("/"))
    assert proc.returncode == 0 and "the flag table's wheel" in proc.stdout, proc.stderr
    proc = muh("fetch-engine", "--version", "9.9", cwd=Path("/"))
    assert proc.returncode == 2 and "no variant vllm 9.9; variants: 0.6.3.post1" in proc.stderr, proc.stderr


def test_fetch_engine_asks_the_engine_a_deploy_block_names(vllm_wheel):
    """The command is the registry's, not vLLM's: EngineX fetches its base release (what the deploy check
    proves its edits against), an unknown engine is bad input with the registry's names."""
    proc = muh("fetch-engine", "enginex", cwd=Path("/"))
    assert proc.returncode == 0 and proc.stdout.startswith(str(vllm_wheel)), proc.stderr
    assert "the base release of enginex bi100-v1.2.3" in proc.stdout, proc.stdout
    proc = muh("fetch-engine", "vlm", cwd=Path("/"))
    assert proc.returncode == 2 and "no such engine; engines: enginex, vllm" in proc.stderr, proc.stderr
    assert "did you mean `vllm`" in proc.stderr and "Traceback" not in proc.stderr


def test_fetch_engine_refuses_a_wheel_that_is_not_the_flag_table_s(tmp_path):
    """A cached wheel with another hash (a partial download, another build): exit 1, says which files
    differ and how to fix it; the file is left for the user to inspect."""
    cache = tmp_path / "wheels"
    cache.mkdir()
    bad = cache / "vllm-0.6.3.post1-cp38-abi3-manylinux1_x86_64.whl"
    bad.write_bytes(b"not the wheel")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MUH_CACHE_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "muh.cli", "fetch-engine"], capture_output=True, text=True, cwd="/", timeout=60, env=env
    )
    assert proc.returncode == 1 and "muh's flag table was read from" in proc.stderr, proc.stderr
    assert f"hint: delete {bad}" in proc.stderr and "Traceback" not in proc.stderr
    assert bad.read_bytes() == b"not the wheel"


def test_messages_point_at_the_installed_command_not_at_tools():
    text = (ROOT / "muh" / "engines" / "vllm" / "check" / "__init__.py").read_text()
    assert "tools/extract_vllm_flags.py fetches" not in text and "`muh fetch-engine`" in text


# -- messages ----------------------------------------------------------------------------------------
def test_h200_builds_without_a_warning_that_contradicts_the_kernels(cli, tmp_path):
    code, _, err = cli("build", ROOT / "specs" / "h200.muh", "-o", tmp_path / "o")
    assert code == 0 and "W-CXX-UNSET" not in err


def test_an_unset_header_dimension_warns_once_at_its_algorithm(cli, tmp_path, monkeypatch):
    """A dimension without a meaning for "unset" (here sub_histograms made one) warns once per algorithm
    and dimension, at the algorithm block (before: once per type, 8 times, without a location)."""
    import dataclasses

    from muh.schema import catalog

    monkeypatch.setitem(catalog.DIMS, "sub_histograms", dataclasses.replace(catalog.DIMS["sub_histograms"], unset=None))
    spec = ROOT / "specs" / "h200.muh"
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    unset = [line for line in err.splitlines() if "W-CXX-UNSET" in line]
    line = spec.read_text().splitlines().index("algorithm histogram on h200 {") + 1
    assert code == 0 and len(unset) == 1, err
    assert unset[0].startswith(f"{spec}:{line}:1: warning: histogram on h200: `sub_histograms` is not set")


@pytest.mark.parametrize(
    "old,new,want",
    [
        ("form = bash  #", "form = bash  pre = [step(command = [])]  #", "`command` is empty: it takes a command"),
        ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 1.5", "`--gpu-memory-utilization` = 1.5 is out"),
        ("gpu_memory_utilization = 0.90", "gpu_memory_utilization = 0", "`--gpu-memory-utilization` = 0 is out"),
        (
            "gpu_memory_utilization = 0.90",
            "gpu_memory_utilization = 1e309",
            "`--gpu-memory-utilization` = 1E+309 is out",
        ),
        ("max_num_seqs = 2", "max_num_seqs = 0", "`--max-num-seqs` = 0 is out of the engine's range"),
        ("max_model_len = 80000", "max_model_len = 2^80", "`--max-model-len` = 1208925819614629174706176 is out"),
        ('model = "/model"', 'model = ""', "`model`: the model path is empty"),
        (
            'served_model_name = "llm"',
            'served_model_name = "ll\u202em"',
            "`served_model_name` contains the invisible format character U+202E",
        ),
    ],
)
def test_nonsense_never_reaches_the_run_file(cli, tmp_path, old, new, want):
    spec = baseline_with(tmp_path, old, new)
    line = next(i for i, text in enumerate(spec.read_text().splitlines(), 1) if new.split("(")[-1] in text)
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2, err
    head, _, message = first_error(err).partition(" error: ")
    assert head.startswith(f"{spec}:{line}:") and message.startswith(want), err
    assert not (tmp_path / "o").exists()


def test_every_numeric_serve_flag_has_the_engines_range():
    """From the flag table (the engine's own checks and uses), not a table of muh's."""
    from muh.engines.vllm.derive.engine import load_engine

    engine = load_engine("0.6.3.post1")
    numeric = [o for o in engine.options if o.type in ("int", "float")]
    assert numeric and all(o.range and "min" in o.range and "max" in o.range for o in numeric)
    gmu = engine.option("--gpu-memory-utilization").range
    assert gmu["max"] == 1.0 and gmu["max_where"].startswith("vllm/config.py:") and gmu["min_open"]


def test_python_dash_m_muh_is_the_muh_command():
    """The README's set-up line runs `python3 -m muh build …` (console scripts may not be on PATH: pyenv)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "muh", "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and "build" in proc.stdout and "deploy" in proc.stdout, proc.stderr
