"""Serve settings → the engine's argv, checked against the pinned version's exact flag set.

Every setting of a ``serve { }`` block names one flag (``max_model_len`` → ``--max-model-len``).
argparse would accept a prefix (``--max-model-le``) and FlexibleArgumentParser rewrites ``_`` to
``-``; muh accepts only exact option strings, so a typo fails at build time with the spec's line
instead of silently meaning something at run time (or nothing at all, in a fork).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from decimal import Decimal

from muh.diagnostics import Diagnostic, Severity, Span, did_you_mean
from muh.engines.vllm.derive.engine import EngineInfo, Option


@dataclass(frozen=True)
class Setting:
    """One ``key = value`` of a serve block, value already plain (bool, int, float, str or tuple)."""

    key: str
    value: object
    span: Span | None = None  # the value
    key_span: Span | None = None  # the key


@dataclass(frozen=True)
class Extensions:
    """Fork-only surface a spec declares: ``engine_extensions { flags = [...] tool_call_parsers = [...] }``."""

    flags: dict[str, Span | None] = field(default_factory=dict)
    tool_call_parsers: dict[str, Span | None] = field(default_factory=dict)


# Spellings people carry over from other tools, for a better hint than string distance gives.
_ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "f16": "float16"}


def flag_of(key: str) -> str:
    """``max_model_len`` → ``--max-model-len`` (keys are identifiers; flags use dashes)."""
    return key if key.startswith("-") else "--" + key.replace("_", "-")


def format_value(value: object) -> str:
    """A scalar as the engine's argparse reads it: ints plain, decimals without exponent or trailing noise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f")
        return text
    if isinstance(value, float):
        return format(Decimal(repr(value)).normalize(), "f")
    return str(value)


def flag_like(text: str) -> bool:
    """Would argparse read ``text`` as an option rather than a value? (A leading `-` that does not
    start a number; the engine's parser has no options that look like negative numbers.)"""
    if not text.startswith("-") or text == "-":
        return False
    try:
        float(text)
    except ValueError:
        return True
    return False


def _flag_like_diag(flag: str, text: str, s: Setting) -> Diagnostic:
    return Diagnostic(
        "E-VLLM-VALUE",
        f"`{flag}` value `{text}` starts with `-`: the engine's argparse would read it as a flag",
        s.span,
        hint="a value that starts with `-` can be given only as the single value of a one-value flag",
    )


def _type_ok(opt: Option, value: object) -> str | None:
    """None when ``value`` fits ``opt.type``; else what was expected."""
    if opt.type == "int":
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, Decimal) and value == value.to_integral_value())
        ):
            return "an integer"
    elif opt.type == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            return "a number"
    elif isinstance(value, (bool, tuple, list)):
        return "a string"
    return None


def _out_of_range(opt: Option, flag: str, item, s: Setting) -> Diagnostic | None:
    """The engine's range of a numeric option (its flag table's ``range``), checked before the value
    is formatted (1e999999 has no plain decimal form)."""
    r = opt.range or {"min": 0, "min_open": False, "min_where": "no numeric flag takes a negative value"}
    value = Decimal(str(item)) if isinstance(item, float) else Decimal(item)
    lo, hi = r.get("min"), r.get("max")
    low = lo is not None and (value <= Decimal(str(lo)) if r.get("min_open") else value < Decimal(str(lo)))
    high = hi is not None and (value >= Decimal(str(hi)) if r.get("max_open") else value > Decimal(str(hi)))
    if not (low or high):
        return None
    shown = str(item) if value.adjusted() > 30 or value.adjusted() < -30 else format_value(item)
    lo_text = f"{'>' if r.get('min_open') else '≥'} {lo}" if lo is not None else None
    hi_text = f"{'<' if r.get('max_open') else '≤'} {hi}" if hi is not None else None
    want = " and ".join(t for t in (lo_text, hi_text) if t)
    why = r.get("min_where" if low else "max_where")
    return Diagnostic(
        "E-VLLM-VALUE",
        f"`{flag}` = {shown} is out of the engine's range: it takes values {want}",
        s.span,
        hint=f"{opt.type} flag; the bound comes from {why}" if why else None,
    )


