"""Resolve a ``deploy`` block into a ``VllmPlan``: flags checked, knobs derived, cross-checks run.

All decisions of the vLLM, Dockerfile and run-file emitters happen here; the templates only print.
Diagnostics point at the spec (``spec.span_of``); nothing raises for bad input. Each part of the block
has its module: ``serve`` (settings, cross-checks), ``knobs`` (the ``tune`` block: knobs, edits, rebinds),
``moe``, ``run`` (env, pre-steps, chat template, API features), ``conditional`` (what the variant leaves
unknown, the flags muh adds), ``evidence`` (the variant's record of runs), ``points``; ``context`` holds
what they share.
"""

from __future__ import annotations

from dataclasses import dataclass

from muh.derive.model import Resolved
from muh.diagnostics import Diagnostic
from muh.engines.variant import Variant
from muh.engines.vllm.derive.conditional import (
    conditional_keys,
    derived_flags,
    parser_path,
    providers_for,
    split_conditional,
    with_provider,
    with_variant,
)
from muh.engines.vllm.derive.context import IMAGE_RE, Context, plain_value, stable_where, value_problem
from muh.engines.vllm.derive.effective import Effective, effective
from muh.engines.vllm.derive.engine import EngineInfo, load_engine
from muh.engines.vllm.derive.evidence import check_evidence
from muh.engines.vllm.derive.flags import NO_PROVIDER, Extensions, Setting, flag_of, to_argv
from muh.engines.vllm.derive.knobs import EDIT_POINT, rebind_live, tune_edits, tune_knobs, tune_provides, tune_rebinds
from muh.engines.vllm.derive.launch import launch
from muh.engines.vllm.derive.moe import moe_plan, moe_tuned
from muh.engines.vllm.derive.plan import CondFlag, Edit, MoePlan, Point, PreStep, Provide, Rebind, SelfTest, VllmPlan
from muh.engines.vllm.derive.points import points_tuned, tuning_points
from muh.engines.vllm.derive.run import API_BEHAVIOUR, pre_steps, run_chat_template, run_env
from muh.engines.vllm.derive.selftest import plan_selftest, selftest_step
from muh.engines.vllm.derive.serve import NON_NVIDIA_NO_CUSTOM_AR, cross_checks, serve_settings, start_up_checks
from muh.engines.vllm.derive.tuning import DEFAULT_OPS_MODULE
from muh.schema.models import Deploy, Hardware, Spec


@dataclass
class Flags:
    """The serve block as the engine's CLI: its settings, the ones used (not refused), the argv."""

    serve: list[Setting]
    ext: Extensions
    cond_keys: dict[str, CondFlag]
    """serve key → its condition group (what the variant leaves ``unknown``)."""
    given: dict[str, Setting]
    argv: list[str]
    effective: Effective
    """The values the server runs with, read once (the plan keeps them)."""
    tuned: dict[str, Resolved]
    """Each serve setting as the spec's, and the flag muh adds (``serve.*``)."""


@dataclass
class Tuning:
    """The tuning points and what ships for the live ones."""

    knobs: dict[str, object]
    triton: object
    points: list[Point]
    edits: list[Edit]
    moe: MoePlan | None
    """The MoE tiles, when their point is live."""
    moe_file: str | None
    """The MoE file the moe block names, shipped or not."""
    rebinds: list[Rebind]
    provides: list[Provide]
    needs_triton: bool
    tuned: dict[str, Resolved]
    """The edits' values (``vllm.*``), the rebinds (``plugin.*``), the points' statuses and, when it ships, the MoE
    plan's values (``muh explain``)."""


@dataclass
class Conditional:
    """The argv split into what always runs and what the image build must find first."""

    argv: list[str]
    cond: list[CondFlag]
    providers: list[str]
    """Tool-call parsers muh ships because the engine may lack them."""
    api_hook_flag: bool
    tuned: dict[str, Resolved]
    """What muh ships and what the image build decides (``run.*``)."""


