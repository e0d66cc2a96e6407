"""Emitter `docker`: ``Dockerfile`` and ``computility-run.yaml`` in exactly the platform's shapes.

Both are written for the deployed layout: the repository root holds these two files and muh's
other output lives under ``<folder>/`` (``muh/`` by default), which the Dockerfile copies to
``/opt/muh``. Values were checked in resolve (no line breaks or control characters, bounded
length); here they are only escaped for their language: JSON for the exec-form CMD, YAML
double-quoted scalars for the run file, shell words for paths.
"""
from __future__ import annotations

import json

from muh.codegen import ops_package
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.engines.vllm.codegen import runfile
from muh.engines.vllm.codegen.runfile import IMAGE_ROOT
from muh.engines.vllm.codegen.emit import dist_info, plans
from muh.engines.vllm.derive.plan import VllmPlan
from muh.diagnostics import Diagnostic, MuhError, Severity

PKG = "muh.engines.vllm.codegen"


def exec_form(words) -> str:
    """The JSON array of a Dockerfile exec-form instruction. Quotes and backslashes inside a word are
    written as ``\\u0022`` and ``\\u005c``: the same JSON to Docker, and hadolint's parser, which
    misreads ``\\\\\\"`` (DL3025), reads it as JSON too."""
    return json.dumps(list(words), ensure_ascii=True).replace("\\\\", "\\u005c").replace('\\"', "\\u0022")


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    files: list[GeneratedFile] = []
    for plan in plans(ctx):
        files += image_steps(ctx, plan)
    return files


def probe_bundle(ctx: BuildContext) -> tuple[bool, list[GeneratedFile]]:
    """Whether the image carries muh's probe bundle (``muh.codegen.probe``), and its files.

    A muh without the probe package builds an image without the probe step; the run file says so at start."""
    try:
        from muh.codegen.probe import emit_probe_bundle
    except ImportError:
        return False, []
    # the image's probe measures the real card: a development build's --emulate-warp does not apply to it
    native = BuildContext(ctx.spec, ctx.derived, options={k: v for k, v in ctx.options.items() if k != "emulate_warp"})
    try:
        return True, list(emit_probe_bundle(native))
    except MuhError as err:  # the probe cannot be built for this hardware: the image goes without it
        ctx.diagnostics.append(Diagnostic(
            "W-DEPLOY-PROBE", "the image carries no probe: " + "; ".join(d.message for d in err.diagnostics[:2]),
            None, severity=Severity.warning))
        return False, []


def image_steps(ctx: BuildContext, plan: VllmPlan) -> list[GeneratedFile]:
    """The vLLM family's image fragment: image/steps.sh, the Dockerfile and the run file."""
    probe, probe_files = probe_bundle(ctx)
    moe_files = [f"vllm/moe_configs/{plan.moe.file_name}"] if plan.moe else []
    required_files = sorted({s.argv[0] for s in plan.pre if s.required and s.argv[0].startswith("/")})
    steps = render(
        PKG, "steps.sh.j2", header=ctx.header_text(), variant=plan.variant, root=IMAGE_ROOT, dist_info=dist_info(),
        site_candidates=plan.site_packages, edits=[e.id for e in plan.edits], moe_files=moe_files, ops=_ops(ctx, plan),
        cond_flags=plan.cond_flags, triton=plan.triton, probe=probe, required_files=required_files,
        confirm=[(p.id, *p.confirm) for p in plan.points if p.confirm is not None],
        probe_build_dir=runfile.PROBE_BUILD_DIR, probe_opt_in=runfile.PROBE_OPT_IN,
        api_hook=({"flag": plan.api_hook_flag, "group": next((g.id for g in plan.cond_flags if g.id == "middleware"), None)}
                  if plan.api_features or plan.max_tokens_cap else None),
    )
    command = runfile.command(plan, probe)
    docker = render(PKG, "Dockerfile.j2", header=ctx.header_text(), variant=plan.variant, hardware=plan.hardware,
                    base_image=plan.base_image, folder=plan.folder, root=IMAGE_ROOT,
                    cmd=exec_form(command))
    run = render(PKG, "computility-run.yaml.j2", header=ctx.header_text(), concurrency=plan.concurrency,
                 command=command, env=plan.env)
    return [GeneratedFile("Dockerfile", docker), GeneratedFile("computility-run.yaml", run),
            GeneratedFile("image/steps.sh", steps, executable=True), *probe_files]


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
