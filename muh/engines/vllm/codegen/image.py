"""Emitter `vllm_image`: ``image/steps.sh``, the vLLM engine's build-time steps in a platform's image.

The platform's image (muh/platforms/<name>/) copies muh's folder to the launch's root and runs the steps
the plan's launch lists (``Launch.image_steps``): install the plugin (required), the anchored edits, MoE configs,
muh's ops (optional, each logs one line when skipped), and the conditional flags' markers the start script reads.
A step that imports the engine or compiles runs under ``timeout``.
"""

from __future__ import annotations

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
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
    """The vLLM engine's image fragment: image/steps.sh."""
    moe_files = [f"vllm/moe_configs/{plan.moe.file_name}"] if plan.moe else []
    required_files = sorted({s.argv[0] for s in plan.pre if s.required and s.argv[0].startswith("/")})
    return render(
        PKG,
        "steps.sh.j2",
        header=ctx.header_text(),
        variant=plan.variant,
        root=IMAGE_ROOT,
        dist_info=dist_info(),
        site_candidates=plan.site_packages,
        edits=[e.id for e in plan.edits],
        moe_files=moe_files,
        ops=_ops(plan),
        cond_flags=plan.cond_flags,
        triton=plan.triton,
        required_files=required_files,
        accept_dir=ACCEPT_DIR,
        confirm=[(p.id, *p.confirm) for p in plan.points if p.confirm is not None],
        timeouts=TIMEOUTS,
        api_hook=(
            {"flag": plan.api_hook_flag, "group": next((g.id for g in plan.cond_flags if g.id == "middleware"), None)}
            if plan.api_features or plan.max_tokens_cap
            else None
        ),
    )


def _ops(plan: VllmPlan) -> dict | None:
    """The muh_kernels steps of the image, as derive decided them (``VllmPlan.ops_image``)."""
    o = plan.ops_image
    return None if o is None else {"package": o.package, "src": o.src, "compiler": o.compiler, "flags": o.flags}
