"""Resolve a ``deploy`` block into a ``VllmPlan``: flags checked, knobs derived, cross-checks run.

All decisions of the vLLM, Dockerfile and run-file emitters happen here; the templates only print.
Diagnostics point at the spec (``spec.span_of``); nothing raises for bad input.
"""
from __future__ import annotations

import re
from decimal import Decimal

from muh.engines.variant import Variant
from muh.engines.vllm.derive import tuning
from muh.engines.vllm.derive import rules
from muh.engines.vllm.derive.edits import sites_for
from muh.engines.vllm.derive.engine import EngineInfo, load_engine
from muh.engines.vllm.derive.flags import NO_PROVIDER, Extensions, Setting, flag_of, format_value, to_argv, truthy
from muh.engines.vllm.derive.plan import IMAGE_ROOT, CondFlag, Edit, MoePlan, MoeTile, Point, PreStep, Provide, Rebind, VllmPlan
from muh.derive.model import Resolved
from muh.diagnostics import Diagnostic, Severity, Span, did_you_mean
from muh.schema.models import Deploy, Hardware, Spec, text_problem

MAX_VALUE_LEN = 4096  # longer env/flag values are refused: almost surely a pasted file, and risky in YAML/shell
_IMAGE_RE = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
                       r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_IMPORT_PATH_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
NON_NVIDIA_NO_CUSTOM_AR = "custom all-reduce needs NVLink P2P (world sizes 2/4/6/8 on NVIDIA); off elsewhere"


class _Ctx:
    def __init__(self, spec: Spec, deploy: Deploy):
        self.spec, self.d = spec, deploy
        self.base = ("deploys", deploy.name)
        self.diags: list[Diagnostic] = []
        self.tuned: dict[str, Resolved] = {}

    def span(self, *path) -> Span | None:
        return self.spec.span_of(self.base + tuple(path))

    def key_span(self, *path) -> Span | None:
        return self.spec.span_of(self.base + tuple(path), key=True)

    def where(self, *path) -> str | None:
        return stable_where(self.span(*path))

    def error(self, code: str, msg: str, span: Span | None, hint: str | None = None, notes: tuple = ()) -> None:
        self.diags.append(Diagnostic(code, msg, span, hint, notes=notes))

    def warn(self, code: str, msg: str, span: Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, msg, span, hint, Severity.warning))

    def from_spec(self, value, *path) -> Resolved:
        return Resolved(value=_plain(value), origin="spec", rule="spec", where=self.where(*path))


def stable_where(span: Span | None) -> str | None:
    """``specs/x.muh:12:5`` however the spec was named on the command line (outputs must not depend on cwd)."""
    return span.stable() if span is not None else None


def _plain(v):
    if isinstance(v, Decimal):
        return int(v) if v.adjusted() < 30 and v == v.to_integral_value() else float(v)
    return v


def _text_problem(value: str) -> str | None:
    """Why a string from the spec must not reach YAML/shell/Dockerfile/Python, or None."""
    if len(value) > MAX_VALUE_LEN:
        return f"is {len(value)} characters long (limit {MAX_VALUE_LEN})"
    return text_problem(value)


def _flatten(tree: dict, prefix: tuple = ()) -> list[tuple[tuple, object]]:
    out = []
    for k, v in tree.items():
        if isinstance(v, dict):
            out += _flatten(v, prefix + (k,))
        else:
            out.append((prefix + (k,), v))
    return out


def resolve(spec: Spec, deploy: Deploy, variant: Variant) -> tuple[VllmPlan | None, list[Diagnostic]]:
    c = _Ctx(spec, deploy)
    hw = spec.hardware[deploy.on]
    engine = load_engine(variant.base)
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
        max_n=_int(given.get("max_num_seqs"), 256) if "n_within_max_num_seqs" in deploy.api.accept else 0,
        chat_template=chat_template, model=deploy.model, max_tokens_cap=deploy.api.max_tokens_cap,
        api_hook_flag=api_hook_flag,
    )
    return plan, c.diags


def _serve_settings(c: _Ctx) -> tuple[list[Setting], Extensions]:
    serve: list[Setting] = [Setting("model", c.d.model, c.span("model"), c.key_span("model"))]
    for key, value in c.d.serve.items():
        if key == "model":
            c.error("E-DEPLOY-KEY", "set the model path with `model = …` in the deploy block, not in serve", c.span("serve", key))
            continue
        v = tuple(value) if isinstance(value, list) else value
        for item in (v if isinstance(v, tuple) else (v,)):
            if isinstance(item, str):
                problem = _text_problem(item)
                if problem:
                    c.error("E-DEPLOY-VALUE", f"`{key}` {problem}", c.span("serve", key),
                            hint="values reach YAML and the engine's argv; keep them one short line")
        serve.append(Setting(key, v, c.span("serve", key), c.key_span("serve", key)))
    if _text_problem(c.d.model):
        c.error("E-DEPLOY-VALUE", f"`model` {_text_problem(c.d.model)}", c.span("model"))
    ext_flags: dict[str, Span | None] = {}
    ext_parsers: dict[str, Span | None] = {}
    ext = c.d.engine_extensions
    for f in ext.flags:
        span = c.span("engine_extensions", "flags")
        if not re.fullmatch(r"--[a-z0-9][a-z0-9-]*", f):
            c.error("E-DEPLOY-EXT", f"`{f}` is not a long option (`--name-with-dashes`)", span)
        ext_flags[f] = span
    for p in ext.tool_call_parsers:
        span = c.span("engine_extensions", "tool_call_parsers")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", p):
            c.error("E-DEPLOY-EXT", f"`{p}` is not a parser name", span)
        ext_parsers[p] = span
    return serve, Extensions(ext_flags, ext_parsers)


def _int(s: Setting | None, default: int) -> int:
    if s is None or isinstance(s.value, bool) or not isinstance(s.value, (int, Decimal)):
        return default
    return int(s.value)


