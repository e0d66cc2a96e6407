"""The vLLM engine's part of ``muh check`` (check ``deploy``, muh/check/deploy.py): its build steps parse, the
edits apply to the base release's wheel (the platform's files are its platform's check: muh/platforms/<name>/check).

Stock vLLM and the EngineX fork share it; everything that differs is read from the ``Variant``.
"""

from __future__ import annotations


def check(ctx, plan, files) -> tuple[list[str], int, list[str]]:
    """(cases, problems found, parts skipped with their reason): image/steps.sh parses, the edits against the base
    release's wheel."""
    from muh.engines.vllm.check import verify
    from muh.engines.vllm.codegen.emit import patch_name
    from muh.engines.vllm.wheel import cached

    cases: list[str] = []
    skipped: list[str] = []
    found = 0
    problems = verify.shell_syntax(files.get("image/steps.sh", ""))
    found += len(problems)
    cases += [f"image/steps.sh: {p}" for p in problems] or ["image/steps.sh: bash -n"]
    wheel = cached(plan.base_version, "vllm")
    if wheel is None:
        skipped.append(
            f"edits against the vllm {plan.base_version} wheel: skipped, the wheel is not in muh's cache "
            "(`muh fetch-engine` downloads it)"
        )
    else:
        patches = {e.id: files[patch_name(i, e.id)] for i, e in enumerate(plan.edits, 1)}
        problems = verify.edits_against_wheel(plan, wheel, patches)
        found += len(problems)
        cases += [f"edit {p}" for p in problems] or [f"{len(plan.edits)} edits apply to {wheel.name} and read back"]
    return cases, found, skipped
