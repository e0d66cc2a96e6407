"""Emitter `vllm_image`: ``image/steps.sh``, the vLLM engine's build-time steps in a platform's image.

The platform's image (muh/platforms/<name>/) copies muh's folder to the launch's root and runs the steps
the plan's launch lists (``Launch.image_steps``): install the plugin (required), the anchored edits, MoE configs,
muh's ops (optional, each logs one line when skipped), and the conditional flags' markers the start script reads.
A step that imports the engine or compiles runs under ``timeout``.
"""
from __future__ import annotations

from muh.codegen import ops_package
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.diagnostics import Diagnostic, Severity
from muh.engines.vllm.codegen.emit import dist_info, plans
from muh.engines.vllm.derive.launch import ACCEPT_DIR, IMAGE_STEPS
from muh.engines.vllm.derive.plan import IMAGE_ROOT, VllmPlan

PKG = "muh.engines.vllm.codegen"
TIMEOUTS = {"ops_build": 900, "imports": 180}
"""Seconds: the ops' compile (the baseline's ops build in well under a minute), a step importing the engine or
Triton (the team's image imports vLLM in seconds; a hang there would stop the platform's build for good)."""


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    files: list[GeneratedFile] = []
    for plan in plans(ctx):
        if plan.launch is not None and IMAGE_STEPS in plan.launch.image_steps:
            files.append(GeneratedFile(IMAGE_STEPS, image_steps(ctx, plan), executable=True))
    return files


def image_steps(ctx: BuildContext, plan: VllmPlan) -> str:
    """The vLLM family's image fragment: image/steps.sh."""
    moe_files = [f"vllm/moe_configs/{plan.moe.file_name}"] if plan.moe else []
    required_files = sorted({s.argv[0] for s in plan.pre if s.required and s.argv[0].startswith("/")})
    return render(
        PKG, "steps.sh.j2", header=ctx.header_text(), variant=plan.variant, root=IMAGE_ROOT, dist_info=dist_info(),
        site_candidates=plan.site_packages, edits=[e.id for e in plan.edits], moe_files=moe_files, ops=_ops(ctx, plan),
        cond_flags=plan.cond_flags, triton=plan.triton, required_files=required_files, accept_dir=ACCEPT_DIR,
        confirm=[(p.id, *p.confirm) for p in plan.points if p.confirm is not None], timeouts=TIMEOUTS,
        api_hook=({"flag": plan.api_hook_flag, "group": next((g.id for g in plan.cond_flags if g.id == "middleware"), None)}
                  if plan.api_features or plan.max_tokens_cap else None),
    )


def _ops(ctx: BuildContext, plan: VllmPlan) -> dict | None:
    """The muh_kernels steps of the image, or None when no rebind is served by it.

    The plugin imports ``ops_package.PROVIDER_MODULE``; the image ships that package (built from the
    deploy hardware's kernels) exactly when a rebind names it. A provider the image cannot have is a
    warning: the plugin would log it and keep vLLM's op."""
    ops = [r for r in plan.rebinds if not r.generated]
    span = ctx.spec.span_of(("deploys", plan.deploy, "tune", "ops"))
    for r in ops:
        module = r.provider.partition(":")[0]
        if module.split(".")[0] == "muh":
            ctx.diagnostics.append(Diagnostic(
                "W-DEPLOY-OPS", f"`{r.name}` is served by `{module}`, muh's development runtime, which the image "
                f"does not have: the plugin will keep vLLM's op", span, severity=Severity.warning,
                hint=f"drop `ops_module` (the default `{ops_package.PROVIDER_MODULE}` ships with the image)"))
    if not any(r.provider.partition(":")[0] == ops_package.PROVIDER_MODULE for r in ops):
        return None
    prefix = ops_package.prefix_for(ctx, plan.hardware)
    if prefix is None:
        ctx.diagnostics.append(Diagnostic(
            "W-DEPLOY-OPS", f"ops are listed for `{plan.hardware}`, but no kernels are generated for it: the image "
            "serves vLLM's own ops", span, severity=Severity.warning,
            hint=f"add `reduce` / `transform` algorithms on {plan.hardware} (the ops are built on their policies)"))
        return None
    hw = ctx.spec.hardware[plan.hardware]
    r = ops_package.recipe(hw)
    return {"package": f"{prefix}{ops_package.NAME}", "src": f"/{prefix}".rstrip("/"),
            "compiler": r.compiler, "flags": r.flags}