def _cross_checks(c: _Ctx, hw: Hardware, given: dict[str, Setting]) -> None:
    tp = _int(given.get("tensor_parallel_size"), 1)
    pp = _int(given.get("pipeline_parallel_size"), 1)
    if tp * pp > hw.gpu_count:
        s = given.get("tensor_parallel_size") or given.get("pipeline_parallel_size")
        c.error("E-DEPLOY-TP", f"tensor × pipeline parallel size {tp * pp} exceeds the {hw.gpu_count} device(s) of `{hw.name}`",
                s.span if s else None, hint=f"set `gpu_count` in `hardware {hw.name}` or lower tensor_parallel_size")
    dtype = given.get("dtype")
    cc = hw.reported_capability or hw.compute_capability  # what vLLM's check sees at run time
    if dtype is not None and format_value(dtype.value) == "bfloat16" and (cc is None or cc < 80):
        c.error("E-DEPLOY-DTYPE", f"bfloat16 needs compute capability ≥ 8.0; `{hw.name}` "
                + (f"has {cc / 10:.1f}" if cc else "declares none"), dtype.span,
                hint="use `dtype = half` (vLLM refuses bfloat16 below 8.0)"
                + ("; a non-NVIDIA device that reports ≥ 8.0 says so with `reported_capability`" if hw.vendor != "nvidia" else ""))
    elif (dtype is None or format_value(dtype.value) == "auto") and (cc is None or cc < 80):
        c.warn("W-DEPLOY-DTYPE", f"dtype auto picks bfloat16 for bfloat16 checkpoints, which `{hw.name}` cannot run",
               dtype.span if dtype else c.span("serve"), hint="set `dtype = half`")


def _knobs(c: _Ctx) -> dict[str, object]:
    out: dict[str, object] = {}
    for path, value in _flatten(c.d.tune):
        key = ".".join(path)
        span = c.span("tune", *path)
        if key in tuning.REFUSED:
            c.error("E-VLLM-KNOB", f"`{key}` cannot be tuned: {tuning.REFUSED[key]}", c.key_span("tune", *path),
                    hint="remove it; muh tunes the safe points (see docs/deploy.md)")
            continue
        knob = tuning.KNOBS.get(key)
        if knob is None:
            c.error("E-VLLM-KNOB", f"unknown vLLM tuning point `{key}`", c.key_span("tune", *path),
                    hint=did_you_mean(key, list(tuning.KNOBS) + list(tuning.REFUSED)) or f"known: {', '.join(tuning.KNOBS)}")
            continue
        v = _plain(value)
        if v == "auto" and knob.kind == "int":
            continue
        if knob.kind == "int":
            if not isinstance(v, int) or isinstance(v, bool) or not (knob.lo <= v <= knob.hi) or (knob.pow2 and v & (v - 1)):
                c.error("E-VLLM-KNOB", f"`{key}` takes {'a power of two' if knob.pow2 else 'an integer'} in "
                        f"{knob.lo}..{knob.hi} or `auto`, not `{value}`", span)
                continue
        elif knob.kind == "bool" and not isinstance(v, bool):
            c.error("E-VLLM-KNOB", f"`{key}` takes true or false", span)
            continue
        elif knob.kind == "str" and not isinstance(v, str):
            c.error("E-VLLM-KNOB", f"`{key}` takes a string", span)
            continue
        elif knob.kind == "names":
            names = v if isinstance(v, list) else [v]
            bad = [n for n in names if n not in tuning.REBIND_TARGETS or n == "moe_default_config"]
            if bad:
                c.error("E-VLLM-OP", f"vLLM {c.d.engine.version} has no op `{bad[0]}` muh can serve", span,
                        hint=did_you_mean(str(bad[0]), tuning.REBIND_TARGETS) or f"ops: {', '.join(tuning.REBIND_TARGETS)}")
                continue
            v = list(names)
        out[key] = v
    return out


def _edits(c: _Ctx, hw: Hardware, engine: EngineInfo, knobs: dict, given: dict[str, Setting]) -> list[Edit]:
    sites = sites_for(engine.version) or ()
    path = lambda key: ("tune", *key.split("."))  # noqa: E731
    vals: dict[str, Resolved] = {}
    # decode v1/v2 rule
    vals["paged_attention.v1_threshold"] = (c.from_spec(knobs["paged_attention.v1_threshold"], *path("paged_attention.v1_threshold"))
                                            if "paged_attention.v1_threshold" in knobs else rules.v1_threshold(hw))
    limit = rules.v1_max_seq_len_limit(hw)
    if "paged_attention.v1_max_seq_len" in knobs:
        v = knobs["paged_attention.v1_max_seq_len"]
        if v > limit:
            c.error("E-VLLM-KNOB", f"paged_attention.v1_max_seq_len = {v} overflows shared memory on `{hw.name}` (limit {limit})",
                    c.span(*path("paged_attention.v1_max_seq_len")),
                    hint="v1 keeps one fp32 logit per token in shared memory: (smem_per_block − 1 KiB) / 4 B")
        vals["paged_attention.v1_max_seq_len"] = c.from_spec(v, *path("paged_attention.v1_max_seq_len"))
    else:
        vals["paged_attention.v1_max_seq_len"] = Resolved(
            value=min(rules.STOCK_V1_MAX_SEQ_LEN, limit), origin="derived", rule="min(stock 8192, (smem_per_block − 1 KiB) / 4 B)",
            inputs={"stock": rules.STOCK_V1_MAX_SEQ_LEN, "smem_per_block": int(hw.smem_per_block)})
    # prefix-prefill tile
    head_dim = knobs.get("prefix_prefill.head_dim", 128)
    vals["prefix_prefill.head_dim"] = (c.from_spec(head_dim, *path("prefix_prefill.head_dim")) if "prefix_prefill.head_dim" in knobs
                                       else Resolved(value=128, origin="default", rule="default head size (most current models)"))
    if "prefix_prefill.block" in knobs:
        b = knobs["prefix_prefill.block"]
        if 3 * b * head_dim * 2 >= rules.triton_smem(hw):
            c.error("E-VLLM-KNOB", f"prefix_prefill.block = {b} needs {3 * b * head_dim * 2} B of shared memory; `{hw.name}` has "
                    f"{rules.triton_smem(hw)}", c.span(*path("prefix_prefill.block")),
                    hint=f"use `auto` ({rules.prefill_block(hw, head_dim).value} here)")
        vals["prefix_prefill.block"] = c.from_spec(b, *path("prefix_prefill.block"))
    else:
        vals["prefix_prefill.block"] = rules.prefill_block(hw, head_dim)
    if "prefix_prefill.num_warps" in knobs:
        w = knobs["prefix_prefill.num_warps"]
        if w * hw.warp_size > hw.max_threads_per_block:
            c.error("E-VLLM-KNOB", f"prefix_prefill.num_warps = {w} × warp_size {hw.warp_size} exceeds max_threads_per_block",
                    c.span(*path("prefix_prefill.num_warps")))
        vals["prefix_prefill.num_warps"] = c.from_spec(w, *path("prefix_prefill.num_warps"))
    else:
        vals["prefix_prefill.num_warps"] = rules.prefill_num_warps(hw)
    for k, r in vals.items():
        c.tuned[f"vllm.{k}"] = r
    cc = hw.compute_capability or 0
    stock = {"paged-attn-v1-threshold": {"v1_threshold": rules.STOCK_V1_THRESHOLD, "v1_max_seq_len": rules.STOCK_V1_MAX_SEQ_LEN},
             "prefix-prefill-tile": {"block": 128 if cc >= 80 else 64, "num_warps": 8}}  # what the stock code computes here
    edits = []
    for site in sites:
        values = {k: vals[k] for k in site.knobs}
        names = {k.split(".")[-1]: r.value for k, r in values.items()}
        if all(stock.get(site.id, {}).get(n) == v for n, v in names.items()):
            continue  # the stock rule already says this: no patch
        prov = "; ".join(_ascii(f"{k.split('.')[-1]}={r.value} {r.origin}" + (f" by {r.rule}" if r.origin == "derived" else ""))
                         for k, r in values.items())
        new = site.new.format(hardware=hw.name, provenance=prov, **names)
        edits.append(Edit(id=site.id, file=site.file, anchor=site.old, new=new, line=site.line, values=values))
    return edits