def _argv_for(opt: Option, flag: str, s: Setting) -> tuple[list[str], Diagnostic | None]:
    """The argv piece of one stock option, or a diagnostic."""
    v = s.value
    if opt.kind == "switch":
        if not isinstance(v, bool):
            return [], Diagnostic("E-VLLM-VALUE", f"`{flag}` is a switch; write `{s.key} = true` or `false`", s.span)
        return ([flag] if v else []), None
    if opt.kind in ("optional_bool", "bool"):
        if not isinstance(v, bool):
            return [], Diagnostic("E-VLLM-VALUE", f"`{flag}` takes true or false", s.span)
        return ([flag] if v and opt.kind == "optional_bool" else [flag, format_value(v)]), None
    values = list(v) if isinstance(v, (tuple, list)) else [v]
    if opt.kind == "value" and len(values) != 1:
        return [], Diagnostic("E-VLLM-VALUE", f"`{flag}` takes one value, not a list", s.span)
    for item in values:
        expected = _type_ok(opt, item)
        if expected:
            return [], Diagnostic("E-VLLM-VALUE", f"`{flag}` takes {expected}, not `{format_value(item)}`", s.span)
        if opt.type in ("int", "float") and not isinstance(item, bool):
            bad = _out_of_range(opt, flag, item, s)
            if bad is not None:
                return [], bad
        if opt.choices is not None:
            allowed = [c for c in opt.choices if c is not None]
            shown = format_value(item)
            if shown not in [format_value(c) for c in allowed]:
                alias = _ALIASES.get(shown.lower())
                hint = (
                    f"did you mean `{alias}`?"
                    if alias in allowed
                    else did_you_mean(shown, [format_value(c) for c in allowed])
                ) or ""
                return [], Diagnostic(
                    "E-VLLM-CHOICE",
                    f"`{flag}` does not accept `{shown}`",
                    s.span,
                    hint=(hint + " " if hint else "") + "valid: " + ", ".join(format_value(c) for c in allowed),
                )
    texts = [format_value(i) for i in values]
    if opt.kind == "append":  # `--flag=value` per item: argparse never reads the value as a flag
        out: list[str] = []
        for t in texts:
            out += [f"{flag}={t}"] if flag_like(t) else [flag, t]
        return out, None
    if any(flag_like(t) for t in texts):
        if len(texts) != 1:
            return [], _flag_like_diag(flag, next(t for t in texts if flag_like(t)), s)
        return [f"{flag}={texts[0]}"], None  # the one form argparse cannot misread
    return [flag, *texts], None


def _extension_argv(flag: str, s: Setting) -> tuple[list[str], Diagnostic | None]:
    v = s.value
    if isinstance(v, bool):
        return ([flag] if v else []), None
    texts = [format_value(i) for i in v] if isinstance(v, (tuple, list)) else [format_value(v)]
    if any(flag_like(t) for t in texts):  # the fork's parser is unknown: refuse rather than guess
        return [], _flag_like_diag(flag, next(t for t in texts if flag_like(t)), s)
    return [flag, *texts], None


# Flags of forks that muh cannot provide on vLLM 0.6.3, and why (a spec asking for one on an engine
# without it is refused; on a variant that may have it, the flag is passed only where the image has it).
NO_PROVIDER = {
    "--reasoning-parser": (
        "vLLM 0.6.3 has no reasoning parsers and no way to add one: the API server parses its arguments before "
        "any plugin loads (an unknown flag stops it), and its ChatMessage / DeltaMessage forbid a "
        "`reasoning_content` field, so the thinking text stays in `content` (unless `api { accept = "
        "[reasoning_split] }`: muh's request hook then moves <think>…</think> to `reasoning_content`)"
    ),
}