def resolve(spec: Spec, deploy: Deploy, variant: Variant) -> tuple[VllmPlan | None, list[Diagnostic]]:
    """The block's plan (None where an error was found) and every diagnostic, in the order of the steps."""
    engine = load_engine(variant.base)
    c = Context(spec, deploy, engine)
    hw = spec.hardware[deploy.on]
    check_image(c, variant)
    flags = resolve_flags(c, hw, variant)
    env, env_tuned = run_env(c, variant)
    tuning = resolve_tuning(c, hw, variant, flags.given, flags.effective)
    warn_expected_flags(c, variant, flags.argv)
    cond = resolve_conditional(c, variant, flags)
    spellings = record_spellings(engine, cond.argv)
    paths = variant.models.get(deploy.model_shape.architecture) if deploy.model_shape else None
    evidence = check_evidence(c, variant, paths, flags.given, dict(env), flags.tuned)
    pre = pre_steps(c)
    tuning.rebinds, tuning.provides, selftest, selftest_tuned = plan_selftest(
        c,
        variant,
        tuning.rebinds,
        tuning.provides,
        flags.given,
        flags.effective,
        str(tuning.knobs.get("ops_module", DEFAULT_OPS_MODULE)),
    )
    if selftest is not None and c.d.run.form == "bash":
        pre.append(selftest_step(selftest))
    chat_template, chat_tuned = run_chat_template(c, flags.given, engine)
    api = record_api(c, evidence)
    command = command_of(c, engine, cond.argv)
    if any(d.is_error for d in c.diags):
        return None, c.diags
    tuned = merge_tuned(
        flags.tuned, env_tuned, tuning.tuned, cond.tuned, spellings, evidence, selftest_tuned, chat_tuned, api
    )
    return make_plan(
        c,
        hw,
        variant,
        flags,
        tuning,
        cond,
        tuned=tuned,
        env=env,
        pre=pre,
        chat_template=chat_template,
        command=command,
        selftest=selftest,
    ), c.diags


def check_image(c: Context, variant: Variant) -> None:
    """``base_image`` is an image reference, and the variant's image where the variant names one."""
    image = c.d.base_image
    if not IMAGE_RE.match(image) or len(image) > 255:
        c.error(
            "E-DEPLOY-IMAGE",
            f"`{image[:80]}` is not a container image reference",
            c.span("base_image"),
            hint="write `registry/name:tag` (lower-case path, no spaces or quotes)",
        )
    elif variant.base_image and image != variant.base_image:
        if variant.base_image.endswith("/" + image):
            c.error(
                "E-DEPLOY-IMAGE",
                f"`{image}` lacks the registry of {variant.label}'s image: the build would "
                "pull it from the default registry",
                c.span("base_image"),
                hint=f'write "{variant.base_image}"',
            )
        else:
            c.warn(
                "W-DEPLOY-IMAGE",
                f"{variant.label} is known in `{variant.base_image}`, not in this image",
                c.span("base_image"),
                hint="the variant's facts may not hold for another image",
            )


def resolve_flags(c: Context, hw: Hardware, variant: Variant) -> Flags:
    """The serve block checked against the flag table and cross-checked; each setting recorded as the spec's."""
    serve, ext = serve_settings(c)
    cond_keys = conditional_keys(variant, ext, serve)
    argv, flag_diags = to_argv(serve, c.engine, with_variant(ext, variant, c.engine))
    c.diags += flag_diags
    refused = {d.span for d in flag_diags if d.is_error}  # a refused value (e.g. tensor_parallel_size = 0) is not used
    given = {s.key: s for s in serve if s.span not in refused and s.key_span not in refused}
    eff = effective(given, c.engine)
    cross_checks(c, hw, given, eff)
    start_up_checks(c, given, eff)
    tp = eff.tensor_parallel_size
    tuned: dict[str, Resolved] = {}
    if hw.vendor != "nvidia" and tp > 1 and "disable_custom_all_reduce" not in given:
        argv.append("--disable-custom-all-reduce")
        tuned["serve.disable_custom_all_reduce"] = Resolved(
            value=True,
            origin="derived",
            rule=NON_NVIDIA_NO_CUSTOM_AR,
            inputs={"vendor": hw.vendor, "tensor_parallel_size": tp},
        )
    for s in serve:
        tuned[f"serve.{s.key}"] = Resolved(
            value=plain_value(s.value) if not isinstance(s.value, tuple) else " ".join(map(str, s.value)),
            origin="spec",
            rule="spec",
            where=stable_where(s.span),
        )
    return Flags(serve=serve, ext=ext, cond_keys=cond_keys, given=given, argv=argv, effective=eff, tuned=tuned)