_ASCII = {"×": "*", "·": "*", "−": "-", "≤": "<=", "≥": ">=", "→": "->"}


def _ascii(text: str) -> str:
    """Provenance for comments inside vLLM's sources: plain ASCII, one line."""
    return "".join(_ASCII.get(ch, ch if 32 <= ord(ch) < 127 else "?") for ch in text)


def _moe(c: _Ctx, hw: Hardware, given: dict[str, Setting]) -> MoePlan | None:
    moe = c.d.moe
    if moe is None:
        return None
    span = lambda *k: c.span("moe", *k)  # noqa: E731
    experts, inter = moe.experts, moe.intermediate_size
    tp = _int(given.get("tensor_parallel_size"), 1)
    if inter % tp:
        c.error("E-DEPLOY-MOE", f"moe.intermediate_size = {inter} is not divisible by tensor_parallel_size = {tp}", span("intermediate_size"))
        return None
    device = moe.device_name or hw.device_name
    bad = [ch for ch in "/," if isinstance(device, str) and ch in device]
    if device and isinstance(device, str) and (bad or _text_problem(device)):
        where = span("device_name") if moe.device_name else c.spec.span_of(("hardware", hw.name, "device_name"))
        why = f"it contains `{bad[0]}`" if bad else _text_problem(device)
        c.error("E-DEPLOY-MOE", f"device_name {device!r} cannot be part of vLLM's MoE config file name "
                f"(E=…,N=…,device_name=….json): {why}", where,
                hint="use the name the runtime reports; `/` and `,` cannot appear in that file name")
        return None
    if not device or not isinstance(device, str):
        c.error("E-DEPLOY-MOE", "the MoE config file needs the device name the runtime reports", span("device_name") or c.span("moe"),
                hint=f"set `device_name = \"…\"` in `hardware {hw.name}` or in the moe block")
        return None
    dtype = moe.dtype
    max_seqs = _int(given.get("max_num_seqs"), 256)
    max_model_len = _int(given.get("max_model_len"), 0)
    max_tokens_setting = given.get("max_num_batched_tokens")
    max_tokens = min(_int(max_tokens_setting, max_model_len or 8192), 32768)
    elem = 1 if dtype else 2
    batch_sizes = moe.batch_sizes
    if batch_sizes is not None:
        missing = [m for m in range(1, max_seqs + 1) if m not in batch_sizes]
        if missing:
            c.error("E-DEPLOY-MOE", f"moe.batch_sizes misses decode batch size {missing[0]} (max_num_seqs = {max_seqs})",
                    span("batch_sizes"), hint="list every batch size up to max_num_seqs, or omit batch_sizes to derive them")
            return None
        keys = sorted(set(batch_sizes))
    else:
        keys = rules.moe_batch_sizes(max_seqs, max_tokens)
    n = inter // tp
    tiles = {m: MoeTile(**rules.moe_tile(m, experts, hw, elem)) for m in keys}
    name = rules.moe_config_file_name(experts, n, device, dtype)
    plan = MoePlan(
        file_name=name,
        experts=c.from_spec(experts, "moe", "experts"),
        n=Resolved(value=n, origin="derived", rule="intermediate_size / tensor_parallel_size", inputs={"intermediate_size": inter, "tensor_parallel_size": tp}),
        device_name=Resolved(value=device, origin="spec", rule="spec", where=c.where("moe", "device_name") or
                             stable_where(c.spec.span_of(("hardware", hw.name, "device_name")))),
        tiles=tiles,
        rule=Resolved(value="moe_tile", origin="derived", rule=rules.MOE_TILE_RULE,
                      inputs={"experts": experts, "warp_size": hw.warp_size, "smem_bytes": rules.triton_smem(hw),
                              "elem_bytes": elem, "max_num_seqs": max_seqs, "max_batch_tokens": max_tokens}),
    )
    c.tuned["moe.file"] = Resolved(value=name, origin="derived", rule="E={E},N={N},device_name={name}[,dtype=…].json",
                                   inputs={"E": experts, "N": n, "device_name": device})
    smem = rules.triton_smem(hw)
    for m, t in tiles.items():
        shape = "vLLM's fallback shape for M ≤ E" if m <= experts else "vLLM's fallback shape for M > E"
        why = {"num_warps": ("Triton's default 128 threads / warp_size", {"warp_size": hw.warp_size}),
               "num_stages": ("min(3, smem / ((BM·BK + BK·BN) × elem_bytes))", {"smem_bytes": smem, "elem_bytes": elem})}
        for k, v in t.model_dump().items():
            rule, inputs = why.get(k, (shape, {"E": experts}))
            c.tuned[f"moe.tiles.{m:05d}.{k}"] = Resolved(value=v, origin="derived", rule=rule, inputs={"M": m, **inputs})
    return plan


