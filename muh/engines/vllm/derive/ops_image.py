"""Whether the image ships muh's ops (``VllmPlan.ops_image``), decided once the kernels are derived
(``EnginePlugin.complete``): the plugin imports the ops package's provider module, so the image ships the package
(built from the deploy hardware's kernels) exactly when a rebind names it. A provider the image cannot have is a
warning (``W-DEPLOY-OPS``): the plugin would log it and keep vLLM's op."""

from __future__ import annotations

from muh.derive.kernels import targets
from muh.diagnostics import Diagnostic, Severity
from muh.engines.vllm.derive.plan import OpsImage, VllmPlan
from muh.runtime.package import OPS_PACKAGE, PROVIDER_MODULE
from muh.runtime.toolchain import Toolchain


def ops_image(spec, derived, plan: VllmPlan) -> tuple[OpsImage | None, list[Diagnostic]]:
    diags: list[Diagnostic] = []
    ops = [r for r in plan.rebinds if not r.generated]
    span = spec.span_of(("deploys", plan.deploy, "tune", "ops"))
    for r in ops:
        module = r.provider.partition(":")[0]
        if module.split(".")[0] == "muh":
            diags.append(
                Diagnostic(
                    "W-DEPLOY-OPS",
                    f"`{r.name}` is served by `{module}`, muh's development runtime, which the image "
                    f"does not have: the plugin will keep vLLM's op",
                    span,
                    severity=Severity.warning,
                    hint=f"drop `ops_module` (the default `{PROVIDER_MODULE}` ships with the image)",
                )
            )
    if not any(r.provider.partition(":")[0] == PROVIDER_MODULE for r in ops):
        return None, diags
    found, _ = targets(spec, derived)  # the kernels' own diagnostics are the kernels emitter's to report
    prefix = next((t.prefix for t in found if t.hardware.name == plan.hardware), None)
    if prefix is None:
        diags.append(
            Diagnostic(
                "W-DEPLOY-OPS",
                f"ops are listed for `{plan.hardware}`, but no kernels are generated for it: the image "
                "serves vLLM's own ops",
                span,
                severity=Severity.warning,
                hint=f"add `reduce` / `transform` algorithms on {plan.hardware} (the ops are built on their policies)",
            )
        )
        return None, diags
    tc = Toolchain.of(spec.hardware[plan.hardware])
    return OpsImage(
        package=f"{prefix}{OPS_PACKAGE}",
        src=f"/{prefix}".rstrip("/"),
        compiler=tc.compiler,
        flags=tuple(tc.shared_library().flags),
    ), diags


def complete(spec, derived, plan):
    """``EnginePlugin.complete``: the plan with its ops image, and the warnings of that decision."""
    if not isinstance(plan, VllmPlan):
        return plan, []
    image, diags = ops_image(spec, derived, plan)
    return plan.model_copy(update={"ops_image": image}), diags
