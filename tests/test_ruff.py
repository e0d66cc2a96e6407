"""ruff (pyproject.toml [tool.ruff]: 120 columns, pyflakes, import order) finds nothing in muh's Python; CI runs it
here and in .ci/run. A finding is fixed in the code (`ruff check --fix`, `ruff format`), never silenced here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from muh.check.lint import tool

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("muh", "tests", "tools")  # bench/ holds one-off lab scripts, kept as they ran


def ruff() -> list[str]:
    exe = tool("ruff")
    assert exe, "ruff (the test extra) is not installed"
    return [exe]


def test_ruff_check_is_clean():
    r = subprocess.run([*ruff(), "check", "--no-cache", *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr


def test_ruff_finds_a_finding(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os, sys\nx = " + "1 + " * 60 + "1\n")
    r = subprocess.run(
        [*ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1 and "E501" in r.stdout and "F401" in r.stdout, r.stdout + r.stderr
    assert sys.version_info >= (3, 10)