def resolve_tuning(c: Context, hw: Hardware, variant: Variant, given: dict[str, Setting], eff: Effective) -> Tuning:
    """The tune block's knobs, the points they reach, and the edits, MoE tiles, rebinds and providers of the live
    ones."""
    knobs = tune_knobs(c)
    triton = c.d.triton if c.d.triton is not None else variant.triton
    points = tuning_points(c, hw, variant, knobs, given, triton, eff)
    live = {p.id for p in points if p.status in ("reached", "inactive")}
    edits, edit_values = tune_edits(c, hw, c.engine, knobs, given)
    edits = [e for e in edits if EDIT_POINT[e.id] in live]
    checked = moe_plan(c, hw, given, eff)  # the block is checked (its diagnostics) even when the point is dead
    moe = checked if "moe.tiles" in live else None
    rebinds, rebound = tune_rebinds(c, knobs, moe)  # each recorded, live or not
    rebinds = [r for r in rebinds if rebind_live(r, live)]
    provides = tune_provides(variant, knobs, live)
    return Tuning(
        knobs=knobs,
        triton=triton,
        points=points,
        edits=edits,
        moe=moe,
        moe_file=checked.file_name if checked is not None else None,
        rebinds=rebinds,
        provides=provides,
        needs_triton=needs_triton(c, eff, moe, triton),
        tuned={
            **edit_values,
            **rebound,
            **points_tuned(points, variant),
            **(moe_tuned(moe, hw) if moe is not None else {}),
        },
    )


def needs_triton(c: Context, eff: Effective, moe: MoePlan | None, triton) -> bool:
    """Whether the served features call Triton kernels (an error where the deploy says the image has none)."""
    needs = bool(moe) or eff.prefix_prefill
    if needs and triton is False:
        c.error(
            "E-DEPLOY-TRITON",
            "prefix caching, chunked prefill (on by itself above max_model_len 32768) and MoE layers "
            "call Triton kernels, but this deploy says the image has no Triton",
            c.span("triton"),
            hint="use an image with Triton, or turn those features off",
        )
    return needs


def warn_expected_flags(c: Context, variant: Variant, argv: list[str]) -> None:
    """Each flag every known good run of the variant had, and this argv lacks."""
    for f, why in variant.expected_flags.items():
        if f not in argv:
            c.warn(
                "W-DEPLOY-FLAG",
                f"`{f}` is missing: {why}",
                c.span("serve"),
                hint=f"add `{f.lstrip('-').replace('-', '_')} = true` to serve (or keep it out knowingly)",
            )


def resolve_conditional(c: Context, variant: Variant, flags: Flags) -> Conditional:
    """What the variant may lack: passed only when the image build finds it, or provided by muh; each recorded."""
    providers = providers_for(flags.argv, flags.cond_keys, flags.serve, variant, flags.ext, c.engine)
    warn_unprovidable(c, variant, flags)
    argv, cond = split_conditional(flags.argv, flags.cond_keys, flags.serve)
    cond = [with_provider(g, argv) if g.id.startswith("tool_call_parser_") and providers else g for g in cond]
    api_hook_flag, added = derived_flags(c, argv, cond, variant, c.engine)
    return Conditional(
        argv=argv,
        cond=cond,
        providers=providers,
        api_hook_flag=api_hook_flag,
        tuned={**added, **record_conditional(variant, providers, cond)},
    )


def warn_unprovidable(c: Context, variant: Variant, flags: Flags) -> None:
    """A flag the variant may lack that muh cannot provide: dropped at start when absent."""
    for key, g in sorted(flags.cond_keys.items()):
        flag = flag_of(key)
        if key == g.id and flag in NO_PROVIDER:
            c.warn(
                "W-DEPLOY-PARSER",
                f"`{flag}` may be absent in {variant.label} and muh cannot provide it: "
                f"{NO_PROVIDER[flag]}; it is passed only when the image build finds it, else dropped with a log line",
                flags.given[key].key_span or flags.given[key].span,
                hint="keep it (the fork may have it) or remove it; `muh explain SPEC deploy.run` says what happens",
            )


def record_conditional(variant: Variant, providers: list[str], cond: list[CondFlag]) -> dict[str, Resolved]:
    """``run.parser_provider.*`` and ``run.conditional.*``: what muh ships and what the image build decides."""
    out: dict[str, Resolved] = {}
    for name in providers:
        info = variant.tool_call_parsers.get(name)
        out[f"run.parser_provider.{name}"] = Resolved(
            value=parser_path(name),
            origin="derived",
            rule=f"{variant.label} {'may lack' if info is not None and info.present == 'unknown' else 'lacks'} "
            f"`{name}`: "
            "muh ships its own, registered through vLLM 0.6.3's --tool-parser-plugin only when the engine has "
            "none of that name",
            inputs={"extension_point": "ToolParserManager.register_module"},
        )
    for g in cond:
        flag = flag_of(g.id)
        absent = (
            f"; when absent: dropped at start with a log line; muh cannot provide it ({NO_PROVIDER[flag]})"
            if flag in NO_PROVIDER
            else ""
        )
        out[f"run.conditional.{g.id}"] = Resolved(
            value=" ".join(g.argv),
            origin="derived",
            rule="passed only when the image build finds it in the engine: " + g.why + absent,
            inputs={"checks": " | ".join(g.checks)},
        )
    return out


