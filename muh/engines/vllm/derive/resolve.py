"""Resolve a ``deploy`` block into a ``VllmPlan``: flags checked, knobs derived, cross-checks run.

All decisions of the vLLM, Dockerfile and run-file emitters happen here; the templates only print.
Diagnostics point at the spec (``spec.span_of``); nothing raises for bad input. Each part of the block
has its module: ``serve`` (settings, cross-checks), ``tune`` (knobs, edits, rebinds), ``moe``, ``run``
(env, pre-steps, chat template, API features), ``conditional`` (what the variant leaves unknown, the
flags muh adds), ``evidence`` (the variant's record of runs), ``points``; ``context`` holds what they share.
"""
from __future__ import annotations

from muh.derive.model import Resolved
from muh.diagnostics import Diagnostic
from muh.engines.variant import Variant
from muh.engines.vllm.derive.engine import load_engine
from muh.engines.vllm.derive.flags import NO_PROVIDER, flag_of, to_argv, truthy
from muh.engines.vllm.derive.plan import VllmPlan
from muh.schema.models import Deploy, Spec
from muh.engines.vllm.derive.conditional import (_cond_keys, _conditional, _derived_flags, _parser_provider,
                                                 _with_provider, _with_variant, parser_path)
from muh.engines.vllm.derive.context import _Ctx, _IMAGE_RE, _int, _plain, _text_problem, stable_where
from muh.engines.vllm.derive.evidence import _evidence
from muh.engines.vllm.derive.moe import _moe
from muh.engines.vllm.derive.points import _points
from muh.engines.vllm.derive.run import API_BEHAVIOUR, _chat_template, _env, _pre_steps
from muh.engines.vllm.derive.serve import NON_NVIDIA_NO_CUSTOM_AR, _cross_checks, _serve_settings
from muh.engines.vllm.derive.tune import _EDIT_POINT, _edits, _knobs, _provides, _rebind_live, _rebinds