def _rebinds(c: _Ctx, knobs: dict, moe: MoePlan | None) -> list[Rebind]:
    out: list[Rebind] = []
    if moe is not None and knobs.get("moe.default_config", True):
        mod, attr = tuning.REBIND_TARGETS["moe_default_config"]
        out.append(Rebind(name="moe_default_config", module=mod, attr=attr, provider="muh_vllm_plugin.moe:get_default_config", generated=True))
    ops_module = knobs.get("ops_module", tuning.DEFAULT_OPS_MODULE)
    if not _MODULE_RE.match(str(ops_module)):
        c.error("E-VLLM-KNOB", f"`{ops_module}` is not a module path", c.span("tune", "ops_module"))
        return out
    if "sampler.top_k_top_p" in knobs:
        provider = knobs["sampler.top_k_top_p"]
        if not _IMPORT_PATH_RE.match(provider):
            c.error("E-VLLM-KNOB", f"`{provider}` is not an import path `pkg.module:callable`", c.span("tune", "sampler", "top_k_top_p"))
        else:
            mod, attr = tuning.REBIND_TARGETS["top_k_top_p"]
            out.append(Rebind(name="top_k_top_p", module=mod, attr=attr, provider=provider))
    for op in knobs.get("ops", []):
        if any(r.name == op for r in out):
            c.error("E-VLLM-OP", f"`{op}` is rebound twice (by `ops` and by `sampler.top_k_top_p`)", c.span("tune", "ops"),
                    hint="keep one of them")
            continue
        mod, attr = tuning.REBIND_TARGETS[op]
        out.append(Rebind(name=op, module=mod, attr=attr, provider=f"{ops_module}:{op}"))
    for r in out:
        where = None if r.generated else c.where("tune", *(("sampler", "top_k_top_p") if r.name == "top_k_top_p" else ("ops",)))
        c.tuned[f"plugin.{r.name}"] = Resolved(value=r.provider, origin="spec" if not r.generated else "derived",
                                               rule=f"rebind {r.module}.{r.attr}", where=where)
    return sorted(out, key=lambda r: r.name)


# -- engine variant: conditional flags, typed env knobs, pre-steps, tuning points ----------------------

_PATH_OF = {"ops.silu_and_mul": "activation", "ops.topk_softmax": "moe_routing", "vendor.moe_topk_softmax": "moe_routing"}
_EDIT_POINT = {"paged-attn-v1-threshold": "paged_attention.v1_v2_rule", "prefix-prefill-tile": "prefix_prefill.tile"}
_REBIND_POINT = {"moe_default_config": "moe.tiles", "top_k_top_p": "sampler.top_k_top_p"}


def _with_variant(ext: Extensions, variant: Variant, engine: EngineInfo) -> Extensions:
    """The spec's declared extensions plus what the variant has (or may have: ``unknown``) beyond its base's table."""
    flags = dict(ext.flags)
    parsers = dict(ext.tool_call_parsers)
    for f, info in variant.flags.items():
        if info.present is not False and engine.option(f) is None:
            flags.setdefault(f, None)
    for p, info in variant.tool_call_parsers.items():
        if info.present is not False:
            parsers.setdefault(p, None)
    for p in PARSER_PROVIDERS:  # muh ships these (--tool-parser-plugin), registered only where the engine has none
        parsers.setdefault(p, None)
    return Extensions(flags, parsers)


def _cond_keys(variant: Variant, ext: Extensions, serve: list[Setting]) -> dict[str, CondFlag]:
    """serve key → the condition group it belongs to: flags/parsers the variant leaves ``unknown``."""
    out: dict[str, CondFlag] = {}
    keys = {s.key: s for s in serve}
    for f, info in variant.flags.items():
        key = f.lstrip("-").replace("-", "_")
        if info.present == "unknown" and f not in ext.flags and key in keys:
            out[key] = CondFlag(id=key, argv=(), checks=tuple(info.check),
                                why=f"{variant.label}: `{f}` unknown ({info.note}); without it the server would die "
                                    "at argument parsing")
    parser = keys.get("tool_call_parser")
    if parser is not None and not truthy(keys.get("tool_parser_plugin")):
        name = format_value(parser.value)
        info = variant.tool_call_parsers.get(name)
        if info is not None and info.present == "unknown" and name not in ext.tool_call_parsers:
            group = CondFlag(id=f"tool_call_parser_{name}", argv=(), checks=tuple(info.check),
                             why=f"{variant.label}: tool-call parser `{name}` unknown ({info.note}); vLLM 0.6.3 "
                                 "refuses to start with --enable-auto-tool-choice and an unregistered parser")
            out["tool_call_parser"] = group
            if "enable_auto_tool_choice" in keys:
                out["enable_auto_tool_choice"] = group
    return out


def _conditional(argv: list[str], cond_keys: dict[str, CondFlag], serve: list[Setting]) -> tuple[list[str], list[CondFlag]]:
    """Collect the argv pieces of each condition group (the command keeps them, in place)."""
    pieces: dict[str, list[str]] = {}
    at: dict[str, list[int]] = {}
    groups: dict[str, CondFlag] = {}
    for s in serve:
        g = cond_keys.get(s.key)
        if g is None:
            continue
        flag = flag_of(s.key)
        if flag not in argv:
            continue
        i = argv.index(flag)
        n = 1 if isinstance(s.value, bool) else 1 + (len(s.value) if isinstance(s.value, tuple) else 1)
        pieces.setdefault(g.id, []).extend(argv[i:i + n])
        at.setdefault(g.id, []).extend(range(COMMAND_HEAD + i, COMMAND_HEAD + i + n))
        groups[g.id] = g
    return argv, [g.model_copy(update={"argv": tuple(pieces[k]), "at": tuple(at[k])}) for k, g in sorted(groups.items())]


