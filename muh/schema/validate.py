"""Validate lowered values into a typed ``Spec``; map every problem back to its source span."""

from __future__ import annotations

import hashlib
import typing
from decimal import Decimal

from pydantic import BaseModel, ValidationError

from muh.diagnostics import Diagnostic, MuhError, Span, did_you_mean
from muh.families import limits
from muh.families.cub import AGREE, CUB_NUMBERS, WRONG_IN_CUB, cub_choices
from muh.grammar import ast
from muh.grammar.parser import parse
from muh.schema import policy_key
from muh.schema.catalog import BLOCK_REDUCE, DIMS, DTYPES, FAMILIES, enum_choices
from muh.schema.lower import Lowered, RangeValue, lower, value_of
from muh.schema.models import MAX_TYPE_SIZE, Measured, Spec, pow2_text, sub_dim
from muh.schema.units import Quantity

MAX_SPACE_VALUES = 100_000


def load(text: str, file: str = "<input>") -> Spec:
    """parse → lower → validate. Raises ``MuhError`` carrying every diagnostic found."""
    module = parse(text, file)
    return from_module(module)


def from_module(module: ast.Module) -> Spec:
    low = lower(module)
    raw = low.raw
    _expand_spaces(low)
    measured = _measurements(low)
    raw = {
        **raw,
        "file": module.file,
        "sha256": hashlib.sha256(module.source.encode()).hexdigest(),
        "measured": measured,
    }
    spec = None
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as err:
        low.diags.extend(_from_pydantic(err, low, raw))
    low.diags.extend(_orphans(low))
    checked = spec if spec is not None else _valid_part(raw)
    if checked is not None:
        checked._spans.update(low.key_spans)
        checked._spans.update(low.value_spans)
        checked._key_spans.update(low.key_spans)
        low.diags.extend(_semantic(checked, low))
    errors = [d for d in low.diags if d.is_error]
    if errors or spec is None:
        raise MuhError(_dedupe(low.diags))
    return spec


def _orphans(low: Lowered) -> list[Diagnostic]:
    """Errors inside blocks that name unknown hardware (reported besides that one)."""
    from muh.schema.deploy import Deploy
    from muh.schema.models import Algorithm

    out = []
    for group, model in (("algorithms", Algorithm), ("deploys", Deploy)):
        for key, body in low.orphans.get(group, {}).items():
            try:
                model.model_validate(body)
            except ValidationError as err:
                wrapped = {group: {key: body}}
                out += [d for d in _from_pydantic(err, low, wrapped, prefix=(group, key)) if d.code != "E-MISSING"]
    return out


def _salvage(model, data):
    """``data`` validated as ``model`` after dropping the values that fail (they are reported
    already); the defaults stand in for them. None when a required value is among them."""
    import copy

    data = copy.deepcopy(data)
    for _ in range(16):
        try:
            model.model_validate(data)
            return data
        except ValidationError as err:
            dropped = False
            for e in err.errors():
                node, loc = data, tuple(e["loc"])
                for el in loc[:-1]:
                    node = node.get(el) if isinstance(node, dict) else None
                if isinstance(node, dict) and loc and loc[-1] in node and e["type"] != "missing":
                    del node[loc[-1]]
                    dropped = True
            if not dropped:
                return None
        except (TypeError, ValueError):
            return None
    return None


def _valid_part(raw: dict) -> Spec | None:
    """The hardware and algorithms that validate on their own (when the whole spec does not), less
    the values already reported, so that checks against the hardware report in the same run as
    every other error (a bad `cxx` does not hide a `threads` warp error)."""
    from muh.schema.models import Algorithm, ElementType, Hardware

    hardware = {k: s for k, v in raw.get("hardware", {}).items() if (s := _salvage(Hardware, v)) is not None}
    types = {k: s for k, v in raw.get("types", {}).items() if (s := _salvage(ElementType, v)) is not None}
    algorithms = {
        k: s
        for k, v in raw.get("algorithms", {}).items()
        if isinstance(v, dict) and v.get("on") in hardware and (s := _salvage(Algorithm, v)) is not None
    }
    try:
        return Spec.model_validate(
            {"hardware": hardware, "types": types, "algorithms": algorithms, "file": raw.get("file", "<input>")}
        )
    except ValidationError:
        return None


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in diags:
        k = (d.code, d.message, d.span)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return sorted(out, key=lambda d: (d.span.line, d.span.col) if d.span else (0, 0))


# -- measurements (`@measured(...)` annotations) ---------------------------------------------------
ANNOTATIONS = ("measured", "acknowledged")


def _measurements(low: Lowered) -> dict:
    out = {}
    for path, call in low.annotations.items():
        if call.name == "acknowledged":
            _acknowledged(path, call, low)
            continue
        if call.name != "measured":
            low.error(
                "E-ANNOTATION",
                f"unknown annotation `@{call.name}`",
                call.span,
                hint=did_you_mean(call.name, ANNOTATIONS) or "annotations: `@measured(…)`, `@acknowledged(…)`",
            )
            continue
        args = value_of(call, low, {})
        args.pop("kind", None)
        out[".".join(map(str, path))] = {k: (float(v) if isinstance(v, Decimal) else v) for k, v in args.items()}
        low.value_spans[("measured", ".".join(map(str, path)))] = call.span
        low.key_spans[("measured", ".".join(map(str, path)))] = call.span
    return out