def record_spellings(engine: EngineInfo, argv: list[str]) -> dict[str, Resolved]:
    """``run.spelling.*``: the long option muh writes where the spec's flag has a short spelling too."""
    short = {f: o.long for o in engine.options for f in o.flags if not f.startswith("--")}
    return {
        f"run.spelling.{long.lstrip('-')}": Resolved(
            value=long,
            origin="derived",
            rule=f"muh writes exact long option names (`{f}` is the same option)",
            inputs={"short": f},
        )
        for f, long in short.items()
        if long in argv
    }


def record_api(c: Context, evidence: dict[str, Resolved]) -> dict[str, Resolved]:
    """``api.*``: each accepted request feature, a hook of the plugin, with the variant's run record of it
    (``evidence``: check_evidence's entries, which these replace)."""
    out: dict[str, Resolved] = {}
    for f in sorted(set(c.d.api.accept)):
        ran = evidence.get(f"api.{f}")
        out[f"api.{f}"] = Resolved(
            value=API_BEHAVIOUR[f],
            origin="spec",
            rule="plugin hook on the API server's app" + (f"; {ran.rule}" if ran is not None else ""),
            where=c.where("api", "accept"),
        )
    return out


def merge_tuned(*steps: dict[str, Resolved]) -> dict[str, Resolved]:
    """The plan's ``tuned``, the one place the steps' entries meet: in the order of the steps, a later entry
    replacing an earlier one of its key (the run records' verdicts the serve block's and env's entries, the api
    hooks the run records' api entries); sorted by key."""
    out: dict[str, Resolved] = {}
    for entries in steps:
        out.update(entries)
    return dict(sorted(out.items()))


def command_of(c: Context, engine: EngineInfo, argv: list[str]) -> tuple[str, ...]:
    """The server's command; a safety net: every source of argv text was checked above."""
    command = ("python3", "-m", engine.entrypoint, *argv)
    for i, a in enumerate(command):
        problem = None if any(d.is_error for d in c.diags) else value_problem(a)
        if problem:
            c.error("E-DEPLOY-VALUE", f"argument {i} of the command {problem}", c.span("serve"))
    return command


def make_plan(
    c: Context,
    hw: Hardware,
    variant: Variant,
    flags: Flags,
    tuning: Tuning,
    cond: Conditional,
    *,
    tuned: dict[str, Resolved],
    env: list[tuple[str, str]],
    pre: list[PreStep],
    chat_template: str | None,
    command: tuple[str, ...],
    selftest: SelfTest | None = None,
) -> VllmPlan:
    deploy, engine, edits = c.d, c.engine, tuning.edits
    plan = VllmPlan(
        deploy=deploy.name,
        hardware=hw.name,
        engine=variant.engine,
        engine_version=variant.version,
        base_version=engine.version,
        version_guard=engine.version.split(".post")[0].split("+")[0],
        base_image=deploy.base_image,
        concurrency=deploy.concurrency,
        command=command,
        folder=deploy.folder,
        env=tuple(env),
        tuned=tuned,
        edits=tuple(edits),
        moe=tuning.moe,
        rebinds=tuple(tuning.rebinds),
        needs_triton=tuning.needs_triton,
        kernels=bool(tuning.knobs.get("ops")),
        py_compile=tuple(sorted({e.file for e in edits})),
        variant=variant.label,
        points=tuple(tuning.points),
        cond_flags=tuple(cond.cond),
        run_form=deploy.run.form,
        pre=tuple(pre),
        provides=tuple(tuning.provides),
        triton=str(tuning.triton).lower(),
        site_packages=tuple(variant.site_packages),
        registry_subprocess=variant.model_registry_subprocess,
        op_signatures={k: tuple(v) for k, v in variant.op_signatures.items()},
        api_features=tuple(sorted(set(deploy.api.accept))),
        parser_providers=tuple(cond.providers),
        moe_file=tuning.moe_file,
        max_n=flags.effective.max_num_seqs if "n_within_max_num_seqs" in deploy.api.accept else 0,
        effective=flags.effective,
        chat_template=chat_template,
        model=deploy.model,
        max_tokens_cap=deploy.api.max_tokens_cap,
        api_hook_flag=cond.api_hook_flag,
        selftest=selftest,
    )
    eff = flags.effective
    return plan.model_copy(update={"launch": launch(plan, eff.port, eff.tensor_parallel_size)})