COMMAND_HEAD = 3  # python3 -m <entrypoint>
PARSER_PROVIDERS = ("qwen3_coder",)  # tool-call parsers muh can ship (templates/parser_<name>.py.j2)
# What the provider needs from the engine (file under site-packages, literal): vLLM 0.6.3's extension point.
PROVIDER_NEEDS = (("vllm/entrypoints/openai/cli_args.py", '"--tool-parser-plugin"'),
                  ("vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py", "def register_module"),
                  ("vllm/entrypoints/openai/protocol.py", "class ExtractedToolCallInformation"),
                  ("vllm/entrypoints/openai/protocol.py", "class DeltaToolCall"))


def parser_path(name: str) -> str:
    return f"{IMAGE_ROOT}/vllm/parsers/muh_{name}.py"


def _parser_provider(argv: list[str], cond_keys: dict[str, CondFlag], serve: list[Setting], variant: Variant,
                     ext: Extensions, engine: EngineInfo) -> list[str]:
    """Insert ``--tool-parser-plugin <muh's file>`` before the tool flags when muh has a provider of the
    spec's tool-call parser and the engine may lack it: the variant leaves it unknown (the flags then
    form a conditional group), or lacks it (the flags are passed as they are; the provider registers
    the name). A spec that gives its own ``--tool-parser-plugin`` or declares the parser keeps that."""
    s = next((s for s in serve if s.key == "tool_call_parser"), None)
    name = format_value(s.value) if s is not None else None
    if name not in PARSER_PROVIDERS or "--tool-parser-plugin" in argv or name in ext.tool_call_parsers \
            or name in engine.tool_call_parsers or "--tool-call-parser" not in argv:
        return []
    info = variant.tool_call_parsers.get(name)
    if "tool_call_parser" not in cond_keys and info is not None and info.present is not False:
        return []  # the engine has it
    i = min(argv.index(f) for f in ("--enable-auto-tool-choice", "--tool-call-parser") if f in argv)
    argv[i:i] = ["--tool-parser-plugin", parser_path(name)]
    return [name]


MIDDLEWARE = "muh_vllm_plugin.compat.RequestCompat"  # the plugin's request hook (templates/plugin_compat.py.j2)


def _derived_flags(c: _Ctx, argv: list[str], cond: list[CondFlag], variant: Variant, engine: EngineInfo) -> bool:
    """Flags muh adds itself, at the end of argv: ``--enable-reasoning`` beside ``--reasoning-parser`` where the
    engine has it (vLLM releases with reasoning parsers refuse the parser without it), and ``--middleware``
    with muh's request hook where the API has ``api`` features. A flag the variant leaves ``unknown`` is a
    conditional group (the image build decides); returns whether ``--middleware`` is passed."""
    def add(gid: str, words: tuple[str, ...], info, why: str, requires: tuple[str, ...] = ()) -> None:
        at = tuple(range(COMMAND_HEAD + len(argv), COMMAND_HEAD + len(argv) + len(words)))
        argv.extend(words)
        if info is not None and info.present == "unknown" or requires:
            cond.append(CondFlag(id=gid, argv=words, at=at, checks=tuple(info.check) if info else (words[0],),
                                 why=why, requires=requires))
        else:
            c.tuned[f"run.{gid}"] = Resolved(value=" ".join(words), origin="derived", rule=why)

    reasoning = next((g for g in cond if g.id == "reasoning_parser"), None)
    info = variant.flags.get("--enable-reasoning")
    if (reasoning is not None or "--reasoning-parser" in argv) and info is not None and info.present is not False:
        add("enable_reasoning", ("--enable-reasoning",), info,
            f"{variant.label}: `--enable-reasoning` {info.present if info.present == 'unknown' else 'present'} ({info.note}); "
            "vLLM releases that have --reasoning-parser take it only with --enable-reasoning",
            requires=("reasoning_parser",) if reasoning is not None else ())
    if not (c.d.api.accept or c.d.api.max_tokens_cap) or not any("--middleware" in o.flags for o in engine.options):
        return False
    info = variant.flags.get("--middleware")
    if info is not None and info.present is False:
        return False
    add("middleware", ("--middleware", MIDDLEWARE), info,
        f"the request hook through the engine's own option (vLLM {engine.version}'s build_app adds each --middleware)"
        + (f"; {variant.label}: {info.note}" if info is not None and info.note else "")
        + "; the plugin's build_app wrap is the second hook, the image build fails when neither can be installed")
    return True


def _with_provider(g: CondFlag, argv: list[str]) -> CondFlag:
    i = argv.index("--tool-parser-plugin")
    return g.model_copy(update={"argv": (argv[i], argv[i + 1], *g.argv),
                                "at": (COMMAND_HEAD + i, COMMAND_HEAD + i + 1, *g.at), "provider": PROVIDER_NEEDS,
                                "why": g.why + "; or muh's own provider registers through --tool-parser-plugin"})