def _unknown(flag: str, s: Setting, engine: EngineInfo) -> Diagnostic:
    prefixed = [f for f in engine.all_flags if f.startswith(flag) and f != flag]
    who = f"{engine.engine} {engine.version}"
    if len(prefixed) == 1:
        msg = f"`{flag}` is not a flag of {who}; argparse would silently take it as an abbreviation of `{prefixed[0]}`"
        hint = f"write `{prefixed[0].lstrip('-').replace('-', '_')}` (muh requires exact names)"
    else:
        msg = f"`{flag}` is not a flag of {who}"
        close = difflib.get_close_matches(flag, engine.all_flags, n=1, cutoff=0.75)
        near = f"did you mean `{close[0]}`?" if close else None
        hint = (
            (near.replace("`--", "`").replace("-", "_") + " ") if near else ""
        ) + "a flag only a fork has must be declared in `engine_extensions { flags = [...] }`"
    if flag in NO_PROVIDER:
        msg += f": {NO_PROVIDER[flag]}"
        hint = (
            "remove it, or use an engine variant that has it (or declare it in `engine_extensions { flags = [...] }`)"
        )
    return Diagnostic("E-VLLM-FLAG", msg, s.key_span or s.span, hint=hint)


def to_argv(settings: list[Setting], engine: EngineInfo, ext: Extensions) -> tuple[list[str], list[Diagnostic]]:
    """The argv (after the entrypoint) for ``settings``, in spec order; diagnostics for every bad one."""
    argv: list[str] = []
    diags: list[Diagnostic] = []
    given: dict[str, Setting] = {}
    for flag, span in ext.flags.items():
        if engine.option(flag) is not None:
            diags.append(
                Diagnostic(
                    "W-VLLM-EXT",
                    f"`{flag}` is already a flag of {engine.engine} {engine.version}; "
                    "no need to declare it as an extension",
                    span,
                    severity=Severity.warning,
                )
            )
    for s in settings:
        flag = flag_of(s.key)
        opt = engine.option(flag)
        if opt is None and flag in ext.flags:
            piece, diag = _extension_argv(flag, s)
            if diag:
                diags.append(diag)
                continue
            argv += piece
            given[flag.lstrip("-").replace("-", "_")] = s
            continue
        if opt is None:
            diags.append(_unknown(flag, s, engine))
            continue
        if opt.dest in given:
            diags.append(
                Diagnostic(
                    "E-VLLM-FLAG",
                    f"`{flag}` is set twice",
                    s.key_span or s.span,
                    notes=(f"first set at {given[opt.dest].key_span or given[opt.dest].span}",),
                )
            )
            continue
        piece, diag = _argv_for(opt, flag, s)
        if diag:
            diags.append(diag)
            continue
        given[opt.dest] = s
        argv += piece
    diags += _check_parser(given, engine, ext)
    diags += _check_requires(given, engine)
    return argv, diags


def truthy(s: Setting | None) -> bool:
    """A setting given and not off (false, empty)."""
    return s is not None and s.value not in (False, None, "", ())


def _check_parser(given: dict[str, Setting], engine: EngineInfo, ext: Extensions) -> list[Diagnostic]:
    s = given.get("tool_call_parser")
    if s is None or truthy(given.get("tool_parser_plugin")):
        return []  # a --tool-parser-plugin file may register any name
    name = format_value(s.value)
    known = list(engine.tool_call_parsers) + list(ext.tool_call_parsers)
    if name in known:
        return []
    hint = did_you_mean(name, known)
    return [
        Diagnostic(
            "E-VLLM-PARSER",
            f"tool-call parser `{name}` does not exist in {engine.engine} {engine.version}",
            s.span,
            hint=(hint + " " if hint else "")
            + f"stock parsers: {', '.join(engine.tool_call_parsers)}; a fork's parser "
            "must be declared in `engine_extensions { tool_call_parsers = [...] }`",
        )
    ]


def _check_requires(given: dict[str, Setting], engine: EngineInfo) -> list[Diagnostic]:
    out = []
    for dest, needed, where in engine.requires:
        if truthy(given.get(dest)) and not truthy(given.get(needed)):
            s = given[dest]
            out.append(
                Diagnostic(
                    "E-VLLM-REQUIRES",
                    f"`--{dest.replace('_', '-')}` needs `--{needed.replace('_', '-')}`",
                    s.key_span or s.span,
                    hint=f"set `{needed} = …` in the same serve block",
                    notes=(f"{engine.engine} {engine.version} refuses to start without it ({where})",),
                )
            )
    return out
