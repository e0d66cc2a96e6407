"""Flags and tool-call parsers a variant leaves ``unknown``: grouped so the run file passes them only
when the image build finds them; muh's own parser provider where the engine may lack one; the flags
muh adds itself (the request hook)."""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.engines.variant import Variant
from muh.engines.vllm.derive.context import Context
from muh.engines.vllm.derive.engine import EngineInfo
from muh.engines.vllm.derive.flags import Extensions, Setting, flag_of, format_value, truthy
from muh.engines.vllm.derive.plan import IMAGE_ROOT, CondFlag

COMMAND_HEAD = 3  # python3 -m <entrypoint>
PARSER_PROVIDERS = ("qwen3_coder",)  # tool-call parsers muh can ship (templates/parser_<name>.py.j2)
# What the provider needs from the engine (file under site-packages, literal): vLLM 0.6.3's extension point.
PROVIDER_NEEDS = (
    ("vllm/entrypoints/openai/cli_args.py", '"--tool-parser-plugin"'),
    ("vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py", "def register_module"),
    ("vllm/entrypoints/openai/protocol.py", "class ExtractedToolCallInformation"),
    ("vllm/entrypoints/openai/protocol.py", "class DeltaToolCall"),
)
MIDDLEWARE = "muh_vllm_plugin.compat.RequestCompat"  # the plugin's request hook (muh/engines/vllm/plugin/compat.py)


def with_variant(ext: Extensions, variant: Variant, engine: EngineInfo) -> Extensions:
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


def conditional_keys(variant: Variant, ext: Extensions, serve: list[Setting]) -> dict[str, CondFlag]:
    """serve key → the condition group it belongs to: flags/parsers the variant leaves ``unknown``."""
    out: dict[str, CondFlag] = {}
    keys = {s.key: s for s in serve}
    for f, info in variant.flags.items():
        key = f.lstrip("-").replace("-", "_")
        if info.present == "unknown" and f not in ext.flags and key in keys:
            out[key] = CondFlag(
                id=key,
                argv=(),
                checks=tuple(info.check),
                why=f"{variant.label}: `{f}` unknown ({info.note}); without it the server would die "
                "at argument parsing",
            )
    parser = keys.get("tool_call_parser")
    if parser is not None and not truthy(keys.get("tool_parser_plugin")):
        name = format_value(parser.value)
        info = variant.tool_call_parsers.get(name)
        if info is not None and info.present == "unknown" and name not in ext.tool_call_parsers:
            group = CondFlag(
                id=f"tool_call_parser_{name}",
                argv=(),
                checks=tuple(info.check),
                why=f"{variant.label}: tool-call parser `{name}` unknown ({info.note}); vLLM 0.6.3 "
                "refuses to start with --enable-auto-tool-choice and an unregistered parser",
            )
            out["tool_call_parser"] = group
            if "enable_auto_tool_choice" in keys:
                out["enable_auto_tool_choice"] = group
    return out


def split_conditional(
    argv: list[str], cond_keys: dict[str, CondFlag], serve: list[Setting]
) -> tuple[list[str], list[CondFlag]]:
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
        pieces.setdefault(g.id, []).extend(argv[i : i + n])
        at.setdefault(g.id, []).extend(range(COMMAND_HEAD + i, COMMAND_HEAD + i + n))
        groups[g.id] = g
    return argv, [
        g.model_copy(update={"argv": tuple(pieces[k]), "at": tuple(at[k])}) for k, g in sorted(groups.items())
    ]


def parser_path(name: str) -> str:
    return f"{IMAGE_ROOT}/vllm/parsers/muh_{name}.py"