API_BEHAVIOUR = {  # what each accepted request feature does (the hook in templates/plugin_compat.py.j2)
    "max_completion_tokens": "accepted: becomes max_tokens when max_tokens is absent (stock 0.6.3 forbids the field: 400)",
    "reasoning_effort": "accepted and ignored (stock 0.6.3 forbids the field: 400)",
    "tool_calls_null_content": "assistant messages with tool_calls and content null get content \"\" (stock 0.6.3 drops "
                               "such a message from the prompt)",
    "n_within_max_num_seqs": "n or best_of above max_num_seqs: 400 with a message, before the engine sees it",
    "unknown_fields": "top-level request fields the engine's request model lacks are accepted and dropped, one log "
                      "line per name (stock 0.6.3 forbids them: 400; the team served extra=\"allow\")",
    "tools_without_thinking": "a request with tools (tool_choice not \"none\") is rendered with enable_thinking false "
                              "unless it says otherwise (thinking instead of a <tool_call> failed d03)",
    "n_greedy_fan_out": "n > 1 at temperature 0 (vLLM: 400, greedy sampling takes n = 1) is served as n one-choice "
                        "requests, one after the other, merged into one answer (streams: choice after choice)",
    "reasoning_split": "without --reasoning-parser on the server, <think>…</think> of a chat answer moves from content "
                       "to reasoning_content, in JSON answers and in streams (tags split across chunks included)",
    "thinking_off": "the model's chat template is served without the empty think block it writes when thinking is "
                    "off (the run file passes muh's fixed copy as --chat-template)",
}


def _as_run_text(v) -> str:
    return str(v).lower() if isinstance(v, bool) else format_value(_plain(v))


def _same_value(a: str, b: str) -> bool:
    try:
        return Decimal(a) == Decimal(b)
    except ArithmeticError:
        return a == b


def _evidence(c: _Ctx, variant: Variant, paths, given: dict[str, Setting], env: dict[str, str]) -> None:
    """Each deploy value the variant has run records for: on a reported run (cited), or not — then a warning
    unless the spec's ``untested { <key> = "reason" }`` keeps it knowingly. The verdict is the value's rule."""
    reasons = {".".join(k): v for k, v in _flatten(c.d.untested)}
    for key, why in reasons.items():
        if not isinstance(why, str) or not why.strip():
            c.error("E-DEPLOY-UNTESTED", f"untested `{key}` needs a reason (a string)", c.span("untested", *key.split(".")),
                    hint=f'write `{key} = "why this value is kept without a reported run"`')
    runs = paths.runs if paths is not None else {}
    for name, s in given.items():
        if f"serve.{name}" not in runs and name != "model":
            c.tuned[f"serve.{name}"] = c.tuned[f"serve.{name}"].model_copy(
                update={"rule": f"spec; no run record for this flag in {variant.label}'s facts"})
    for key, ev in sorted(runs.items()):
        kind, _, name = key.partition(".")
        if kind == "serve":
            s = given.get(name)
            text = _as_run_text(s.value) if s is not None else ev.default
            where, span = (stable_where(s.span), s.span) if s is not None else (None, c.span("serve"))
        elif kind == "env":
            s, text = None, env.get(name)
            where, span = c.where("env", name), c.span("env", name)
        else:
            continue
        if text is None:
            continue
        worked = next((why for v, why in ev.worked.items() if _same_value(v, text)), None)
        failed = next((why for v, why in ev.failed.items() if _same_value(v, text)), None)
        tried = ", ".join(sorted(ev.worked)) or "none"
        if worked is not None:
            verdict = f"reported run on {variant.label}: {worked}"
        elif failed is not None:
            verdict = f"NOT a reported run: failed on {variant.label}: {failed}"
        else:
            verdict = f"NOT a reported run on {variant.label} (reported to serve: {tried})" + (f"; {ev.note}" if ev.note else "")
        reason = reasons.get(key)
        if worked is None and isinstance(reason, str) and reason.strip():
            verdict += f"; kept knowingly: {reason}"
        elif worked is None:
            c.warn("W-DEPLOY-UNTESTED", f"`{key} = {text}` rests on no reported run of {variant.label}"
                   + (f": it failed ({failed})" if failed else f" (reported to serve: {tried})"), span,
                   hint=f"use a reported value ({tried}), or say why in `untested {{ {key} = \"…\" }}`")
        c.tuned[key] = Resolved(value=_plain(s.value) if kind == "serve" and s is not None else text,
                                origin="spec" if s is not None or kind == "env" else "default",
                                rule=("spec; " if s is not None or kind == "env" else "not set: the engine's default; ") + verdict,
                                where=where, inputs={"reported": tried})


CHAT_TEMPLATE_SCRIPT = "vllm/chat_template.py"  # under the image's muh folder (emitted by muh/engines/vllm/codegen)
CHAT_TEMPLATE_OUT = "run/chat_template.jinja"   # written at start under the image's muh folder, never into the model
REASONING_INFO_OUT = "run/reasoning.json"       # idem: {"think_in_prompt": bool}, read by the request hook


def _chat_template(c: _Ctx, given: dict[str, Setting], engine: EngineInfo) -> str | None:
    """The fixed template's path (``thinking_off``), ``-`` when only the reasoning info is written at start
    (``reasoning_split``), else None."""
    if "thinking_off" not in c.d.api.accept:
        return "-" if "reasoning_split" in c.d.api.accept else None
    if "chat_template" in given:
        c.error("E-DEPLOY-API", "`thinking_off` writes its own chat template; the spec also sets `chat_template`",
                given["chat_template"].span, hint="drop one of them")
        return None
    if not any("--chat-template" in o.flags for o in engine.options):
        c.error("E-DEPLOY-API", f"`thinking_off` needs `--chat-template`, which vLLM {engine.version} lacks",
                c.span("api", "accept"))
        return None
    path = f"{IMAGE_ROOT}/{CHAT_TEMPLATE_OUT}"
    c.tuned["run.chat_template"] = Resolved(
        value=path, origin="derived", where=c.where("api", "accept"),
        rule="thinking_off: at start muh's script writes the model's chat template without the empty think block "
             "(with thinking off the model then emits only \"!\", facts §2) and the run file passes --chat-template; "
             "nothing to fix or nothing readable: the model's own template, with a line; never writes into the model",
        inputs={"script": f"{IMAGE_ROOT}/{CHAT_TEMPLATE_SCRIPT}", "model": c.d.model})
    return path


