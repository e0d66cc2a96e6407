"""Check `vllm_deploy`: the deployment files of a spec's deploy block are sound.

Anchored edits against the pinned vLLM wheel (anchor once, `patch --dry-run`, compiles, values read
back), hadolint on the Dockerfile, yamllint and the platform's shape on computility-run.yaml. The
wheel part is skipped (with the reason) when the wheel is not in muh's cache.
"""
from __future__ import annotations

from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext
from muh.diagnostics import MuhError
from muh.engines.vllm import check as vllm
from muh.engines.vllm.derive.plan import VllmPlan

ENGINE_CHECKS = [(VllmPlan, vllm.check)]  # each engine's part of this check, by its plan's type


@register("vllm_deploy")
def vllm_deploy(ctx: BuildContext) -> CheckResult:
    from muh.codegen import generate

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
    plan = ctx.derived.deploy
    for kind, check in ENGINE_CHECKS:
        if not isinstance(plan, kind):
            continue
        c, n, s = check(ctx, plan, files)
        cases += c
        problems_found += n
        skipped += s
    if problems_found:
        return CheckResult("vllm_deploy", "fail", f"{problems_found} problem(s)", cases + skipped)
    if skipped:
        return CheckResult("vllm_deploy", "skip", "; ".join(skipped), cases + skipped)
    return CheckResult("vllm_deploy", "pass", "; ".join(cases), cases)
