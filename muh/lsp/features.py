"""Editor features over an ``Analysis``: hover, definition, completion, symbols, fixes, formatting.

Everything here is in muh's coordinates (1-based line and column, code points, ``Span``s); the
server converts to and from the protocol's. Facts come from their owners: key documentation from
the typed models and the catalogue, resolved values and their provenance from ``muh explain``,
units from the unit types themselves (a unit is offered where the field's validator accepts it).
"""

from __future__ import annotations

import difflib
import re
import typing
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from pydantic import BaseModel, TypeAdapter

from muh.diagnostics import Diagnostic, MuhError, Span, suggestion
from muh.grammar import ast
from muh.lsp.analysis import Analysis, Pos, hit_at, node_at, walk
from muh.lsp.context import Context, Frame
from muh.schema.catalog import DELAY_KINDS, DIMS, DTYPES, FAMILIES, OPS, enum_choices
from muh.schema.deploy import Api, Deploy, Engine, EngineExtensions, ModelShape, Moe, Run
from muh.schema.lower import TOP_KINDS
from muh.schema.models import Delay, Hardware, PolicyValues, Toolchain
from muh.schema.policy_key import OFFSETS, OP_CLASSES
from muh.schema.units import DIMENSION_OF_UNIT, Quantity

HIDDEN = ("name", "on", "file", "sha256", "measured", "version", "subs")
INLINE = (Delay, Engine)  # models written as one value (`fixed(ns = …)`, `vllm "0.6.3"`), not as a block
MAX_HOVER_LINES = 40


# -- models and fields by block --------------------------------------------------------------------
def _model_for(kinds: tuple[str, ...]) -> type[BaseModel] | None:
    """The typed model of the block at ``kinds`` (block kinds, outermost first)."""
    table = {
        ("hardware",): Hardware,
        ("hardware", "toolchain"): Toolchain,
        ("algorithm", "policy"): PolicyValues,
        ("algorithm", "space"): PolicyValues,
        ("deploy",): Deploy,
        ("deploy", "moe"): Moe,
        ("deploy", "engine_extensions"): EngineExtensions,
        ("deploy", "run"): Run,
        ("deploy", "api"): Api,
        ("deploy", "model_shape"): ModelShape,
    }
    if len(kinds) == 3 and kinds[:2] == ("algorithm", "policy"):
        return PolicyValues  # a sub-policy
    return table.get(kinds)


def _submodel(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    f = model.model_fields.get(name)
    if f is None:
        return None
    for t in (f.annotation, *typing.get_args(f.annotation)):
        if isinstance(t, type) and issubclass(t, BaseModel):
            return t
    return None


@lru_cache(maxsize=None)
def units_for(model: type[BaseModel], name: str) -> tuple[str, ...]:
    """The units the field accepts: those whose quantity its validator takes."""
    f = model.model_fields.get(name)
    if f is None:
        return ()
    adapter = TypeAdapter(typing.Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation)
    out = []
    for unit in DIMENSION_OF_UNIT:
        try:
            adapter.validate_python(Quantity(Decimal(1), unit))
            out.append(unit)
        except Exception:  # noqa: BLE001 - a refusal is the answer
            pass
    return tuple(out)


def _literal_choices(model: type[BaseModel], name: str) -> tuple[str, ...]:
    f = model.model_fields.get(name)
    if f is None:
        return ()
    out: list[str] = []

    def visit(t):
        if typing.get_origin(t) is typing.Literal:
            out.extend(str(a) for a in typing.get_args(t))
        elif t is bool:
            out.extend(("true", "false"))
        for a in typing.get_args(t):
            if typing.get_origin(t) is not typing.Literal:
                visit(a)

    visit(f.annotation)
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=1)
def _documented() -> None:
    """Fields' docstrings as their descriptions (read once, on demand: muh.schema.base.with_docs)."""
    from muh.schema.base import with_docs
    from muh.schema.models import Spec

    with_docs(Spec)