def _pre_steps(c: _Ctx) -> list[PreStep]:
    out = []
    for i, step in enumerate(c.d.run.pre):
        span = c.span("run", "pre")
        words = list(step.command) + ([step.on_failure] if step.on_failure is not None else [])
        bad = next(((w, p) for w in words if (p := _text_problem(w))), None)
        if bad:
            c.error("E-DEPLOY-RUN", f"pre-step {i + 1}: `{bad[0][:40]}` {bad[1]}", span,
                    hint="a pre-step is one line of the run file's script")
            continue
        if step.required and step.on_failure is not None:
            c.error("E-DEPLOY-RUN", f"pre-step {i + 1} is both required and tolerated (`on_failure`)", span,
                    hint="drop `required = true` to tolerate its failure, or `on_failure` to stop on it")
            continue
        if not step.required and step.on_failure is None:
            c.error("E-DEPLOY-RUN", f"pre-step {i + 1} says neither `required = true` nor `on_failure = \"…\"`", span,
                    hint="say what a failure means: stop the container, or log a line and start the server anyway")
            continue
        if c.d.run.form != "bash":
            c.error("E-DEPLOY-RUN", "pre-steps need `form = bash` (the argv form runs only the server)", c.span("run", "form"))
            continue
        name = next((w for w in step.command if "/" in w), step.command[0]).rsplit("/", 1)[-1]
        out.append(PreStep(name=name, argv=tuple(step.command), on_failure=step.on_failure, required=step.required,
                           stderr_to_stdout=step.stderr_to_stdout, timeout_s=step.timeout_s))
    return out


def _env(c: _Ctx, variant: Variant) -> list[tuple[str, str]]:
    out = []
    for name, value in c.d.env.items():
        span = c.span("env", name)
        if not _ENV_NAME_RE.match(name):
            c.error("E-DEPLOY-ENV", f"`{name}` is not a valid environment variable name", span)
            continue
        text = format_value(_plain(value))
        problem = _text_problem(text)
        if problem:
            c.error("E-DEPLOY-ENV", f"the value of `{name}` {problem}", span,
                    hint="environment values are one line of text; put larger data in a file the image ships")
            continue
        if name == "VLLM_PLUGINS" and "muh" not in text.split(","):
            c.warn("W-DEPLOY-PLUGIN", "VLLM_PLUGINS does not list `muh`: the tuning plugin will not load", span)
        knob = variant.env.get(name)
        if knob is not None:
            v = _plain(value)
            if knob.type == "bool01" and text not in ("0", "1"):
                c.error("E-DEPLOY-ENV", f"`{name}` is a 0/1 switch of {variant.label}, not `{text}`", span,
                        hint=f"write `{name} = 1` or `0` ({knob.meaning})")
                continue
            if knob.type == "int" and (isinstance(v, bool) or not re.fullmatch(r"-?[0-9]+", text)):
                c.error("E-DEPLOY-ENV", f"`{name}` takes an integer, not `{text}`", span)
                continue
            if knob.type == "enum" and text not in knob.choices:
                c.warn("W-DEPLOY-ENV", f"`{name} = {text}`: no run file used this value (seen: {', '.join(knob.choices)})",
                       span, hint=knob.meaning)
        elif any(name.startswith(p) for p in variant.env_prefixes):
            known = sorted(variant.env)
            c.warn("W-DEPLOY-ENV", f"`{name}` is not a knob {variant.label} is known to read: the engine will ignore it",
                   c.key_span("env", name) or span,
                   hint=(did_you_mean(name, known) or "") + f" known: {', '.join(known)}")
        out.append((name, text))
        c.tuned[f"env.{name}"] = Resolved(value=text, origin="spec", rule="spec", where=stable_where(span))
    return out