def _acknowledged(path: tuple, call, low: Lowered) -> None:
    """`@acknowledged(warning = "W-…", reason = "…")`: a registered warning kept knowingly at this value's
    line (``Spec.acknowledge`` matches it to what the build warns)."""
    from muh.codes import CODES

    args = value_of(call, low, {})
    args.pop("kind", None)
    warnings = sorted(c for c in CODES if c.startswith("W-") and c != "W-ACK-UNUSED")
    example = '`@acknowledged(warning = "W-DEPLOY-PARSER", reason = "why the value stays")`'
    unknown = sorted(set(args) - {"warning", "reason"})
    if unknown:
        low.error(
            "E-ANNOTATION",
            f"`@acknowledged` takes `warning` and `reason`, not `{unknown[0]}`",
            call.span,
            hint=f"write {example}",
        )
        return
    code, reason = args.get("warning"), args.get("reason")
    if isinstance(code, str) and code.startswith("E-") and code in CODES:
        low.error(
            "E-ANNOTATION",
            f"`@acknowledged` needs the code of one of muh's warnings, not `{code}`: an error cannot be acknowledged",
            call.span,
            hint="fix what the error says; only warnings (W-…) can be kept",
        )
        return
    if not isinstance(code, str) or code not in warnings:
        low.error(
            "E-ANNOTATION",
            "`@acknowledged` needs the code of one of muh's warnings" + (f", not `{code}`" if code is not None else ""),
            call.span,
            hint=(did_you_mean(str(code), warnings) if isinstance(code, str) else None)
            or f"write {example}; the warnings: docs/diagnostics.md",
        )
        return
    if not isinstance(reason, str) or not reason.strip():
        low.error(
            "E-ANNOTATION",
            f'`@acknowledged(warning = "{code}")` needs its reason',
            call.span,
            hint=f'add `reason = "…"`: why the spec keeps what {code} warns about',
        )
        return
    key = ".".join(map(str, path))
    low.raw.setdefault("acknowledged", {})[key] = {"warning": code, "reason": reason}
    start = low.key_spans.get(path) or call.span
    low.value_spans[("acknowledged", key)] = Span(
        start.file, start.line, start.col, call.span.end_line, call.span.end_col
    )


# -- spaces: ranges expand to lists ----------------------------------------------------------------
def _expand_spaces(low: Lowered) -> None:
    for akey, alg in low.raw["algorithms"].items():
        for skey, space in alg.get("spaces", {}).items():
            values = space.get("values", {})
            for dim, v in list(values.items()):
                path = ("algorithms", akey, "spaces", skey, "values", dim)
                span = low.value_spans.get(path)
                if isinstance(v, RangeValue):
                    values[dim] = _expand_range(v, dim, low, span)
                elif isinstance(v, list):
                    values[dim] = list(v)
                    if not v:
                        low.error("E-SPACE", f"`{dim}` lists no candidates", span)
                else:
                    values[dim] = [v]


def _expand_range(r: RangeValue, dim: str, low: Lowered, span: Span | None) -> list:
    start, stop, step = r.start, r.stop, 1 if r.step is None else r.step
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step)):
        low.error("E-RANGE", "range ends and step must be whole numbers", r.span, hint="write e.g. `128..1024 step 32`")
        return []
    if step <= 0:
        low.error("E-RANGE", f"range step must be positive, got {step}", r.span)
        return []
    if start > stop:
        low.error("E-RANGE", f"empty range {start}..{stop}", r.span, hint=f"did you mean {stop}..{start}?")
        return []
    count = (stop - start) // step + 1
    if count > MAX_SPACE_VALUES:
        low.error("E-RANGE", f"range {start}..{stop} step {step} has {count} values (limit {MAX_SPACE_VALUES})", r.span)
        return []
    return list(range(start, stop + 1, step))


