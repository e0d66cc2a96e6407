"""Check `deploy`: the deployment files of a spec's deploy block are sound.

The plan's engine's files and its platform's are built (their folders' ``codegen.EMITTERS``) and handed to its folder's
``check`` (``muh.engines.PARTS``). vLLM's: anchored edits against the pinned vLLM wheel (anchor once,
`patch --dry-run`, compiles, values read back), hadolint on the Dockerfile, yamllint and the platform's
shape on computility-run.yaml; the wheel part is skipped (with the reason) when the wheel is not in
muh's cache. (Named `vllm_deploy` before the engines became plug-ins; `--only vllm_deploy` still runs it.)
"""

from __future__ import annotations

from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext
from muh.diagnostics import MuhError


@register("deploy", formerly=("vllm_deploy",))
def deploy(ctx: BuildContext) -> CheckResult:
    """The deploy files of the plan's engine, checked by that engine's folder's ``check`` (muh.engines.PARTS)."""
    from muh import engines, platforms
    from muh.codegen import generate
    from muh.codegen.registry import engine_emitters, platform_emitters

    if not ctx.spec.deploys:
        return CheckResult("deploy", "skip", "the spec has no deploy block")
    plan = ctx.derived.deploy
    if plan is None:  # derive did not resolve the block; its diagnostics say why
        return CheckResult(
            "deploy",
            "fail",
            "the deploy block does not build",
            [d.render() for d in ctx.derived.deploy_diagnostics if d.is_error],
        )
    try:
        only = set(engine_emitters()[plan.engine]) | set(platform_emitters().get(plan.platform, {}))
        files = {f.path: f.content for f in generate(ctx, only=only)}
    except MuhError as err:
        return CheckResult("deploy", "fail", "the deploy block does not build", [d.render() for d in err.diagnostics])
    cases, problems_found, skipped = engines.stage_parts("check")[plan.engine].check(ctx, plan, files)
    own = platforms.stage_parts("check").get(plan.platform)
    if own is not None:  # the platform's files (image, run file, objects), by its folder's check
        c, p, s = own.check(ctx, plan, files)
        cases, problems_found, skipped = cases + c, problems_found + p, skipped + s
    # cases: every line, good or bad (shown with -v or on failure); skipped: parts that could not run, with the reason
    if problems_found:
        return CheckResult("deploy", "fail", f"{problems_found} problem(s)", cases + skipped)
    if skipped:
        return CheckResult("deploy", "skip", "; ".join(skipped), cases + skipped)
    return CheckResult("deploy", "pass", "; ".join(cases), cases)