def _field_doc(model: type[BaseModel], name: str) -> str | None:
    _documented()
    f = model.model_fields.get(name)
    if f is None:
        return None
    kind = ", ".join(units_for(model, name)) or _type_text(f.annotation)
    default = (
        "required" if f.is_required() else f"default `{f.default}`" if f.default not in (None, {}, []) else "optional"
    )
    doc = (f.description or "").strip()
    return f"**`{name}`** — {kind}; {default}" + (f"\n\n{doc}" if doc else "")


def _type_text(t) -> str:
    origin = typing.get_origin(t)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in typing.get_args(t))
    if origin is typing.Union:
        return " or ".join(_type_text(a) for a in typing.get_args(t) if a is not type(None))
    if origin is typing.Annotated:
        return _type_text(typing.get_args(t)[0])
    if origin in (dict, list):
        return origin.__name__
    return getattr(t, "__name__", str(t))


def _dim_doc(dim: str, family: str | None) -> str:
    d = DIMS[dim]
    text = f"**`{dim}`** — {d.doc} ({d.kind}"
    if d.kind == "enum":
        choices = enum_choices(family, dim) if family in FAMILIES else d.choices
        text += ": " + ", ".join(f"`{c}`" for c in choices)
    elif d.lo is not None:
        text += f", {d.lo}..{d.hi}"
    elif d.kind == "delay":
        text += ": " + ", ".join(f"`{k}`" for k in DELAY_KINDS)
    return text + ")"


def _family_doc(family: str) -> str:
    fam = FAMILIES[family]
    facts = [f"tunes: {', '.join(fam.dims)}"]
    if fam.subs:
        facts.append(f"sub-policies: {', '.join(fam.subs)}")
    facts.append(
        f"scaling rule: `{fam.scaling}`" + ("; the tile is staged in shared memory" if fam.stages_tile else "")
    )
    if fam.cub_header:
        facts.append(f"CUB: `{fam.cub_header}`")
    return f"**algorithm `{family}`** — {fam.doc}\n\n" + "  \n".join(facts)


def _hardware_doc(a: Analysis, name: str) -> str | None:
    hw = a.spec.hardware.get(name) if a.spec else None
    if hw is None:
        return f"**hardware `{name}`**"
    from muh.schema.units import fmt_bytes

    return (
        f"**hardware `{hw.name}`** ({hw.vendor} {hw.arch}) — {hw.sm_count} SMs, warp {hw.warp_size}, "
        f"smem/block {fmt_bytes(hw.smem_per_block)}, {hw.max_threads_per_block} threads/block max"
        + (", `cub_parity`" if hw.cub_parity else "")
    )


def _explain(a: Analysis, what: str) -> list[str] | None:
    if a.derived is None:
        return None
    from muh.explain import explain

    try:
        lines = explain(a.derived, what, a.spec)
    except MuhError:
        return None
    if len(lines) > MAX_HOVER_LINES:
        lines = lines[:MAX_HOVER_LINES] + [f"… {len(lines) - MAX_HOVER_LINES} more lines: muh explain SPEC {what}"]
    return lines


def _sub_values(a: Analysis, akey: str, pkey: str, sub: str, dim: str) -> list[str] | None:
    """A sub-policy's resolved value per type (``muh explain`` covers the main policies only)."""
    alg = a.derived.algorithms.get(akey) if a.derived else None
    if alg is None:
        return None
    lines = [f"{akey} sub-policy {sub}"]
    for key, pol in alg.policies.items():
        r = pol.subs.get(sub, {}).get(dim)
        if r is not None and (pkey == "default" or key == pkey or key.split(".")[0] == pkey):
            lines.append(f"  {key}: {dim} = {r.value}    [{r.origin}]  rule: {r.rule}")
    return lines if len(lines) > 1 else None


def _code(lines: list[str] | None) -> str:
    return "```\n" + "\n".join(lines) + "\n```" if lines else ""


def _join(*parts: str | None) -> str:
    return "\n\n".join(p for p in parts if p)