def _points(c: _Ctx, hw: Hardware, variant: Variant, knobs: dict, given: dict[str, Setting], triton) -> list[Point]:
    """Each tuning point: reached, dead (with the reason and numbers) or off, for this model + variant + flags."""
    shape = c.d.model_shape
    paths = variant.models.get(shape.architecture) if shape else None
    if shape is not None and paths is None and variant.models:
        c.warn("W-DEPLOY-MODEL", f"{variant.label} has no record of the paths `{shape.architecture}` runs; every tuning "
               "point counts as reached", c.span("model_shape", "architecture"),
               hint=f"known: {', '.join(sorted(variant.models))}")
    tp = _int(given.get("tensor_parallel_size"), 1)
    seqs = _int(given.get("max_num_seqs"), 256)
    heads = shape.num_attention_heads // tp if shape and shape.num_attention_heads and shape.num_attention_heads >= tp else None
    ops = set(knobs.get("ops", []))
    out: list[Point] = []

    def add(pid: str, status: str, reason: str) -> None:
        d = tuning.POINTS[pid]
        live = status not in ("dead", "off")
        confirm = paths.confirm.get(pid) if paths is not None and live else None
        if confirm is not None:
            reason += f"; the image build reports whether {confirm[0].rsplit('/', 1)[-1]} names `{confirm[1]}`"
        out.append(Point(id=pid, reaches=d.reaches, status=status, reason=reason,
                         mechanism=d.mechanism if live else "none", confirm=confirm))

    def rewritten(file: str) -> str | None:
        what = variant.rewritten_files.get(file)
        return f"{variant.label} rewrote {file} ({what})" if what else None

    # decode v1/v2 rule
    why = []
    if variant.paged_attention_v2 is False:
        why.append(f"v2 not implemented in {variant.label}")
    if rewritten("vllm/attention/ops/paged_attn.py"):
        why.append(rewritten("vllm/attention/ops/paged_attn.py"))
    if paths and "paged_attn" not in paths.decode_attention:
        why.append(f"{shape.architecture} decodes through {paths.decode_attention}")
    if heads is not None:
        thr = rules.v1_threshold(hw).value
        if isinstance(knobs.get("paged_attention.v1_threshold"), int):
            thr = knobs["paged_attention.v1_threshold"]
        if seqs * heads <= min(thr, rules.STOCK_V1_THRESHOLD):
            why.append(f"max_num_seqs × heads per shard = {seqs} × {heads} = {seqs * heads} ≤ {min(thr, rules.STOCK_V1_THRESHOLD)}"
                       f": the tuned ({thr}) and stock ({rules.STOCK_V1_THRESHOLD}) rules pick the same kernel")
    add("paged_attention.v1_v2_rule", "dead" if why else "reached", "; ".join(why) or "decode through PagedAttention")
    # prefix-prefill tile
    why = []
    uses = any(truthy(given.get(k)) for k in ("enable_prefix_caching", "enable_chunked_prefill")) \
        or _int(given.get("max_model_len"), 0) > 32768
    if not uses:
        why.append("neither prefix caching nor chunked prefill is on")
    if triton is False:
        why.append("no Triton in the image")
    if paths and "prefix_prefill" not in paths.prefill_attention:
        why.append(f"{shape.architecture} prefills through {paths.prefill_attention}: prefix_prefill is bypassed")
    add("prefix_prefill.tile", "dead" if why else "reached",
        "; ".join(why) or "prefix-cached / chunked prefill through the Triton kernel"
        + ("; Triton unknown: the edit is an optional image step" if triton == "unknown" else ""))
    # MoE tiles
    why = []
    if c.d.moe is None:
        why.append("no moe block")
    if triton is False:
        why.append("no Triton in the image")
    if paths and "fused_moe" not in paths.moe:
        why.append(f"{shape.architecture}'s MoE runs through {paths.moe}: the Triton MoE JSON is never read")
    add("moe.tiles", "dead" if why else "reached", "; ".join(why) or "Triton fused_moe reads the config file")
    # ops
    from muh.runtime import llm

    def op_point(pid: str, op: str, dead: list[str]) -> None:
        if op not in ops:
            add(pid, "off", f"`{op}` not in tune.ops")
        elif dead:
            add(pid, "dead", "; ".join(dead))
        elif op not in llm.SERVED:
            add(pid, "inactive", f"muh has no `{op}` op yet: shipped behind its guard, the plugin logs the fallback "
                "until muh_kernels exports it")
        else:
            add(pid, "reached", (f"{shape.architecture}'s {_PATH_OF[pid]}: {getattr(paths, _PATH_OF[pid])}"
                                 if paths is not None and pid in _PATH_OF else tuning.POINTS[pid].reaches))

    gemma = paths is not None and paths.norm == "gemma"
    norm_dead = [f"{shape.architecture}'s norms are GemmaRMSNorm: rms_norm(x)·(1+w), never calling ops.rms_norm"] if gemma else []
    op_point("ops.rms_norm", "rms_norm", norm_dead)
    sig = variant.op_signatures.get("fused_add_rms_norm")
    dead = list(norm_dead)
    if sig and tuple(sig) not in llm.forms("fused_add_rms_norm"):
        dead.append(f"{variant.label}'s fused_add_rms_norm takes ({', '.join(sig)}), a form muh's op does not serve; "
                    "the signature guard keeps the vendor op")
    op_point("ops.fused_add_rms_norm", "fused_add_rms_norm", dead)
    op_point("ops.silu_and_mul", "silu_and_mul", [])
    op_point("ops.topk_softmax", "topk_softmax", [])
    vendor = variant.vendor_ops.get("topk_softmax")
    if vendor is None:
        add("vendor.moe_topk_softmax", "off", f"{variant.label} routes through stock vLLM's own topk_softmax")
    else:
        op_point("vendor.moe_topk_softmax", "topk_softmax",
                 [f"{variant.vendor_module}.{vendor.vendor} is present"] if vendor.present is True else [])
    if gemma and "gemma_rms_norm" in ops and "gemma_rms_norm" in llm.SERVED:
        add("ops.gemma_rms_norm", "reached", f"{shape.architecture}'s norms are GemmaRMSNorm ({paths.source}): the "
            "plugin rebinds GemmaRMSNorm.forward_cuda to muh's gemma ops, signature-guarded, stock per refused input")
    else:
        op_point("ops.gemma_rms_norm", "gemma_rms_norm", [] if gemma or paths is None else ["the model's norms are not GemmaRMSNorm"])
    # q/k norm: a GemmaRMSNorm over head_dim is served by the same rebind (3-D input: the op's (tokens, heads) rows)
    if paths is not None and paths.head_norm is not None and paths.head_norm != "gemma":
        add("ops.head_rms_norm", "dead", f"{shape.architecture}'s q/k norm is {paths.head_norm} inside the fork's model code; "
            "no module-level name to rebind is known")
    elif paths is not None and paths.head_norm == "gemma":
        hd = f"head_dim {shape.head_dim}" if shape.head_dim else "head_dim"
        if "gemma_rms_norm" not in ops:
            add("ops.head_rms_norm", "off", f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd}: served by the "
                "gemma_rms_norm rebind, which is not in tune.ops")
        else:
            add("ops.head_rms_norm", "reached" if "gemma_rms_norm" in llm.SERVED else "inactive",
                f"{shape.architecture}'s q/k norm is a GemmaRMSNorm over {hd} on [tokens, heads, "
                f"{shape.head_dim or 'head_dim'}]: the ops.gemma_rms_norm rebind serves it (a 3-D input goes to "
                f"muh's gemma_rms_norm as (tokens, heads) rows, strided views without a copy); {paths.head_norm_note}")
    else:
        op_point("ops.head_rms_norm", "gemma_rms_norm", [])
    add("sampler.top_k_top_p", "reached" if "sampler.top_k_top_p" in knobs else "off",
        "requests with top_k/top_p" if "sampler.top_k_top_p" in knobs else "no provider given")
    for p in out:
        c.tuned[f"points.{p.id}"] = Resolved(value=p.status, origin="derived", rule=p.reason,
                                             inputs={"variant": variant.label, "reaches": p.reaches})
    return out


def _rebind_live(r: Rebind, live: set[str]) -> bool:
    return _REBIND_POINT.get(r.name, f"ops.{r.name}") in live or f"ops.{r.name}" in live


def _provides(variant: Variant, knobs: dict, live: set[str]) -> list[Provide]:
    vendor = variant.vendor_ops.get("topk_softmax")
    if "vendor.moe_topk_softmax" not in live or vendor is None or not variant.vendor_module:
        return []
    module = knobs.get("ops_module", tuning.DEFAULT_OPS_MODULE)
    return [Provide(name="moe_topk_softmax", module=variant.vendor_module, attr=vendor.vendor, provider=f"{module}:topk_softmax")]
