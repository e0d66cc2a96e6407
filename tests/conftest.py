"""Shared fixtures. On CI (CI=true) a test that needs nvcc, the vLLM wheel, PyTorch or clang must run:
a skip becomes a failure."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: `bench.presets`
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/: `lab_card` (the shared hardware block)

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"


# marker -> what CI must have: on CI (CI=true) a skipped test with the marker is a failure. The most
# specific need first: a test marked both `torch` and `nvcc` that skipped for want of torch says torch.
MUST_RUN_ON_CI = {
    "torch": "a test that needs PyTorch was skipped on CI ({why}); .ci/run installs a CPU build",
    "clang": "a test that needs clang-16 and CUDA headers for it was skipped on CI ({why}); .ci/run installs them",
    "vllm": "a test that needs the vLLM wheel was skipped on CI ({why})",
    "cccl35": "a test that needs the CCCL 3.5 headers was skipped on CI ({why}); the test extra installs them",
    "nvcc": "a test that needs nvcc was skipped on CI ({why}); CI must have nvcc",
}

#: NVIDIA's CCCL wheel whose headers the CCCL 3.5 selectors are checked against (pyproject.toml's test extra).
CCCL35_WHEEL, CCCL35_VERSION = "nvidia-cuda-cccl", 3005000


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped:
        for marker, text in MUST_RUN_ON_CI.items():
            if item.get_closest_marker(marker):
                report.outcome = "failed"
                report.longrepr = f"{item.nodeid}: " + text.format(why=report.longrepr)
                break


@pytest.fixture(scope="session")
def nvcc() -> str:
    path = shutil.which("nvcc") or (shutil.which("nvcc", path="/usr/local/cuda/bin"))
    if not path:
        pytest.skip("nvcc not found (install the CUDA toolkit; on CI this is a failure)")
    return path


@pytest.fixture(scope="session")
def cccl35() -> Path:
    """The include folder of the CCCL 3.5 headers (``…/nvidia/cu13/include/cccl``) of the installed wheel."""
    import importlib.metadata
    import re

    try:
        files = importlib.metadata.files(CCCL35_WHEEL) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    found = [f for f in files if str(f).endswith("include/cccl/cuda/std/__cccl/version.h")]
    if not found:
        pytest.skip(f"{CCCL35_WHEEL} is not installed (pip install -e '.[test]'; on CI this is a failure)")
    version_h = Path(found[0].locate())
    m = re.search(r"#define CCCL_VERSION (\d+)", version_h.read_text())
    assert m and int(m.group(1)) == CCCL35_VERSION, f"{version_h}: not CCCL 3.5.0 ({m and m.group(1)})"
    return version_h.parents[3]


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Run the muh CLI in-process: (exit code, stdout, stderr). Exceptions propagate (a traceback is a bug)."""
    from typer.testing import CliRunner

    import muh.cli as cli_mod

    cli_mod._register_optional_commands()
    runner = CliRunner()

    def run(*args: str, cwd: Path | None = None):
        old = os.getcwd()
        os.chdir(cwd or old)
        try:
            res = runner.invoke(cli_mod.app, [str(a) for a in args], catch_exceptions=False)
        finally:
            os.chdir(old)
        return res.exit_code, res.stdout, res.stderr

    return run


@pytest.fixture(scope="session")
def vllm_wheel() -> Path:
    """The pinned vLLM wheel (downloaded once into muh's cache). Skips only when the package registry
    is unreachable, and never on CI (the hook above turns that skip into a failure)."""
    import subprocess

    from muh.engines.vllm.wheel import fetch

    try:
        return fetch("0.6.3.post1")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, FileNotFoundError, OSError) as err:
        detail = getattr(err, "stderr", b"") or b""
        pytest.skip(f"vllm 0.6.3.post1 wheel not downloadable (registry unreachable?): {err} {detail[-300:]!r}")