# -- hover -----------------------------------------------------------------------------------------
def hover(a: Analysis, pos: Pos) -> tuple[str, Span] | None:
    found = node_at(a, pos)
    if found is not None and isinstance(found[0], ast.Ident) and len(found[0].path) > 1:
        ref = found[0]
        target = _ref_target(a, found[1], ref)
        value = _value_at(a, ("hardware", target) + ref.path[1:]) if target else None
        doc = _field_doc(Hardware, ref.path[1]) if ref.path[0] == "hardware" and len(ref.path) == 2 else None
        return _join(f"`{ref.name}` on `{target}` = `{value}`" if value is not None else f"`{ref.name}`", doc), ref.span
    hit = hit_at(a, pos)
    if hit is None:
        return None
    text = _hover_path(a, hit.path, hit.is_key)
    return (text, hit.span) if text else None


def _value_at(a: Analysis, path: tuple):
    node: object = a.spec
    if node is None:
        return None
    for part in path:
        if isinstance(node, BaseModel):
            node = getattr(node, part, None) if part in type(node).model_fields else None
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
        if node is None:
            return None
    return node


def _hover_path(a: Analysis, path: tuple, is_key: bool) -> str | None:
    head = path[0]
    if head == "hardware" and len(path) >= 2:
        if len(path) == 2:
            return _hardware_doc(a, path[1])
        model = Toolchain if path[2] == "toolchain" and len(path) > 3 else Hardware
        name = path[-1]
        value = _value_at(a, path)
        shown = (
            f"\n\nresolved: `{value}`" + (" (bytes)" if units_for(model, name) and isinstance(value, int) else "")
            if value is not None and not isinstance(value, BaseModel)
            else ""
        )
        return (_field_doc(model, name) or f"`{name}`") + shown
    if head == "algorithms" and len(path) >= 2:
        akey = path[1]
        family = akey.split("@")[0]
        if family not in FAMILIES:
            return None
        if len(path) == 2:
            return _join(_family_doc(family), _code(_explain(a, akey)) if not is_key else None)
        if path[2] == "on":
            return _hardware_doc(a, akey.split("@", 1)[1])
        if path[2] == "types":
            return f"**`types`** — element types generated and checked: {', '.join(f'`{t}`' for t in DTYPES)}"
        if path[2] == "policies" and len(path) >= 4:
            pkey = path[3]
            dim = path[-1] if len(path) >= 5 and path[-1] in DIMS else None
            if dim is None:
                what = akey if pkey == "default" else f"{akey}.{pkey}"
                layer = (
                    "policy `default`: every type inherits it"
                    if pkey == "default"
                    else f"policy `{pkey}`: " + " ⊕ ".join(f"`{k}`" for k in _layers_of(a, akey, pkey))
                )
                return _join(layer, _code(_explain(a, what)))
            if "subs" in path:
                return _join(
                    _dim_doc(dim, family), _code(_sub_values(a, akey, pkey, path[path.index("subs") + 1], dim))
                )
            what = f"{akey}.{dim}" if pkey == "default" else f"{akey}.{pkey}.{dim}"
            return _join(_dim_doc(dim, family), _code(_explain(a, what)))
        if path[2] == "spaces" and len(path) >= 6 and path[-1] in DIMS:
            cands = _value_at(a, path)
            return _join(_dim_doc(path[-1], family), f"candidates for `muh tune`: {cands}" if cands else None)
        if path[2] == "spaces":
            return "**`space`** — what `muh tune` explores: each dimension a list or range of candidates"
    if head == "deploys" and len(path) >= 2:
        if len(path) == 2:
            return _code(_explain(a, "deploy")) or f"**deploy `{path[1]}`**"
        if path[2] == "on":
            return _hardware_doc(a, _deploy_target(a, path[1]) or "")
        rest = tuple(p for p in path[2:] if isinstance(p, str))  # a list item: its key
        model: type[BaseModel] | None = Deploy
        for part in rest[:-1]:
            model = _submodel(model, part) if model else None
        doc = _field_doc(model, rest[-1]) if model else None
        if rest[0] == "tune":
            knob = _tuning_points(_engine_version(a.text)).get(".".join(rest[1:]))
            doc = f"**`{'.'.join(rest[1:])}`** — {knob.doc}" if knob else doc
        if rest[0] == "serve" and len(rest) == 2:
            doc = _serve_doc(a, rest[1])
        explained = None
        prefix = _tuned_prefix(_engine_version(a.text)) if rest[0] == "tune" else ""
        for cand in (".".join(rest), f"{prefix}." + ".".join(rest[1:]) if prefix else "", ".".join(rest[1:])):
            if cand and (explained := _explain(a, f"deploy.{cand}")):
                break
        return _join(doc, _code(explained)) or None
    return None