def providers_for(
    argv: list[str],
    cond_keys: dict[str, CondFlag],
    serve: list[Setting],
    variant: Variant,
    ext: Extensions,
    engine: EngineInfo,
) -> list[str]:
    """Insert ``--tool-parser-plugin <muh's file>`` before the tool flags when muh has a provider of the
    spec's tool-call parser and the engine may lack it: the variant leaves it unknown (the flags then
    form a conditional group), or lacks it (the flags are passed as they are; the provider registers
    the name). A spec that gives its own ``--tool-parser-plugin`` or declares the parser keeps that."""
    s = next((s for s in serve if s.key == "tool_call_parser"), None)
    name = format_value(s.value) if s is not None else None
    if (
        name not in PARSER_PROVIDERS
        or "--tool-parser-plugin" in argv
        or name in ext.tool_call_parsers
        or name in engine.tool_call_parsers
        or "--tool-call-parser" not in argv
    ):
        return []
    info = variant.tool_call_parsers.get(name)
    if "tool_call_parser" not in cond_keys and info is not None and info.present is not False:
        return []  # the engine has it
    i = min(argv.index(f) for f in ("--enable-auto-tool-choice", "--tool-call-parser") if f in argv)
    argv[i:i] = ["--tool-parser-plugin", parser_path(name)]
    return [name]


def derived_flags(
    c: Context, argv: list[str], cond: list[CondFlag], variant: Variant, engine: EngineInfo
) -> tuple[bool, dict[str, Resolved]]:
    """Flags muh adds itself, at the end of argv: ``--enable-reasoning`` beside ``--reasoning-parser`` where the
    engine has it (vLLM releases with reasoning parsers refuse the parser without it), and ``--middleware``
    with muh's request hook where the API has ``api`` features. A flag the variant leaves ``unknown`` is a
    conditional group (the image build decides); returns whether ``--middleware`` is passed, and each flag
    passed as it is with its rule (``run.*``)."""
    recorded: dict[str, Resolved] = {}

    def add(gid: str, words: tuple[str, ...], info, why: str, requires: tuple[str, ...] = ()) -> None:
        at = tuple(range(COMMAND_HEAD + len(argv), COMMAND_HEAD + len(argv) + len(words)))
        argv.extend(words)
        if info is not None and info.present == "unknown" or requires:
            cond.append(
                CondFlag(
                    id=gid,
                    argv=words,
                    at=at,
                    checks=tuple(info.check) if info else (words[0],),
                    why=why,
                    requires=requires,
                )
            )
        else:
            recorded[f"run.{gid}"] = Resolved(value=" ".join(words), origin="derived", rule=why)

    reasoning = next((g for g in cond if g.id == "reasoning_parser"), None)
    info = variant.flags.get("--enable-reasoning")
    if (reasoning is not None or "--reasoning-parser" in argv) and info is not None and info.present is not False:
        add(
            "enable_reasoning",
            ("--enable-reasoning",),
            info,
            f"{variant.label}: `--enable-reasoning` {info.present if info.present == 'unknown' else 'present'} "
            f"({info.note}); "
            "vLLM releases that have --reasoning-parser take it only with --enable-reasoning",
            requires=("reasoning_parser",) if reasoning is not None else (),
        )
    if not (c.d.api.accept or c.d.api.max_tokens_cap) or not any("--middleware" in o.flags for o in engine.options):
        return False, recorded
    info = variant.flags.get("--middleware")
    if info is not None and info.present is False:
        return False, recorded
    add(
        "middleware",
        ("--middleware", MIDDLEWARE),
        info,
        f"the request hook through the engine's own option (vLLM {engine.version}'s build_app adds each --middleware)"
        + (f"; {variant.label}: {info.note}" if info is not None and info.note else "")
        + "; the plugin's build_app wrap is the second hook, the image build fails when neither can be installed",
    )
    return True, recorded


def with_provider(g: CondFlag, argv: list[str]) -> CondFlag:
    i = argv.index("--tool-parser-plugin")
    return g.model_copy(
        update={
            "argv": (argv[i], argv[i + 1], *g.argv),
            "at": (COMMAND_HEAD + i, COMMAND_HEAD + i + 1, *g.at),
            "provider": PROVIDER_NEEDS,
            "why": g.why + "; or muh's own provider registers through --tool-parser-plugin",
        }
    )