# -- pydantic errors -> diagnostics ----------------------------------------------------------------
def _strip_loc(loc: tuple, raw: dict) -> tuple:
    """Drop pydantic's union/type markers from ``loc``, keeping only keys present in the data."""
    out, node = [], raw
    for el in loc:
        if isinstance(node, dict) and el in node:
            out.append(el)
            node = node[el]
        elif isinstance(node, list) and isinstance(el, int) and 0 <= el < len(node):
            out.append(el)
            node = node[el]
        elif isinstance(node, (dict, list)):
            # a missing key (e.g. a `missing` error) keeps its name; markers are skipped
            if isinstance(node, dict) and not any(isinstance(x, str) and x in node for x in loc[len(out) :]):
                out.append(el)
                break
    return tuple(out)


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The model class whose field ``loc[-1]`` is (to suggest its field names)."""
    cls: object = Spec
    for el in loc[:-1]:
        cls = _step(cls, el)
        if cls is None:
            return None
    return cls if isinstance(cls, type) and issubclass(cls, BaseModel) else None


def _step(cls, el):
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        f = cls.model_fields.get(el) if isinstance(el, str) else None
        return _unwrap(f.annotation) if f else None
    origin = typing.get_origin(cls)
    if origin in (dict, list):
        return _unwrap(typing.get_args(cls)[-1])
    return None


def _unwrap(t):
    while typing.get_origin(t) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(t) if a is not type(None)]
        t = args[0]
    if typing.get_origin(t) is typing.Annotated:
        t = typing.get_args(t)[0]
    return t


def _from_pydantic(err: ValidationError, low: Lowered, raw: dict, prefix: tuple = ()) -> list[Diagnostic]:
    out = []
    seen: set[tuple] = set()
    for e in err.errors():
        loc = _strip_loc(prefix + tuple(e["loc"]), raw)
        if loc in seen and e["type"] not in (
            "extra_forbidden",
            "missing",
        ):  # a union's other members: one value, one error
            continue
        seen.add(loc)
        name = str(loc[-1]) if loc else "?"
        if len(loc) > 1 and isinstance(loc[-1], int):  # a list's entry: named by its list (`accept`, not `0`)
            name = str(loc[-2])
        typ = e["type"]
        value_span = low.value_spans.get(loc) or low.key_spans.get(loc) or _nearest_span(loc, low)
        key_span = low.key_spans.get(loc) or value_span
        call = _call_at(raw, loc[:-1])
        if typ == "extra_forbidden":
            model = _model_at(loc)
            fields = [
                f
                for f in (model.model_fields if model else {})
                if f not in ("name", "on", "file", "sha256", "measured")
            ]
            msg, known = f"unknown key `{name}`", "known keys"
            if call is not None:
                fields = [f for f in fields if f != "kind"]
                msg, known = f"unknown argument `{name}` of `{call}(…)`", f"`{call}` takes"
            out.append(
                Diagnostic(
                    "E-KEY",
                    msg,
                    key_span,
                    hint=did_you_mean(name, fields) or (f"{known}: {', '.join(fields)}" if fields else None),
                )
            )
        elif typ == "missing":
            where = _block_span(loc[:-1], low)
            out.append(
                Diagnostic("E-MISSING", f"`{name}` is required here", where, hint=f"add `{name} = …` to this block")
            )
        elif typ == "literal_error":
            expected = e.get("ctx", {}).get("expected", "")
            given = e.get("input")
            choices = [c.strip().strip("'") for c in expected.replace(" or ", ", ").split(",") if c.strip()]
            what = (
                f"`{loc[-2]}` kind"
                if call is not None and name == "kind" and len(loc) > 1
                else f"entry of `{name}`"
                if isinstance(loc[-1], int)
                else f"`{name}`"
            )
            out.append(
                Diagnostic(
                    "E-ENUM",
                    f"`{given}` is not a valid {what}",
                    value_span,
                    hint=did_you_mean(str(given), choices) or f"choose one of: {', '.join(choices)}",
                )
            )
        elif typ == "too_short":
            least = e.get("ctx", {}).get("min_length", 1)
            what = "a command (the program and its arguments)" if name == "command" else f"at least {least} value"
            example = ' e.g. `command = ["python3", "/workspace/fix.py"]`' if name == "command" else ""
            out.append(
                Diagnostic(
                    "E-VALUE",
                    f"`{name}` is empty: it takes {what}",
                    value_span,
                    hint=f"write{example}" if example else f"give `{name}` a value, or remove it",
                )
            )
        elif (
            typ in ("model_type", "dict_type")
            and isinstance(e.get("input"), str)
            and _model_at(loc) is not None
            and _call_kinds(loc)
        ):
            kinds = _call_kinds(loc)
            given = e.get("input")
            hint = (
                f"write `{name} = {given}()` (a call, even without arguments)"
                if given in kinds
                else did_you_mean(given, kinds) or f"calls: {', '.join(f'{k}(…)' for k in kinds)}"
            )
            out.append(
                Diagnostic(
                    "E-VALUE",
                    f"`{name}` takes a call such as `{kinds[0]}()`, not the bare name `{given}`",
                    value_span,
                    hint=hint,
                )
            )
        elif typ in _STRICT_TYPES and not isinstance(e.get("input"), (Quantity, RangeValue, dict, list)):
            out.append(_wrong_type(name, typ, e.get("input"), low.written(value_span), value_span))
        elif typ in _BOUNDS and not isinstance(e.get("input"), (Quantity, RangeValue)):
            out.append(_out_of_range(name, loc, e, low.written(value_span), value_span))
        elif typ in ("model_type", "dict_type") and not isinstance(e.get("input"), dict):
            out.append(_not_a_block(name, loc, e.get("input"), low.written(value_span), value_span))
        else:
            msg = e["msg"].removeprefix("Value error, ")
            given = e.get("input")
            if isinstance(given, Quantity) and typ.startswith(("int", "bool", "string", "decimal", "float")):
                msg = f"`{name}` takes a plain value, not a quantity with a unit ({given})"
            elif isinstance(given, RangeValue):
                msg = f"`{name}` takes one value; ranges belong in a `space` block"
            elif isinstance(given, list) and typ.endswith("_type"):
                msg = f"`{name}` takes one value, not a list"
            elif isinstance(given, dict) and typ.endswith("_type"):
                msg = f"`{name}` takes one value, not a block"
            else:
                msg = f"`{name}`: {msg}"
            out.append(Diagnostic("E-VALUE", msg, value_span))
    return out


def _nearest_span(loc: tuple, low: Lowered) -> Span | None:
    """The span of the closest enclosing value that has one (a call inside a list: `pre = [step(…)]`)."""
    while loc:
        loc = loc[:-1]
        span = low.value_spans.get(loc)
        if span is not None:
            return span
    return None


def _call_kinds(loc: tuple) -> tuple[str, ...]:
    """The `kind`s of the call model field ``loc`` takes (`delay`: no_delay, fixed, …), else ()."""
    model = _model_at(loc)
    field = model.model_fields.get(str(loc[-1])) if model is not None else None
    target = _unwrap(field.annotation) if field is not None else None
    if not (isinstance(target, type) and issubclass(target, BaseModel) and "kind" in target.model_fields):
        return ()
    return tuple(typing.get_args(_unwrap(target.model_fields["kind"].annotation)))


_BOUNDS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}


def _field_bounds(loc: tuple) -> dict:
    """The bounds (ge, gt, le, lt) a model field puts on its value (a list's: its entries'), from the model."""
    model = _model_at(loc if not isinstance(loc[-1], int) else loc[:-1])
    field = model.model_fields.get(str(loc[-1] if not isinstance(loc[-1], int) else loc[-2])) if model else None
    if field is None:
        return {}
    metas = list(field.metadata)
    t = field.annotation
    while typing.get_origin(t) in (typing.Union, getattr(__import__("types"), "UnionType", None), list):
        t = next(a for a in typing.get_args(t) if a is not type(None))
    if typing.get_origin(t) is typing.Annotated:
        metas += [m for a in typing.get_args(t)[1:] for m in (getattr(a, "metadata", None) or [a])]
    return {k: getattr(m, k) for m in metas for k in ("ge", "gt", "le", "lt") if getattr(m, k, None) is not None}


def _out_of_range(name: str, loc: tuple, e: dict, written: str | None, span: Span | None) -> Diagnostic:
    """`sm_count = 0`: the value is outside the field's bounds (pydantic's "Input should be greater than or
    equal to 1"), said with the whole range and how to write a value in it."""
    bounds = _field_bounds(loc) or dict(e.get("ctx", {}))
    lo = bounds["ge"] if "ge" in bounds else bounds["gt"] + 1 if "gt" in bounds else None
    hi = bounds["le"] if "le" in bounds else bounds["lt"] - 1 if "lt" in bounds else None
    given = written or str(e.get("input"))
    what = f"entries of `{name}` are" if isinstance(loc[-1], int) else f"`{name}` is"
    span_text = (
        f"{lo} … {hi}" if lo is not None and hi is not None else f"at least {lo}" if lo is not None else f"at most {hi}"
    )
    example = lo if lo is not None and (hi is None or e["type"].startswith("greater")) else hi
    return Diagnostic(
        "E-VALUE",
        f"`{name}` = {given} is out of range: {what} {span_text}",
        span,
        hint=f"the nearest value in range: `{name} = {example}`"
        if not isinstance(loc[-1], int)
        else f"the nearest value in range: {example}",
    )