def _deploy_target(a: Analysis, name: str) -> str | None:
    if a.module is None:
        return None
    return next(
        (m.target for m in a.module.members if isinstance(m, ast.Block) and m.kind == "deploy" and m.label == name),
        None,
    )


def _engine_variants():
    """Every registered engine's variants, as ``(plug-in, version, variant)``, in registry order."""
    from muh import engines

    return [(p, v, x) for p in engines.REGISTRY.values() for v, x in sorted(p.variants().items())]


def _engine_options(engine: tuple[str, str] | None):
    """The flag table of ``(engine plug-in, variant)``; the first registered engine's newest one when it is unknown."""
    from muh import engines

    plugin = engines.get(engine[0]) if engine else None
    variant = plugin.variant(engine[1]) if plugin else None
    if variant is None:
        plugin = next(iter(engines.REGISTRY.values()), None)
        known = sorted(plugin.variants().items()) if plugin else []
        variant = known[-1][1] if known else None
    table = plugin.flag_table(variant) if variant is not None else None  # None: muh has no table for the variant
    return tuple(getattr(table, "options", None) or ())


def _tuned_prefix(engine: tuple[str, str] | None) -> str:
    """The prefix of the spec's engine's tuned keys of ``tune`` values (``EnginePlugin.tuned_prefix``)."""
    from muh import engines

    plugin = engines.get(engine[0]) if engine else None
    return plugin.tuned_prefix if plugin is not None else ""


def _tuning_points(engine: tuple[str, str] | None):
    """The ``tune`` keys of the spec's engine; of every registered engine when it names none known."""
    from muh import engines

    plugin = engines.get(engine[0]) if engine else None
    if plugin is not None:
        return plugin.tuning_points()
    return {k: v for p in engines.REGISTRY.values() for k, v in p.tuning_points().items()}


def _serve_doc(a: Analysis, key: str) -> str | None:
    engine = next(((d.engine.name, d.engine.version) for d in a.spec.deploys.values()), None) if a.spec else None
    opt = next((o for o in _engine_options(engine) if o.dest == key), None)
    if opt is None:
        return None
    text = f"**`{key}`** → `{opt.long}` ({opt.kind}" + (f", {opt.type}" if opt.type else "") + ")"
    if opt.choices:
        text += "\n\nchoices: " + ", ".join(f"`{c}`" for c in opt.choices)
    return text + f"\n\ndefault: `{opt.default}` — from the engine's `{opt.where}`"


# -- definition ------------------------------------------------------------------------------------
def _ref_target(a: Analysis, parents: tuple, ref: ast.Ident) -> str | None:
    top = next((p for p in parents if isinstance(p, ast.Block)), None)
    return top.target if top is not None and ref.path[0] == "hardware" else None


def _key_span(a: Analysis, path: tuple) -> Span | None:
    low = a.lowered
    return low.key_spans.get(path) or low.value_spans.get(path) if low else None


def _where_span(a: Analysis, where: str | None) -> Span | None:
    """The value span that a provenance ``where`` (``file:line:col``) names."""
    if not where or a.lowered is None:
        return None
    m = re.search(r":(\d+):(\d+)$", where)
    if not m:
        return None
    line, col = int(m.group(1)), int(m.group(2))
    return next((s for s in a.lowered.value_spans.values() if (s.line, s.col) == (line, col)), None)


