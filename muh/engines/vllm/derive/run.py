"""The run file's parts from the deploy block: the environment (the variant's typed knobs checked), the
pre-steps, the chat template fixed at start, and what each accepted API request feature does."""

from __future__ import annotations

import re

from muh.derive.model import Resolved
from muh.diagnostics import did_you_mean
from muh.engines.variant import Variant
from muh.engines.vllm.derive.context import ENV_NAME_RE, Context, plain_value, stable_where, value_problem
from muh.engines.vllm.derive.engine import EngineInfo
from muh.engines.vllm.derive.flags import Setting, format_value
from muh.engines.vllm.derive.plan import IMAGE_ROOT, PreStep

API_BEHAVIOUR = {  # what each accepted request feature does (the hook: muh/engines/vllm/plugin/compat.py)
    "max_completion_tokens": "accepted: becomes max_tokens when max_tokens is absent "
    "(stock 0.6.3 forbids the field: 400)",
    "reasoning_effort": "accepted and ignored (stock 0.6.3 forbids the field: 400)",
    "tool_calls_null_content": "assistant messages with tool_calls and role tool messages with content null get "
    'content "" (stock 0.6.3 reads null as empty text; the fork\'s preflight refused it: 400)',
    "n_within_max_num_seqs": "n or best_of above max_num_seqs: 400 with a message, before the engine sees it",
    "unknown_fields": "top-level request fields the engine's request model lacks are accepted and dropped, one log "
    'line per name (stock 0.6.3 forbids them: 400; the team served extra="allow"); enable_thinking '
    "and thinking {type: enabled|disabled} at the top level become chat_template_kwargs.enable_thinking "
    "(the request's own chat_template_kwargs win)",
    "tools_without_thinking": 'a request with tools (tool_choice not "none") is rendered with enable_thinking false '
    "unless it says otherwise (thinking instead of a <tool_call> failed d03)",
    "n_greedy_fan_out": "n > 1 at temperature 0 (vLLM: 400, greedy sampling takes n = 1) is served as n one-choice "
    "requests, one after the other, merged into one answer (streams: choice after choice)",
    "reasoning_split": "without --reasoning-parser on the server, <think>…</think> of a chat answer moves from content "
    "to reasoning_content, in JSON answers and in streams (tags split across chunks included)",
    "thinking_off": "the model's chat template is served without the empty think block it writes when thinking is "
    "off (the run file passes muh's fixed copy as --chat-template)",
}
CHAT_TEMPLATE_SCRIPT = "vllm/chat_template.py"  # under the image's muh folder (emitted by muh/engines/vllm/codegen)
CHAT_TEMPLATE_OUT = "run/chat_template.jinja"  # written at start under the image's muh folder, never into the model
REASONING_INFO_OUT = "run/reasoning.json"  # idem: {"think_in_prompt": bool}, read by the request hook


def run_chat_template(
    c: Context, given: dict[str, Setting], engine: EngineInfo
) -> tuple[str | None, dict[str, Resolved]]:
    """The fixed template's path (``thinking_off``), ``-`` when only the reasoning info is written at start
    (``reasoning_split``), else None; with the path's rule (``run.chat_template``) when muh writes the template."""
    if "thinking_off" not in c.d.api.accept:
        return "-" if "reasoning_split" in c.d.api.accept else None, {}
    if "chat_template" in given:
        c.error(
            "E-DEPLOY-API",
            "`thinking_off` writes its own chat template; the spec also sets `chat_template`",
            given["chat_template"].span,
            hint="drop one of them",
        )
        return None, {}
    if not any("--chat-template" in o.flags for o in engine.options):
        c.error(
            "E-DEPLOY-API",
            f"`thinking_off` needs `--chat-template`, which vLLM {engine.version} lacks",
            c.span("api", "accept"),
        )
        return None, {}
    path = f"{IMAGE_ROOT}/{CHAT_TEMPLATE_OUT}"
    recorded = Resolved(
        value=path,
        origin="derived",
        where=c.where("api", "accept"),
        rule="thinking_off: at start muh's script writes the model's chat template without the empty think block "
        '(with thinking off the model then emits only "!": the team\'s notes, '
        "https://github.com/dylanyunlon/project_6, 003:5826-5837) and the run file passes --chat-template; "
        "nothing to fix or nothing readable: the model's own template, with a line; never writes into the model",
        inputs={"script": f"{IMAGE_ROOT}/{CHAT_TEMPLATE_SCRIPT}", "model": c.d.model},
    )
    return path, {"run.chat_template": recorded}