def resolve(spec: Spec, deploy: Deploy, variant: Variant) -> tuple[VllmPlan | None, list[Diagnostic]]:
    engine = load_engine(variant.base)
    c = _Ctx(spec, deploy, engine)
    hw = spec.hardware[deploy.on]
    if not _IMAGE_RE.match(deploy.base_image) or len(deploy.base_image) > 255:
        c.error("E-DEPLOY-IMAGE", f"`{deploy.base_image[:80]}` is not a container image reference", c.span("base_image"),
                hint="write `registry/name:tag` (lower-case path, no spaces or quotes)")
    elif variant.base_image and deploy.base_image != variant.base_image:
        if variant.base_image.endswith("/" + deploy.base_image):
            c.error("E-DEPLOY-IMAGE", f"`{deploy.base_image}` lacks the registry of {variant.label}'s image: the build would "
                    "pull it from the default registry", c.span("base_image"), hint=f'write "{variant.base_image}"')
        else:
            c.warn("W-DEPLOY-IMAGE", f"{variant.label} is known in `{variant.base_image}`, not in this image",
                   c.span("base_image"), hint="the variant's facts may not hold for another image")
    serve, ext = _serve_settings(c)
    cond_keys = _cond_keys(variant, ext, serve)
    argv, flag_diags = to_argv(serve, engine, _with_variant(ext, variant, engine))
    c.diags += flag_diags
    refused = {d.span for d in flag_diags if d.is_error}  # a refused value (e.g. tensor_parallel_size = 0) is not used
    given = {s.key: s for s in serve if s.span not in refused and s.key_span not in refused}
    _cross_checks(c, hw, given)
    if hw.vendor != "nvidia" and _int(given.get("tensor_parallel_size"), 1) > 1 and "disable_custom_all_reduce" not in given:
        argv.append("--disable-custom-all-reduce")
        c.tuned["serve.disable_custom_all_reduce"] = Resolved(
            value=True, origin="derived", rule=NON_NVIDIA_NO_CUSTOM_AR,
            inputs={"vendor": hw.vendor, "tensor_parallel_size": _int(given.get("tensor_parallel_size"), 1)})
    for s in serve:
        c.tuned[f"serve.{s.key}"] = Resolved(value=_plain(s.value) if not isinstance(s.value, tuple) else " ".join(map(str, s.value)),
                                             origin="spec", rule="spec", where=stable_where(s.span))
    env = _env(c, variant)
    knobs = _knobs(c)
    triton = deploy.triton if deploy.triton is not None else variant.triton
    points = _points(c, hw, variant, knobs, given, triton)
    live = {p.id for p in points if p.status in ("reached", "inactive")}
    edits = [e for e in _edits(c, hw, engine, knobs, given) if _EDIT_POINT[e.id] in live]
    checked = _moe(c, hw, given)  # the block is checked (its diagnostics) even when the point is dead
    moe = checked if "moe.tiles" in live else None
    if checked is not None and moe is None:
        c.tuned = {k: r for k, r in c.tuned.items() if not k.startswith("moe.")}  # nothing of it ships
    rebinds = [r for r in _rebinds(c, knobs, moe) if _rebind_live(r, live)]
    provides = _provides(variant, knobs, live)
    needs_triton = bool(moe) or any(truthy(given.get(k)) for k in ("enable_prefix_caching", "enable_chunked_prefill")) \
        or _int(given.get("max_model_len"), 0) > 32768
    if needs_triton and triton is False:
        c.error("E-DEPLOY-TRITON", "prefix caching, chunked prefill (on by itself above max_model_len 32768) and MoE layers "
                "call Triton kernels, but this deploy says the image has no Triton", c.span("triton"),
                hint="use an image with Triton, or turn those features off")
    for f, why in variant.expected_flags.items():
        if f not in argv:
            c.warn("W-DEPLOY-FLAG", f"`{f}` is missing: {why}", c.span("serve"),
                   hint=f"add `{f.lstrip('-').replace('-', '_')} = true` to serve (or keep it out knowingly)")
    providers = _parser_provider(argv, cond_keys, serve, variant, ext, engine)
    for key, g in sorted(cond_keys.items()):
        flag = flag_of(key)
        if key == g.id and flag in NO_PROVIDER:
            c.warn("W-DEPLOY-PARSER", f"`{flag}` may be absent in {variant.label} and muh cannot provide it: "
                   f"{NO_PROVIDER[flag]}; it is passed only when the image build finds it, else dropped with a log line",
                   given[key].key_span or given[key].span,
                   hint="keep it (the fork may have it) or remove it; `muh explain SPEC deploy.run` says what happens")
    argv, cond = _conditional(argv, cond_keys, serve)
    cond = [_with_provider(g, argv) if g.id.startswith("tool_call_parser_") and providers else g for g in cond]
    api_hook_flag = _derived_flags(c, argv, cond, variant, engine)
    for name in providers:
        info = variant.tool_call_parsers.get(name)
        c.tuned[f"run.parser_provider.{name}"] = Resolved(
            value=parser_path(name), origin="derived",
            rule=f"{variant.label} {'may lack' if info is not None and info.present == 'unknown' else 'lacks'} `{name}`: "
                 "muh ships its own, registered through vLLM 0.6.3's --tool-parser-plugin only when the engine has "
                 "none of that name",
            inputs={"extension_point": "ToolParserManager.register_module"})
    for g in cond:
        flag = flag_of(g.id)
        absent = (f"; when absent: dropped at start with a log line; muh cannot provide it ({NO_PROVIDER[flag]})"
                  if flag in NO_PROVIDER else "")
        c.tuned[f"run.conditional.{g.id}"] = Resolved(
            value=" ".join(g.argv), origin="derived",
            rule="passed only when the image build finds it in the engine: " + g.why + absent,
            inputs={"checks": " | ".join(g.checks)})
    short = {f: o.long for o in engine.options for f in o.flags if not f.startswith("--")}
    for f, long in short.items():
        if long in argv:
            c.tuned[f"run.spelling.{long.lstrip('-')}"] = Resolved(
                value=long, origin="derived", rule=f"muh writes exact long option names (`{f}` is the same option)",
                inputs={"short": f})
    paths = variant.models.get(deploy.model_shape.architecture) if deploy.model_shape else None
    _evidence(c, variant, paths, given, dict(env))
    pre = _pre_steps(c)
    chat_template = _chat_template(c, given, engine)
    for f in sorted(set(deploy.api.accept)):
        c.tuned[f"api.{f}"] = Resolved(value=API_BEHAVIOUR[f], origin="spec", rule="plugin hook on the API server's app",
                                       where=c.where("api", "accept"))
    command = ("python3", "-m", engine.entrypoint, *argv)
    for i, a in enumerate(command):  # a safety net: every source of argv text was checked above
        problem = None if any(d.is_error for d in c.diags) else _text_problem(a)
        if problem:
            c.error("E-DEPLOY-VALUE", f"argument {i} of the command {problem}", c.span("serve"))
    if any(d.is_error for d in c.diags):
        return None, c.diags
    plan = VllmPlan(
        deploy=deploy.name, hardware=hw.name, engine=variant.engine, engine_version=variant.version, base_version=engine.version,
        version_guard=engine.version.split(".post")[0].split("+")[0], base_image=deploy.base_image,
        concurrency=deploy.concurrency, command=command, folder=deploy.folder, env=tuple(env), tuned=dict(sorted(c.tuned.items())),
        edits=tuple(edits), moe=moe, rebinds=tuple(rebinds), needs_triton=needs_triton,
        kernels=bool(knobs.get("ops")), py_compile=tuple(sorted({e.file for e in edits})),
        variant=variant.label, points=tuple(points), cond_flags=tuple(cond), run_form=deploy.run.form, pre=tuple(pre),
        provides=tuple(provides), triton=str(triton).lower(), site_packages=tuple(variant.site_packages),
        registry_subprocess=variant.model_registry_subprocess,
        op_signatures={k: tuple(v) for k, v in variant.op_signatures.items()},
        api_features=tuple(sorted(set(deploy.api.accept))), parser_providers=tuple(providers),
        moe_file=checked.file_name if checked is not None else None,
        max_n=_int(given.get("max_num_seqs"), engine.default("max_num_seqs")) if "n_within_max_num_seqs" in deploy.api.accept else 0,
        chat_template=chat_template, model=deploy.model, max_tokens_cap=deploy.api.max_tokens_cap,
        api_hook_flag=api_hook_flag,
    )
    return plan, c.diags