def _not_a_block(name: str, loc: tuple, given, written: str | None, span: Span | None) -> Diagnostic:
    """A block (`env { … }`) or a tagged value (`engine = vllm "0.6.3.post1"`) written as something else:
    said in the language's words, not as pydantic's "valid dictionary or instance of Engine"."""
    model = _model_at(loc)
    field = model.model_fields.get(name) if model is not None else None
    target = _unwrap(field.annotation) if field is not None else None
    shown = written or (f'"{given}"' if isinstance(given, str) else str(given))
    if isinstance(target, type) and issubclass(target, BaseModel) and set(target.model_fields) == {"name", "version"}:
        word = given if isinstance(given, str) and given.isidentifier() else "<name>"
        return Diagnostic(
            "E-VALUE",
            f"`{name}` takes a name and its version, not `{shown}`",
            span,
            hint=f'write `{name} = {word} "<version>"`, e.g. `{name} = vllm "0.6.3.post1"`',
        )
    return Diagnostic(
        "E-VALUE",
        f"`{name}` is a block, not `{shown}`",
        span,
        hint=f"write `{name} {{ key = value … }}`, one setting a line"
        + (f', e.g. `{name} {{ VLLM_LOGGING_LEVEL = "INFO" }}`' if name == "env" else ""),
    )


_STRICT_TYPES = {
    "int_type": "a whole number",
    "bool_type": "`true` or `false`",
    "string_type": "a string",
    "float_type": "a number",
    "decimal_type": "a number",
}


def _wrong_type(name: str, typ: str, given, written: str | None, span: Span | None) -> Diagnostic:
    """`threads = "256"`, `sm_count = 1e3`, `cuda = 10.2`: the value is not of the field's type."""
    want = _STRICT_TYPES[typ]
    shown = written or (
        f'"{given}"' if isinstance(given, str) else str(given).lower() if isinstance(given, bool) else str(given)
    )
    hint = None
    if typ == "int_type":
        if isinstance(given, str) and given.strip().lstrip("-").isdigit():
            hint = f"drop the quotes: `{name} = {given.strip()}`"
        elif isinstance(given, Decimal) and given.is_finite() and given.adjusted() > 40:
            hint = f"`{name}` is far out of range"
        elif isinstance(given, Decimal) and given.is_finite() and given == given.to_integral_value():
            hint = f"write `{name} = {int(given)}`"
        elif isinstance(given, Decimal):
            hint = f"`{name}` counts whole things; round to a whole number"
    elif typ == "string_type" and not isinstance(given, str):
        hint = f'quote it: `{name} = "{written or given}"`'
    elif typ == "bool_type" and isinstance(given, str) and given.lower() in ("true", "false"):
        hint = f"drop the quotes: `{name} = {given.lower()}`"
    return Diagnostic("E-TYPE", f"`{name}` takes {want}, not `{shown}`", span, hint=hint)


def _call_at(raw: dict, loc: tuple) -> str | None:
    """The function name when ``loc`` is a call such as ``backon_jitter(…)`` (lowered to {"kind": …})."""
    node = raw
    for el in loc:
        if isinstance(node, dict) and el in node:
            node = node[el]
        else:
            return None
    return node["kind"] if isinstance(node, dict) and isinstance(node.get("kind"), str) else None


def _block_span(loc: tuple, low: Lowered) -> Span | None:
    while loc:
        if loc in low.key_spans:
            return low.key_spans[loc]
        loc = loc[:-1]
    return None