def pre_steps(c: Context) -> list[PreStep]:
    out = []
    for i, step in enumerate(c.d.run.pre):
        span = c.span("run", "pre")
        words = list(step.command) + ([step.on_failure] if step.on_failure is not None else [])
        bad = next(((w, p) for w in words if (p := value_problem(w))), None)
        if bad:
            c.error(
                "E-DEPLOY-RUN",
                f"pre-step {i + 1}: `{bad[0][:40]}` {bad[1]}",
                span,
                hint="a pre-step is one line of the run file's script",
            )
            continue
        if step.required and step.on_failure is not None:
            c.error(
                "E-DEPLOY-RUN",
                f"pre-step {i + 1} is both required and tolerated (`on_failure`)",
                span,
                hint="drop `required = true` to tolerate its failure, or `on_failure` to stop on it",
            )
            continue
        if not step.required and step.on_failure is None:
            c.error(
                "E-DEPLOY-RUN",
                f'pre-step {i + 1} says neither `required = true` nor `on_failure = "…"`',
                span,
                hint="say what a failure means: stop the container, or log a line and start the server anyway",
            )
            continue
        if c.d.run.form != "bash":
            c.error(
                "E-DEPLOY-RUN",
                "pre-steps need `form = bash` (the argv form runs only the server)",
                c.span("run", "form"),
            )
            continue
        name = next((w for w in step.command if "/" in w), step.command[0]).rsplit("/", 1)[-1]
        out.append(
            PreStep(
                name=name,
                argv=tuple(step.command),
                on_failure=step.on_failure,
                required=step.required,
                stderr_to_stdout=step.stderr_to_stdout,
                timeout_s=step.timeout_s,
            )
        )
    return out


def run_env(c: Context, variant: Variant) -> tuple[list[tuple[str, str]], dict[str, Resolved]]:
    """The env block checked against the variant's knobs: its (name, text) pairs, each with its rule (``env.*``)."""
    out, recorded = [], {}
    for name, value in c.d.env.items():
        span = c.span("env", name)
        if not ENV_NAME_RE.match(name):
            c.error("E-DEPLOY-ENV", f"`{name}` is not a valid environment variable name", span)
            continue
        text = format_value(plain_value(value))
        problem = value_problem(text)
        if problem:
            c.error(
                "E-DEPLOY-ENV",
                f"the value of `{name}` {problem}",
                span,
                hint="environment values are one line of text; put larger data in a file the image ships",
            )
            continue
        if name == "VLLM_PLUGINS" and "muh" not in text.split(","):
            c.warn("W-DEPLOY-PLUGIN", "VLLM_PLUGINS does not list `muh`: the tuning plugin will not load", span)
        unread = next((why for prefix, why in variant.env_unread.items() if name.startswith(prefix)), None)
        if unread is not None:
            c.warn(
                "W-DEPLOY-NOOP",
                f"`{name}` does nothing: {unread}",
                c.key_span("env", name) or span,
                hint="drop it, or ship the code that reads it",
            )
        knob = variant.env.get(name)
        if knob is not None:
            v = plain_value(value)
            if knob.type == "bool01" and text not in ("0", "1"):
                c.error(
                    "E-DEPLOY-ENV",
                    f"`{name}` is a 0/1 switch of {variant.label}, not `{text}`",
                    span,
                    hint=f"write `{name} = 1` or `0` ({knob.meaning})",
                )
                continue
            if knob.type == "int" and (isinstance(v, bool) or not re.fullmatch(r"-?[0-9]+", text)):
                c.error("E-DEPLOY-ENV", f"`{name}` takes an integer, not `{text}`", span)
                continue
            if knob.type == "enum" and text not in knob.choices:
                c.warn(
                    "W-DEPLOY-ENV",
                    f"`{name} = {text}`: no run file used this value (seen: {', '.join(knob.choices)})",
                    span,
                    hint=knob.meaning,
                )
        elif any(name.startswith(p) for p in variant.env_prefixes):
            known = sorted(variant.env)
            c.warn(
                "W-DEPLOY-ENV",
                f"`{name}` is not a knob {variant.label} is known to read: the engine will ignore it",
                c.key_span("env", name) or span,
                hint=(did_you_mean(name, known) or "") + f" known: {', '.join(known)}",
            )
        out.append((name, text))
        recorded[f"env.{name}"] = Resolved(value=text, origin="spec", rule="spec", where=stable_where(span))
    return out, recorded
