"""Derive, for the ``deploy`` block: the engine plug-in it names resolves it into the build's plan.

A spec describes one deployment; the engine (``muh.engines``) and its variant are looked up here, so
an unknown one is a diagnostic of derive, and every later stage (codegen, check, explain, probe)
reads the plan from ``Derived.deploy``.
"""

from __future__ import annotations

from muh import engines, platforms
from muh.derive.kernels import probe_problems
from muh.diagnostics import Diagnostic, Severity, did_you_mean
from muh.engines.base import Plan
from muh.schema.models import Deploy, Spec


def derive_deploy(spec: Spec) -> tuple[Plan | None, list[Diagnostic]]:
    """The plan of the spec's deploy block (None: no block, or one that does not resolve) and the
    diagnostics found on the way, errors and warnings (the build reports them; nothing raises)."""
    diags: list[Diagnostic] = []
    deploys = list(spec.deploys.values())
    for extra in deploys[1:]:
        diags.append(
            Diagnostic(
                "E-DEPLOY-MANY",
                f"a spec describes one deployment; `deploy {extra.name}` is a second one",
                spec.span_of(("deploys", extra.name)),
                hint="put each deployment in its own spec file",
            )
        )
    plan = None
    for d in deploys[:1]:
        plan, found = resolve_deploy(spec, d)
        diags.extend(found)
        if platforms.get(d.platform) is None:
            diags.append(
                Diagnostic(
                    "E-DEPLOY-PLATFORM",
                    f"muh has no platform `{d.platform}`",
                    spec.span_of(("deploys", d.name, "platform")),
                    hint=(did_you_mean(d.platform, platforms.names()) or "")
                    + f" platforms: {', '.join(platforms.names())}",
                )
            )
            plan = None
        elif plan is not None:
            plan = plan.model_copy(update={"platform": d.platform})
    return plan, diags


def complete_deploy(spec: Spec, derived):
    """What waits for the kernels: whether the image carries muh's probe (``Launch.probe``; W-DEPLOY-PROBE when it
    cannot), then what the plan's engine decides (``EnginePlugin.complete``); their diagnostics join the block's."""
    plan = derived.deploy
    if plan is None:
        return derived
    diags: list[Diagnostic] = []
    if plan.launch is not None:
        problems = probe_problems(spec, derived)
        if problems:
            diags.append(
                Diagnostic(
                    "W-DEPLOY-PROBE",
                    "the image carries no probe: " + "; ".join(problems[:2]),
                    None,
                    severity=Severity.warning,
                )
            )
        plan = plan.model_copy(update={"launch": plan.launch.model_copy(update={"probe": not problems})})
    plugin = engines.get(plan.engine)
    if plugin is not None and plugin.complete is not None:
        plan, more = plugin.complete(spec, derived, plan)
        diags += more
    return derived.model_copy(update={"deploy": plan, "deploy_diagnostics": [*derived.deploy_diagnostics, *diags]})


def resolve_deploy(spec: Spec, deploy: Deploy) -> tuple[Plan | None, list[Diagnostic]]:
    """The engine plug-in named by ``deploy.engine`` resolves the block (unknown engine/variant: a diagnostic)."""
    e = deploy.engine
    span = spec.span_of(("deploys", deploy.name, "engine"))
    plugin = engines.get(e.name)
    if plugin is None:
        return None, [
            Diagnostic(
                "E-DEPLOY-ENGINE",
                f"muh has no engine plug-in `{e.name}`",
                span,
                hint=(did_you_mean(e.name, engines.names()) or "") + f" engines: {', '.join(engines.names())}",
            )
        ]
    variant = plugin.variant(e.version)
    if variant is None:
        known = sorted(plugin.variants())
        return None, [
            Diagnostic(
                "E-DEPLOY-ENGINE",
                f"muh knows no variant `{e.version}` of engine `{e.name}`",
                span,
                hint=(did_you_mean(e.version, known) or "") + f" known: {', '.join(known)}; a variant is "
                f"a {e.name}-<version>.json in muh/engines/{plugin.folder.parent.name}/variants/",
            )
        ]
    return plugin.resolve(spec, deploy, variant)