def definition(a: Analysis, pos: Pos) -> list[Span]:
    found = node_at(a, pos)
    if found is not None and isinstance(found[0], ast.Ident) and len(found[0].path) > 1:
        target = _ref_target(a, found[1], found[0])
        span = _key_span(a, ("hardware", target) + found[0].path[1:]) if target else None
        return [span] if span else []
    hit = hit_at(a, pos)
    if hit is None:
        return []
    path = hit.path
    if len(path) == 3 and path[0] in ("algorithms", "deploys") and path[2] == "on":
        hw = path[1].split("@", 1)[1] if path[0] == "algorithms" else _deploy_target(a, path[1])
        span = _key_span(a, ("hardware", hw))
        return [span] if span else []
    if path[0] == "algorithms" and len(path) >= 4 and path[2] == "policies":
        akey, pkey = path[1], path[3]
        if len(path) == 4:  # a policy: the layers it inherits from
            layers = [k for k in _layers_of(a, akey, pkey) if k != pkey]
            return [s for k in layers if (s := _key_span(a, ("algorithms", akey, "policies", k)))]
        return _inputs(a, akey, pkey, path[-1], hit.span)
    return []


def _inputs(a: Analysis, akey: str, pkey: str, dim: str, own: Span) -> list[Span]:
    """Where a resolved value came from: the values it was inherited or derived from, and the
    hardware numbers a scaling rule read."""
    alg = a.derived.algorithms.get(akey) if a.derived else None
    if alg is None:
        return []
    keys = [pkey] if pkey in alg.policies else [k for k in alg.policies if k.split(".")[0] == pkey or pkey == "default"]
    out: list[Span] = []
    for key in keys:
        pol = alg.policies[key]
        r = pol.values.get(dim)
        if r is None:
            continue
        spans = [_where_span(a, r.where)]
        if r.origin == "derived" or r.rule.split(":")[0] in ("mem_bound", "reg_bound", "nominal_4b", "nominal_8b"):
            spans += [_where_span(a, pol.values[d].where) for d in ("threads", "items") if d in pol.values]
            if not alg.hardware.cub_parity:
                hw = alg.hardware.name
                spans += [_key_span(a, ("hardware", hw, "smem_per_block")), _key_span(a, ("hardware", hw, "warp_size"))]
        for s in spans:
            if s is not None and s not in out:
                out.append(s)
        if out:
            break
    others = [s for s in out if s != own]
    return others or out


# -- completion ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    label: str
    kind: str  # keyword | block | key | family | type | enum | unit | value | hardware
    detail: str = ""
    doc: str = ""
    insert: str | None = None  # snippet text, when it differs from the label


def _hardware_names(text: str) -> list[str]:
    return re.findall(r"^\s*hardware\s+([A-Za-z_][A-Za-z0-9_]*)", text, flags=re.M)


def completion(text: str, ctx: Context) -> list[Item]:
    frames = ctx.frames
    kinds = tuple(f.kind for f in frames)
    family = frames[0].label if frames and frames[0].kind == "algorithm" else None
    if ctx.where == "label":
        kind = ctx.head[0] if ctx.head else ""
        if kind == "algorithm" and len(frames) == 0:
            return [Item(f, "family", FAMILIES[f].doc, _family_doc(f)) for f in FAMILIES]
        if kind in ("policy", "space") and kinds == ("algorithm",):
            return _policy_keys()
        return []
    if ctx.where == "on":
        return [Item("on", "keyword", "on <hardware>")] if ctx.head and ctx.head[0] in ("algorithm", "deploy") else []
    if ctx.where == "target":
        return [Item(h, "hardware", "hardware block") for h in _hardware_names(text)]
    if ctx.where == "value":
        return _values(frames, kinds, family, ctx, text)
    if ctx.where == "unit":
        model, name = _field_of(kinds, ctx.key, family)
        units = [Item(u, "unit", DIMENSION_OF_UNIT[u]) for u in units_for(model, name)] if model else []
        return units + _keys(frames, kinds, family, text)
    if ctx.where == "key":
        return _keys(frames, kinds, family, text)
    return []


def _layers_of(a, akey: str, pkey: str) -> list[str]:
    """The policies a key layers over (muh/derive/resolve.py), or the plain chain when the spec does not load."""
    from muh.derive.resolve import layers_of

    spec = getattr(a, "spec", None)
    alg = spec.algorithms.get(akey) if spec is not None else None
    try:
        return layers_of(alg, pkey) if alg is not None else list(dict.fromkeys(("default", pkey.split(".")[0], pkey)))
    except ValueError:
        return list(dict.fromkeys(("default", pkey.split(".")[0], pkey)))