# -- checks that need the whole typed spec ---------------------------------------------------------
def _element_types(spec: Spec) -> list[Diagnostic]:
    """`type <name> { size, align }`: what a C++ compiler would accept as `struct alignas(A) { char[S]; }`,
    within the sizes muh tunes (up to MAX_TYPE_SIZE)."""
    out = []
    for name, t in spec.types.items():
        base = ("types", name)
        if name in DTYPES or name in policy_key.CLASSES:
            what = (
                f"a built-in element type ({DTYPES[name]} B)"
                if name in DTYPES
                else "the policy key of every user-defined type"
                if name == policy_key.RECORD
                else "the policy key of every built-in type of its size"
            )
            out.append(
                Diagnostic(
                    "E-TYPEDEF",
                    f"`type {name}`: `{name}` is {what}",
                    spec.span_of(base, key=True),
                    hint="give the type another name",
                )
            )
        if t.size > MAX_TYPE_SIZE:
            out.append(
                Diagnostic(
                    "E-TYPEDEF",
                    f"`type {name}`: size = {t.size} B exceeds {MAX_TYPE_SIZE} B",
                    spec.span_of(base + ("size",)),
                    hint=f"muh tunes element types of 1 B … {MAX_TYPE_SIZE} B; pass larger records by index or pointer",
                )
            )
        if t.align & (t.align - 1):
            lo = 1 << (t.align.bit_length() - 1)
            out.append(
                Diagnostic(
                    "E-TYPEDEF",
                    f"`type {name}`: align = {t.align} B is not a power of two",
                    spec.span_of(base + ("align",)),
                    hint=f"use {lo} B or {lo * 2} B",
                )
            )
        elif t.align > t.size:
            out.append(
                Diagnostic(
                    "E-TYPEDEF",
                    f"`type {name}`: align = {t.align} B exceeds size = {t.size} B",
                    spec.span_of(base + ("align",)),
                    hint=f"a type is at least as large as its alignment: use size = {t.align} B or align ≤ {t.size} B",
                )
            )
        elif t.size % t.align:
            up = -(-t.size // t.align) * t.align
            out.append(
                Diagnostic(
                    "E-TYPEDEF",
                    f"`type {name}`: size = {t.size} B is not a multiple of align = {t.align} B",
                    spec.span_of(base + ("size",)),
                    hint=f"C++ pads a type to its alignment: write size = {up} B",
                )
            )
    return out


def _parity_scope(spec: Spec) -> list[Diagnostic]:
    """`parity { out_of_scope = […] }`: each pattern a glob that names cases of one or more families —
    not empty (excuses nothing), not a broken glob (`[[[`: matches nothing), not every family (`*`: the
    parity check would check nothing)."""
    import fnmatch
    import re

    out = []
    families = sorted(FAMILIES)
    example = 'e.g. "scan sm100 * * offset64" or "radix_sort_pairs"'
    for i, pat in enumerate(spec.parity.out_of_scope):
        span = spec.span_of(("parity", "out_of_scope", i))
        words = pat.split()
        problem = None
        if not words:
            problem = f"the pattern {pat!r} is empty: it excuses no case"
        elif re.search(r"\[(?![^\]]*\])", pat):
            problem = (
                f"`{pat}` is not a glob: a `[` opens a character class that is never closed, so it matches no case"
            )
        else:
            hit = [f for f in families if fnmatch.fnmatchcase(f, words[0])]
            if not hit:
                problem = f"`{pat}` matches no case: no family is named `{words[0]}`"
                close = did_you_mean(words[0], families)
                example = close or example
            elif len(hit) == len(families) and len(words) == 1:
                problem = f"`{pat}` excuses every case of every family: the parity check would check nothing"
        if problem:
            out.append(
                Diagnostic(
                    "E-PARITY-SCOPE",
                    problem,
                    span,
                    hint=f"a pattern is `<family> <arch> <type> <op> <offset>` with globs, {example}",
                )
            )
    return out


def _vendor_facts(spec: Spec, hw) -> list[Diagnostic]:
    """The hardware's facts against its vendor's documented limits (muh/schema/vendors.py) and each other."""
    from muh.schema.units import fmt_bytes
    from muh.schema.vendors import VENDORS

    out = []
    base = ("hardware", hw.name)
    vendor = VENDORS[hw.vendor]
    if hw.warp_size not in vendor.warp_sizes:
        others = [v for v, f in VENDORS.items() if hw.warp_size in f.warp_sizes]
        out.append(
            Diagnostic(
                "E-HARDWARE",
                f"warp_size = {hw.warp_size}: no {hw.vendor} GPU has a {hw.warp_size}-lane warp "
                f"({hw.vendor}'s: {', '.join(map(str, vendor.warp_sizes))})",
                spec.span_of(base + ("warp_size",)),
                hint=(
                    f"a {hw.warp_size}-lane card is {' or '.join(others)}'s: write `vendor = {others[0]}`"
                    if others
                    else f"write warp_size = {vendor.warp_sizes[0]}"
                )
                + f" ({hw.vendor}: {vendor.warp_source})",
            )
        )
    if hw.launch_latency is not None and hw.launch_latency <= 0:
        out.append(
            Diagnostic(
                "E-HARDWARE",
                "launch_latency = 0: no kernel launches in no time",
                spec.span_of(base + ("launch_latency",)),
                hint="write the measured time of an empty kernel's launch (e.g. `6.2 us`; `muh probe` "
                "measures it), or leave launch_latency out",
            )
        )
    if vendor.max_threads_per_block is not None and hw.max_threads_per_block > vendor.max_threads_per_block:
        out.append(
            Diagnostic(
                "E-HARDWARE",
                f"max_threads_per_block = {hw.max_threads_per_block} exceeds {hw.vendor}'s "
                f"limit of {vendor.max_threads_per_block} threads per block",
                spec.span_of(base + ("max_threads_per_block",)),
                hint=f"{vendor.source}; write max_threads_per_block = {vendor.max_threads_per_block}",
            )
        )
    if hw.smem_per_block_optin is not None and hw.smem_per_block_optin < hw.smem_per_block:
        out.append(
            Diagnostic(
                "E-HARDWARE",
                f"smem_per_block_optin = {fmt_bytes(hw.smem_per_block_optin)} is less than "
                f"smem_per_block = {fmt_bytes(hw.smem_per_block)}",
                spec.span_of(base + ("smem_per_block_optin",)),
                hint="the opt-in amount is what a block may use beyond the default: at least "
                "smem_per_block (remove it when the card has no opt-in)",
            )
        )
    return out


def _cccl_agreement(spec: Spec) -> list[Diagnostic]:
    """Every NVIDIA hardware of the spec builds with one CCCL version (``toolchain { cccl }``, unset: the
    default): muh emits one form of CUB policies per spec (hubs for 3.0, selectors for 3.5)."""
    from muh.schema.models import CCCL_DEFAULT

    nvidia = [h for _, h in sorted(spec.hardware.items()) if h.vendor == "nvidia"]
    if not nvidia:
        return []
    first = next((h for h in nvidia if h.toolchain.cccl), nvidia[0])
    want = first.toolchain.cccl or CCCL_DEFAULT
    out = []
    for hw in nvidia:
        have = hw.toolchain.cccl or CCCL_DEFAULT
        if have != want:
            said = f'cccl = "{have}"' if hw.toolchain.cccl else f'no cccl (the default, "{CCCL_DEFAULT}")'
            out.append(
                Diagnostic(
                    "E-VALUE",
                    f'hardware `{hw.name}` has {said} but `{first.name}` has cccl = "{want}": muh writes one '
                    "form of CUB policies per spec, for one CCCL version",
                    spec.span_of(("hardware", hw.name, "toolchain", "cccl"))
                    or spec.span_of(("hardware", hw.name, "toolchain")),
                    hint=f'write cccl = "{want}" in the toolchain of every NVIDIA hardware',
                )
            )
    return out


def _semantic(spec: Spec, low: Lowered) -> list[Diagnostic]:
    out: list[Diagnostic] = _element_types(spec) + _parity_scope(spec)
    known = spec.element_sizes()
    for hw in spec.hardware.values():
        out.extend(_vendor_facts(spec, hw))
        if not limits.whole_warps(hw.max_threads_per_block, hw.warp_size):
            out.append(
                Diagnostic(
                    "E-WARP",
                    f"max_threads_per_block = {hw.max_threads_per_block} "
                    f"is not a multiple of warp_size = {hw.warp_size}",
                    spec.span_of(("hardware", hw.name, "max_threads_per_block")),
                )
            )
    out.extend(_cccl_agreement(spec))
    for akey, alg in spec.algorithms.items():
        hw = spec.hardware[alg.on]
        fam = FAMILIES[alg.family]
        base = ("algorithms", akey)
        for i, t in enumerate(alg.types):
            if t not in known:
                out.append(
                    Diagnostic(
                        "E-TYPE",
                        f"unknown element type `{t}`",
                        spec.span_of(base + ("types", i)),
                        hint=did_you_mean(t, known)
                        or f"types: {', '.join(known)}; or declare it: `type {t} {{ size = 16 B  align = 8 B }}`",
                    )
                )
        if alg.values and not fam.key_value:
            out.append(
                Diagnostic(
                    "E-VALUES",
                    f"`{alg.family}` has no values of their own: `values` is for by-key families",
                    spec.span_of(base + ("values",), key=True),
                    hint="remove `values = […]`; by-key families: "
                    + ", ".join(f for f, v in FAMILIES.items() if v.key_value),
                )
            )
        for i, t in enumerate(alg.values):
            if t not in known:
                out.append(
                    Diagnostic(
                        "E-TYPE",
                        f"unknown value type `{t}`",
                        spec.span_of(base + ("values", i)),
                        hint=did_you_mean(t, known)
                        or f"types: {', '.join(known)}; or declare it: `type {t} {{ size = 16 B  align = 8 B }}`",
                    )
                )
        if "default" not in alg.policies:
            out.append(
                Diagnostic(
                    "E-DEFAULT",
                    f"`algorithm {alg.family} on {alg.on}` has no `policy default`",
                    spec.span_of(base),
                    hint="add `policy default { … }`; typed policies inherit from it",
                )
            )
        for pkey, pol in alg.policies.items():
            ppath = base + ("policies", pkey)
            out.extend(_policy_key(pkey, spec.span_of(ppath, key=True), known, fam.key_value, alg.family))
            for sub, sv in pol.subs.items():
                if sub not in fam.subs:
                    out.append(
                        Diagnostic(
                            "E-SUB",
                            f"`{alg.family}` has no sub-policy `{sub}`",
                            spec.span_of(ppath + ("subs", sub), key=True),
                            hint=did_you_mean(sub, fam.subs)
                            or (
                                f"sub-policies: {', '.join(fam.subs)}"
                                if fam.subs
                                else f"`{alg.family}` has no sub-policies"
                            ),
                        )
                    )
                out.extend(_policy_dims(sv.given(), alg.family, hw, spec, ppath + ("subs", sub)))
            out.extend(_policy_dims(pol.given(), alg.family, hw, spec, ppath))
            out.extend(_cub_agreement(pol, alg.family, hw, spec, ppath))
            out.extend(_buckets(pkey, pol, alg, hw, spec, ppath, low.broken))
        for skey, space in alg.spaces.items():
            spath = base + ("spaces", skey)
            if skey != "default":
                out.extend(_policy_key(skey, spec.span_of(spath, key=True), known, fam.key_value, alg.family))
            for name, cands in space.values.items():
                vpath = spath + ("values", name)
                sd = sub_dim(name)
                if sd is not None and sd[0] not in fam.subs:
                    out.append(
                        Diagnostic(
                            "E-SUB",
                            f"`{alg.family}` has no sub-policy `{sd[0]}` (space dimension `{name}`)",
                            spec.span_of(vpath, key=True),
                            hint=(
                                (did_you_mean(sd[0], fam.subs) or f"sub-policies: {', '.join(fam.subs)}")
                                if fam.subs
                                else f"`{alg.family}` has no sub-policies"
                            ),
                        )
                    )
                    continue
                dim = sd[1] if sd else name
                if dim not in fam.dims:
                    out.append(_not_tunable(name, alg.family, spec.span_of(vpath, key=True)))
                    continue
                d = DIMS[dim]
                for c in cands:
                    if d.kind == "enum" and c not in enum_choices(alg.family, dim):
                        out.append(
                            Diagnostic(
                                "E-ENUM",
                                f"`{c}` is not a valid `{dim}` for {alg.family}",
                                spec.span_of(vpath),
                                hint=did_you_mean(str(c), enum_choices(alg.family, dim))
                                or f"choose from: {', '.join(enum_choices(alg.family, dim))}",
                            )
                        )
                        break
                    if d.kind == "int" and (not isinstance(c, int) or isinstance(c, bool) or c < (d.lo or 1)):
                        out.append(
                            Diagnostic(
                                "E-SPACE",
                                f"`{dim}` candidates must be whole numbers ≥ {d.lo or 1}, got {c}",
                                spec.span_of(vpath),
                            )
                        )
                        break
    return out


def _buckets(pkey: str, pol, alg, hw, spec: Spec, ppath: tuple, broken: set = frozenset()) -> list[Diagnostic]:
    """A policy's size buckets: allowed where they are, ascending, disjoint, covering every size; each
    bucket's values checked like any policy's. ``broken``: buckets whose bounds lowering reported (their
    order is not checked: it would only repeat that error)."""
    if not pol.buckets:
        return []
    out: list[Diagnostic] = []
    span = lambda i: spec.span_of(ppath + ("buckets", i), key=True)  # noqa: E731
    if hw.cub_parity:
        return [
            Diagnostic(
                "E-BUCKET",
                f"`{hw.name}` is a CUB parity target (`cub_parity = true`): its policies "
                "are CUB's, one per type, without size buckets",
                span(0),
                hint="write the size-dependent policy on a hardware of your own",
            )
        ]
    if pkey == "default":
        return [
            Diagnostic(
                "E-BUCKET",
                "`policy default` cannot hold size buckets",
                span(0),
                hint="write them in the policy of an element type, e.g. `policy float64 { when … }`",
            )
        ]
    bs = pol.buckets
    from muh.families import registry

    rec = registry.find(alg.family)
    accepted = rec.buckets_by if rec else ()
    first = next((b for b in bs if not accepted or b.size in accepted), bs[0])
    for i, b in enumerate(bs):
        at = spec.span_of(ppath + ("buckets", i, "size"), key=True)
        if accepted and b.size not in accepted:
            out.append(
                Diagnostic(
                    "E-BUCKET",
                    f"a bucket of `{alg.family}` cannot test `{b.size}`",
                    at,
                    hint=did_you_mean(b.size, accepted) or f"{alg.family}'s buckets test: " + ", ".join(accepted),
                )
            )
        elif b.size != first.size:
            out.append(
                Diagnostic(
                    "E-BUCKET",
                    f"bucket `{b.label}` tests `{b.size}`, bucket `{first.label}` of the "
                    f"same policy tests `{first.size}`: a policy's buckets test one size",
                    at,
                    hint=f"write every bucket of `policy {pkey}` with `{first.size}` (or every one with `{b.size}`)",
                )
            )
    if out:
        return out
    size = bs[0].size
    unordered = any(ppath + ("buckets", i) in broken for i in range(len(bs)))
    for i, b in enumerate(bs):
        out.extend(_policy_dims(b.given(), alg.family, hw, spec, ppath + ("buckets", i)))
        if i == 0 or unordered:
            continue
        prev = bs[i - 1]
        if b.lo < prev.lo:
            out.append(
                Diagnostic(
                    "E-BUCKET",
                    f"bucket `{b.label}` comes after `{prev.label}`: buckets go from small sizes to large",
                    span(i),
                    hint=f"move it before `{prev.label}`",
                )
            )
        elif prev.hi is None or b.lo < prev.hi:
            both = f"{pow2_text(b.lo)}..{pow2_text(prev.hi) if prev.hi is not None else '∞'}"
            out.append(
                Diagnostic(
                    "E-BUCKET",
                    f"bucket `{b.label}` overlaps `{prev.label}` (sizes {both} in both)",
                    span(i),
                    hint=f"start it at {pow2_text(prev.hi)}"
                    if prev.hi is not None
                    else "a bucket without an upper bound must be the last",
                )
            )
        elif b.lo > prev.hi:
            out.append(
                Diagnostic(
                    "E-BUCKET",
                    f"sizes {pow2_text(prev.hi)}..{pow2_text(b.lo)} fall in no bucket "
                    f"(between `{prev.label}` and `{b.label}`)",
                    span(i),
                    hint=f"start `{b.label}` at {pow2_text(prev.hi)}, or add a bucket for them",
                )
            )
    if out or unordered:
        return out
    if bs[0].lo > 0:
        out.append(
            Diagnostic(
                "E-BUCKET",
                f"sizes below {pow2_text(bs[0].lo)} fall in no bucket",
                span(0),
                hint=f"add `when {size} < {pow2_text(bs[0].lo)} {{ }}` (empty: the policy's own values)",
            )
        )
    if bs[-1].hi is not None:
        out.append(
            Diagnostic(
                "E-BUCKET",
                f"sizes from {pow2_text(bs[-1].hi)} up fall in no bucket",
                span(len(bs) - 1),
                hint=f"add `when {size} >= {pow2_text(bs[-1].hi)} {{ }}` (empty: the policy's own values)",
            )
        )
    return out


def _policy_key(
    key: str, span: Span | None, known=DTYPES, key_value: bool = True, family: str = ""
) -> list[Diagnostic]:
    parsed, problems = policy_key.parse(key, known)
    if parsed is not None and parsed.value is not None and not key_value:
        return [
            Diagnostic(
                "E-POLICYKEY",
                f"`{family}` has no values: policy key `{key}` names a value type (`{parsed.value}`)",
                span,
                hint=f"write `{'.'.join(p for p in key.split('.') if p != parsed.value)}`; value types "
                "are for by-key families: " + ", ".join(f for f, v in FAMILIES.items() if v.key_value),
            )
        ]
    return [
        Diagnostic("E-POLICYKEY", msg, span, hint=did_you_mean(key.split(".")[0], known) or hint)
        if i == 0 and msg.endswith("is not an element type")
        else Diagnostic("E-POLICYKEY", msg, span, hint=hint)
        for i, (msg, hint) in enumerate(problems)
    ]


def _not_tunable(dim: str, family: str, span: Span | None) -> Diagnostic:
    dims = FAMILIES[family].dims
    hint = did_you_mean(dim, dims) or f"{family} tunes: {', '.join(dims)}"
    if dim == "load" and "modifier" in dims and "load" not in dims:
        hint = "ldg and friends are cache modifiers here: write `modifier = ldg`"
    return Diagnostic("E-DIM", f"`{dim}` is not tunable for {family}", span, hint=hint)


def policy_problems(given: dict, family: str, hw, spec: Spec, path: tuple) -> list[Diagnostic]:
    """What validate says of one policy's values on ``hw`` (also `muh tune`'s check of a candidate)."""
    return _policy_dims(given, family, hw, spec, path)


def candidate_problems(pol, family: str, hw, spec: Spec, path: tuple) -> list[Diagnostic]:
    """What validate says of a whole policy block on ``hw``: its values, its sub-policies' and the rules of
    CUB's agents (``_cub_agreement``) — `muh tune --implementation cub`'s check of a candidate."""
    out = []
    for sub, sv in pol.subs.items():
        out.extend(_policy_dims(sv.given(), family, hw, spec, path + ("subs", sub)))
    out.extend(_policy_dims(pol.given(), family, hw, spec, path))
    out.extend(_cub_agreement(pol, family, hw, spec, path))
    return out


def _policy_dims(given: dict, family: str, hw, spec: Spec, path: tuple) -> list[Diagnostic]:
    out = []
    fam = FAMILIES[family]
    for dim, v in given.items():
        span = spec.span_of(path + (dim,))
        if dim not in fam.dims:
            out.append(_not_tunable(dim, family, spec.span_of(path + (dim,), key=True)))
            continue
        if dim == "block" and v not in enum_choices(family, "block"):
            out.append(
                Diagnostic(
                    "E-ENUM",
                    f"`{v}` is not a block algorithm of {family}",
                    span,
                    hint=did_you_mean(v, enum_choices(family, "block"))
                    or f"choose from: {', '.join(enum_choices(family, 'block'))}",
                )
            )
    threads = given.get("threads")
    if threads is not None:
        span = spec.span_of(path + ("threads",))
        held = limits.applying(hw.cub_parity, fam.stages_tile)  # the tile is derive's: after scaling
        if "warp" in held and not limits.whole_warps(threads, hw.warp_size):
            lo, hi = limits.warp_neighbours(threads, hw.warp_size)
            out.append(
                Diagnostic(
                    "E-WARP",
                    f"threads = {threads} is not a multiple of warp_size = {hw.warp_size} on `{hw.name}`",
                    span,
                    hint=f"use {lo} or {hi}",
                )
            )
        if "block" in held and not limits.block_fits(threads, hw.max_threads_per_block):
            out.append(
                Diagnostic(
                    "E-THREADS",
                    f"threads = {threads} exceeds max_threads_per_block = {hw.max_threads_per_block} on `{hw.name}`",
                    span,
                )
            )
    return out + _cub_agent(given, family, hw, spec, path)


def runs_cub(family: str, hw) -> bool:
    """Whether ``family``'s policies on ``hw`` reach CUB's own agents: CUB tunes the family (its CUB table)
    and the hardware is NVIDIA's with a compute capability, so `muh build` emits a policy hub for it
    (include/muh/cub/<family>.cuh) that CUB's dispatch instantiates its agent policies from."""
    return FAMILIES[family].cub is not None and hw.vendor == "nvidia" and bool(hw.compute_capability)


def _cub_agent(given: dict, family: str, hw, spec: Spec, path: tuple) -> list[Diagnostic]:
    """The values CUB 3.0's agents cannot take, where the family's hub hands them to CUB: an enumerated
    value with no CUB counterpart in that agent (muh/families/cub.py ``cub_choices``) and, on CUB-parity
    hardware too, threads that are not whole warps (CUB's warp-level loads, stores and ranks assume them)."""
    if not runs_cub(family, hw):
        return []
    out = []
    sub = path[-1] if len(path) >= 2 and path[-2] == "subs" else None
    block_enum = "block_reduce_algorithm" if FAMILIES[family].block_choices == BLOCK_REDUCE else "block_scan_algorithm"
    where = f"{family}{'.' + sub if sub else ''} on `{hw.name}`"
    for dim, v in given.items():
        choices = cub_choices(family, dim, block_enum, sub)
        if choices is not None and isinstance(v, str) and v not in choices:
            out.append(
                Diagnostic(
                    "E-ENUM",
                    f"`{v}` is not a `{dim}` CUB's agent can take in {where}: its generated hub runs CUB's "
                    f"kernels (include/muh/cub/{family}.cuh)",
                    spec.span_of(path + (dim,)),
                    hint=f"CUB 3.0 takes: {', '.join(choices)}",
                )
            )
        elif choices is not None and isinstance(v, str) and (family, dim, v) in WRONG_IN_CUB:
            out.append(
                Diagnostic(
                    "E-ENUM",
                    f"`{dim} = {v}` in {where}: {WRONG_IN_CUB[family, dim, v]} (its generated hub runs CUB's "
                    f"kernels, include/muh/cub/{family}.cuh)",
                    spec.span_of(path + (dim,)),
                    hint=f"use one of: {', '.join(c for c in choices if (family, dim, c) not in WRONG_IN_CUB)}",
                )
            )
        elif (family, dim) in CUB_NUMBERS and isinstance(v, int) and v not in CUB_NUMBERS[family, dim][0]:
            takes, why = CUB_NUMBERS[family, dim]
            out.append(
                Diagnostic(
                    "E-VALUE",
                    f"`{dim} = {v}` in {where}: {why} (its generated hub runs CUB's kernels, "
                    f"include/muh/cub/{family}.cuh)",
                    spec.span_of(path + (dim,)),
                    hint=f"use one of: {', '.join(map(str, takes))}",
                )
            )
    threads = given.get("threads")
    if threads is not None and hw.cub_parity and not limits.whole_warps(threads, hw.warp_size):
        lo, hi = limits.warp_neighbours(threads, hw.warp_size)
        out.append(
            Diagnostic(
                "E-WARP",
                f"threads = {threads} is not a multiple of warp_size = {hw.warp_size} in {where}: CUB's agents "
                "run whole warps (its generated hub runs CUB's kernels)",
                spec.span_of(path + ("threads",)),
                hint=f"use {lo} or {hi}",
            )
        )
    return out


def _cub_agreement(pol, family: str, hw, spec: Spec, ppath: tuple) -> list[Diagnostic]:
    """Sub-policy values CUB holds as one member (muh/families/cub.py ``AGREE``) must agree within a policy
    (a sub-policy's value, else the policy's own) where the family's hub hands them to CUB."""
    if not runs_cub(family, hw):
        return []
    out = []
    top = pol.given()
    for group, why in AGREE.get(family, ()):
        seen = []
        for sub, dim in group:
            sv = pol.subs.get(sub)
            given = sv.given() if sv is not None else {}
            if dim in given:
                seen.append((f"{sub}.{dim}", given[dim], ppath + ("subs", sub, dim)))
            elif dim in top:
                seen.append((f"{sub}.{dim}", top[dim], ppath + (dim,)))
        if len({v for _, v, _ in seen}) > 1:
            first, *rest = seen
            other = next(s for s in rest if s[1] != first[1])
            out.append(
                Diagnostic(
                    "E-VALUE",
                    f"{other[0]} = {other[1]} differs from {first[0]} = {first[1]} in {family} on `{hw.name}`: {why}",
                    spec.span_of(other[2]),
                    hint=f"give both the same value ({first[1]} or {other[1]})",
                )
            )
    return out


__all__ = ["load", "from_module", "Measured"]