def _policy_keys() -> list[Item]:
    out = [Item("default", "type", "every type inherits it")]
    out += [Item(t, "type", f"{b} B per item") for t, b in DTYPES.items()]
    out += [Item(f"{t}.{o}", "type", f"{t} with operator {o}") for t in DTYPES for o in OPS]
    out += [
        Item(f"{t}.{c}", "type", f"{t} with any operator of {', '.join(ops)}")
        for t in DTYPES
        for c, ops in OP_CLASSES.items()
    ]
    out += [Item(f"{t}.{w}", "type", f"{t} with {w[6:]}-bit offsets") for t in DTYPES for w in OFFSETS]
    return out


def _field_of(kinds: tuple, key: tuple, family: str | None) -> tuple[type[BaseModel] | None, str]:
    if not key:
        return None, ""
    model = _model_for(kinds)
    if len(key) == 2 and key[0] == "delay" and model is PolicyValues:
        return Delay, key[1]
    for part in key[:-1]:
        model = _submodel(model, part) if model else None
    return model, key[-1]


def _keys(frames: list[Frame], kinds: tuple, family: str | None, text: str) -> list[Item]:
    if not kinds:
        return [Item(k, "block", f"{k} block", insert=_snippet(k)) for k in TOP_KINDS]
    if kinds == ("algorithm",):
        return [
            Item("policy", "block", "policy <key> { … }", insert="policy ${1:default} {\n  $0\n}"),
            Item("space", "block", "space { … } for muh tune", insert="space {\n  $0\n}"),
            Item("types", "key", "element types", insert="types = [$0]"),
        ]
    if kinds[0] == "algorithm" and family in FAMILIES and kinds[1:2] in (("policy",), ("space",)):
        fam = FAMILIES[family]
        out = [Item(d, "key", DIMS[d].kind, _dim_doc(d, family), insert=f"{d} = ") for d in fam.dims]
        if kinds == ("algorithm", "policy"):
            out += [Item(s, "block", f"sub-policy of {family}", insert=f"{s} {{ $0 }}") for s in fam.subs]
        return out
    if kinds == ("deploy", "serve"):
        return [Item(o.dest, "key", o.long, insert=f"{o.dest} = ") for o in _engine_options(_engine_version(text))]
    if kinds == ("deploy", "tune"):
        return [
            Item(k, "key", v.kind, v.doc, insert=f"{k} = ") for k, v in _tuning_points(_engine_version(text)).items()
        ]
    model = _model_for(kinds)
    if model is None:
        return []
    out = []
    for name, f in model.model_fields.items():
        if name in HIDDEN:
            continue
        sub = _submodel(model, name)
        is_block = (sub is not None and sub not in INLINE) or typing.get_origin(f.annotation) is dict
        detail = ", ".join(units_for(model, name)) or _type_text(f.annotation)
        out.append(
            Item(
                name,
                "block" if is_block else "key",
                detail,
                _field_doc(model, name) or "",
                insert=f"{name} {{\n  $0\n}}" if is_block else f"{name} = ",
            )
        )
    return out


def _engine_version(text: str) -> tuple[str, str] | None:
    m = re.search(r'engine\s*=\s*([a-z][a-z0-9_]*)\s*"([^"]+)"', text)
    return (m.group(1), m.group(2)) if m else None


def _snippet(kind: str) -> str:
    if kind == "hardware":
        return "hardware ${1:name} {\n  $0\n}"
    return f"{kind} ${{1:name}} on ${{2:hardware}} {{\n  $0\n}}"


def _values(frames, kinds, family, ctx: Context, text: str) -> list[Item]:
    key = ctx.key
    if ctx.in_call == "delay" or (ctx.in_call and ctx.in_call in DELAY_KINDS):
        return [
            Item(n, "key", units_for(Delay, n) and "time" or "", insert=f"{n} = ")
            for n in Delay.model_fields
            if n != "kind"
        ]
    if ctx.in_call:
        return []
    if kinds == ("algorithm",) and key == ("types",):
        return [Item(t, "type", f"{b} B per item") for t, b in DTYPES.items()]
    if kinds and kinds[0] == "algorithm" and family in FAMILIES and key and key[-1] in DIMS:
        dim = key[-1]
        d = DIMS[dim]
        if d.kind == "enum":
            return [Item(c, "enum", dim) for c in enum_choices(family, dim)]
        if d.kind == "bool":
            return [Item(c, "value", dim) for c in ("true", "false")]
        if d.kind == "delay":
            return [
                Item(k, "enum", "look-back delay", insert=f"{k}(ns = ${{1:0}} ns, l2_write_latency = ${{2:0}} ns)")
                for k in DELAY_KINDS
            ]
        return []
    if kinds == ("deploy", "serve") and key:
        opt = next((o for o in _engine_options(_engine_version(text)) if o.dest == key[-1]), None)
        if opt is None:
            return []
        if opt.choices:
            return [Item(str(c), "enum", key[-1]) for c in opt.choices]
        if opt.kind in ("switch", "bool", "optional_bool"):
            return [Item(c, "value", key[-1]) for c in ("true", "false")]
        return []
    if kinds == ("deploy",) and key == ("engine",):
        return [Item(f'{p.name} "{v}"', "value", x.description) for p, v, x in _engine_variants()]
    model, name = _field_of(kinds, key, family)
    if model is None:
        return []
    return [Item(c, "enum", name) for c in _literal_choices(model, name)]


# -- document symbols ------------------------------------------------------------------------------
@dataclass
class Symbol:
    name: str
    kind: str  # block | policy | key
    detail: str
    span: Span
    selection: Span
    children: list["Symbol"]


def symbols(a: Analysis) -> list[Symbol]:
    if a.module is None:
        return []

    def block(b: ast.Block) -> Symbol:
        name = f"{b.kind} {b.label}" if b.label else b.kind
        detail = f"on {b.target}" if b.target else ""
        kids = [
            block(m) if isinstance(m, ast.Block) else Symbol(m.name, "key", str(m.value)[:60], m.span, m.key_span, [])
            for m in b.members
        ]
        return Symbol(
            name,
            "policy" if b.kind in ("policy", "space") else "block",
            detail,
            b.span,
            b.label_span or b.kind_span,
            kids,
        )

    return [
        block(m) if isinstance(m, ast.Block) else Symbol(m.name, "key", "", m.span, m.key_span, [])
        for m in a.module.members
    ]


# -- quick fixes -----------------------------------------------------------------------------------
def fix(d: Diagnostic, text: str) -> tuple[Span, str] | None:
    """The one edit a diagnostic's did-you-mean hint asks for: (span of the wrong word, the word)."""
    word = suggestion(d.hint) if d.hint else None
    if word is None or d.span is None or d.span.line != d.span.end_line:
        return None
    lines = text.split("\n")
    if not 1 <= d.span.line <= len(lines):
        return None
    line = lines[d.span.line - 1]
    start, end = d.span.col - 1, d.span.end_col - 1
    under = line[start:end]
    best = None
    for m in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*", under):
        score = difflib.SequenceMatcher(None, m.group(0), word).ratio()
        if m.group(0) != word and (best is None or score > best[0]):
            best = (score, m)
    if best is None or best[0] < 0.5:
        return None
    m = best[1]
    s = Span(d.span.file, d.span.line, d.span.col + m.start(), d.span.line, d.span.col + m.end())
    return s, word


# -- formatting ------------------------------------------------------------------------------------
def formatted(text: str, file: str) -> str | None:
    """``muh fmt``'s output for ``text``, or None when it does not parse."""
    from muh.grammar.format import format_module
    from muh.grammar.parser import MAX_BYTES, parse

    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return None
    try:
        return format_module(parse(text, file))
    except (MuhError, RecursionError):
        return None


__all__ = ["Item", "Symbol", "completion", "definition", "fix", "formatted", "hover", "symbols", "units_for", "walk"]
