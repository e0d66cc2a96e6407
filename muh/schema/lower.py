"""Lower the syntax tree into plain values shaped like ``Spec``, with a table from path to span.

Structural mistakes that pydantic cannot see (unknown block kinds, duplicate keys, a reference that
points nowhere) become diagnostics here; everything else is left to the typed models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from muh.diagnostics import Diagnostic, Span, did_you_mean
from muh.families.base import BUCKET_SIZES
from muh.grammar import ast
from muh.grammar.parser import keywords
from muh.schema.catalog import FAMILIES
from muh.schema.units import Quantity

TOP_KINDS = ("hardware", "type", "algorithm", "deploy", "parity")
LANGUAGE_VERSIONS = (1,)


@dataclass(frozen=True)
class RangeValue:
    start: object
    stop: object
    step: object
    span: Span


@dataclass
class Lowered:
    raw: dict
    value_spans: dict[tuple, Span] = field(default_factory=dict)
    key_spans: dict[tuple, Span] = field(default_factory=dict)
    annotations: dict[tuple, ast.Call] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)
    source: str = ""  # the spec's text (to quote a value as it was written)
    orphans: dict = field(default_factory=dict)  # blocks `on` unknown hardware: validated alone, for their own errors
    broken: set = field(default_factory=set)  # paths of buckets whose bounds were reported (not ordered against others)

    def written(self, span: Span | None) -> str | None:
        """The text at ``span`` (one line), or None."""
        if span is None or span.line != span.end_line:
            return None
        lines = self.source.splitlines()
        return lines[span.line - 1][span.col - 1 : span.end_col - 1] if 0 < span.line <= len(lines) else None

    def error(self, code: str, msg: str, span: Span | None, hint: str | None = None) -> None:
        self.diags.append(Diagnostic(code, msg, span, hint))


def value_of(v: ast.Value, low: Lowered, refs: dict, path: tuple | None = None) -> object:
    """Plain Python value of a syntax node (references resolved through ``refs``). With ``path``,
    the spans of a call's arguments and a list's items are recorded under it, so that an error
    inside ``fixed(ns = 952)`` points at ``952``."""
    if isinstance(v, ast.Number):
        if v.unit:
            return Quantity(v.value, v.unit)
        return (
            int(v.value)
            if v.value == v.value.to_integral_value() and "." not in v.text and "e" not in v.text.lower()
            else v.value
        )
    if isinstance(v, (ast.Str, ast.Bool)):
        return v.value
    if isinstance(v, ast.Ident):
        if len(v.path) == 1:
            return v.path[0]
        return _resolve_ref(v, low, refs)
    if isinstance(v, ast.ListV):
        if path is not None:
            for i, item in enumerate(v.items):
                low.value_spans[path + (i,)] = item.span
        return [value_of(i, low, refs) for i in v.items]
    if isinstance(v, ast.Range):
        step = value_of(v.step, low, refs) if v.step is not None else None
        return RangeValue(value_of(v.start, low, refs), value_of(v.stop, low, refs), step, v.span)
    if isinstance(v, ast.Call):
        out: dict = {"kind": v.name}
        if path is not None:
            name_span = Span(v.span.file, v.span.line, v.span.col, v.span.line, v.span.col + len(v.name))
            low.value_spans[path + ("kind",)] = low.key_spans[path + ("kind",)] = name_span
            for a in v.args:
                if a.name is not None:
                    low.value_spans[path + (a.name,)] = a.value.span
                    low.key_spans[path + (a.name,)] = Span(
                        a.span.file, a.span.line, a.span.col, a.span.line, a.span.col + len(a.name)
                    )
        for a in v.args:
            if a.name is None:
                low.error("E-ARG", f"arguments of `{v.name}(…)` are named: write `{v.name}(name = value)`", a.span)
            elif a.name in out:
                low.error("E-DUP", f"argument `{a.name}` given twice", a.span)
            else:
                out[a.name] = value_of(a.value, low, refs)
        return out
    if isinstance(v, ast.Tagged):
        return {"name": v.tag, "version": v.value.value}
    raise AssertionError(f"unknown node {type(v).__name__}")  # pragma: no cover


def _resolve_ref(v: ast.Ident, low: Lowered, refs: dict) -> object:
    head, *rest = v.path
    if head not in refs:
        low.error(
            "E-REF",
            f"unknown reference `{v.name}`",
            v.span,
            hint=did_you_mean(head, refs)
            or f"references start with one of: {', '.join(sorted(refs)) or '(none here)'}",
        )
        return None
    node = refs[head]
    for i, part in enumerate(rest):
        if not isinstance(node, dict) or part not in node:
            keys = node.keys() if isinstance(node, dict) else ()
            low.error(
                "E-REF",
                f"`{'.'.join(v.path[: i + 2])}` does not exist",
                v.span,
                hint=did_you_mean(part, keys)
                or (f"`{'.'.join(v.path[: i + 1])}` has: {', '.join(sorted(keys))}" if keys else None),
            )
            return None
        node = node[part]
    return node


def _members(block_members, path: tuple, low: Lowered, refs: dict, *, allow_blocks: bool, block_key=None) -> dict:
    """Assignments (dotted keys nest) and, if allowed, nested blocks, as a dict."""
    out: dict = {}
    for m in block_members:
        if isinstance(m, ast.Assign):
            target = out
            for i, part in enumerate(m.key[:-1]):
                sub_path = path + m.key[: i + 1]
                node = target.setdefault(part, {})
                if not isinstance(node, dict):
                    low.error("E-DUP", f"`{'.'.join(m.key[: i + 1])}` is already a value", m.key_span)
                    break
                low.key_spans.setdefault(sub_path, m.key_span)
                target = node
            else:
                last = m.key[-1]
                full = path + m.key
                if last in target:
                    low.error(
                        "E-DUP",
                        f"`{m.name}` is set twice",
                        m.key_span,
                        hint=f"first set at line {low.key_spans[full].line}" if full in low.key_spans else None,
                    )
                    continue
                target[last] = value_of(m.value, low, refs, full)
                low.value_spans[full] = m.value.span
                low.key_spans[full] = m.key_span
                if m.annotation is not None:
                    low.annotations[full] = m.annotation
        else:
            if m.condition is not None:
                low.error(
                    "E-BUCKET",
                    "size buckets belong directly in a `policy` block",
                    m.kind_span,
                    hint="write `policy <type> { … when elements >= 2^24 { … } }`",
                )
                continue
            if not allow_blocks:
                low.error("E-BLOCK", f"`{m.kind}` blocks are not allowed here", m.kind_span)
                continue
            key = block_key(m) if block_key else m.kind
            if key is None:
                continue
            full = path + (key,)
            if key in out:
                low.error("E-DUP", f"block `{key}` appears twice", m.kind_span)
                continue
            low.key_spans[full] = m.label_span or m.kind_span
            low.value_spans[full] = m.span
            out[key] = _members(m.members, full, low, refs, allow_blocks=True)
    return out


def _hardware(b: ast.Block, low: Lowered) -> None:
    path = ("hardware", b.label)
    body = _members(b.members, path, low, {}, allow_blocks=True)
    body["name"] = b.label
    low.raw["hardware"][b.label] = body
    low.key_spans[path] = b.label_span
    low.value_spans[path] = b.span


def _type(b: ast.Block, low: Lowered) -> None:
    """`type <name> { size = …  align = … }`: a user-defined element type (checked in validate)."""
    path = ("types", b.label)
    if b.label in low.raw["types"]:
        low.error("E-DUP", f"`type {b.label}` appears twice", b.label_span)
        return
    body = _members(b.members, path, low, {}, allow_blocks=False)
    body["name"] = b.label
    low.raw["types"][b.label] = body
    low.key_spans[path] = b.label_span
    low.value_spans[path] = b.span


def _algorithm(b: ast.Block, low: Lowered, orphan: bool = False) -> None:
    family = b.label
    if family not in FAMILIES:
        low.error(
            "E-FAMILY",
            f"unknown algorithm `{family}`",
            b.label_span,
            hint=did_you_mean(family, FAMILIES) or "see `muh schema` or docs/language.md for the algorithm families",
        )
        return
    key = f"{family}@{b.target}"
    path = ("algorithms", key)
    if not orphan and key in low.raw["algorithms"]:
        low.error("E-DUP", f"`algorithm {family} on {b.target}` appears twice", b.label_span)
        return
    refs = {"hardware": low.raw["hardware"].get(b.target, {})}
    body: dict = {"family": family, "on": b.target, "policies": {}, "spaces": {}}
    low.value_spans[path] = b.span
    low.key_spans[path] = b.label_span
    low.value_spans[path + ("on",)] = b.target_span
    for m in b.members:
        if isinstance(m, ast.Assign):
            if m.key in (("types",), ("values",)):
                body[m.key[0]] = value_of(m.value, low, refs, path + m.key)
                low.value_spans[path + m.key] = m.value.span
                low.key_spans[path + m.key] = m.key_span
            else:
                low.error(
                    "E-KEY",
                    f"unknown key `{m.name}` in an algorithm block",
                    m.key_span,
                    hint=did_you_mean(m.name, ["types", "values"])
                    or "an algorithm holds `policy <key> { … }`, "
                    "`space { … }`, `types = […]` and (by-key families) `values = […]`",
                )
            continue
        if m.kind not in ("policy", "space"):
            low.error(
                "E-BLOCK",
                f"unknown block `{m.kind}` in an algorithm",
                m.kind_span,
                hint=did_you_mean(m.kind, ["policy", "space"]) or "an algorithm holds `policy` and `space` blocks",
            )
            continue
        if m.kind == "policy" and m.label is None:
            low.error(
                "E-BLOCK", "a policy needs a key: `policy default { … }` or `policy float32.plus { … }`", m.kind_span
            )
            continue
        label = m.label or "default"
        group = "policies" if m.kind == "policy" else "spaces"
        full = path + (group, label)
        if label in body[group]:
            low.error("E-DUP", f"`{m.kind} {label}` appears twice", m.label_span or m.kind_span)
            continue
        low.key_spans[full] = m.label_span or m.kind_span
        low.value_spans[full] = m.span
        if m.kind == "policy":
            values = _members(_policy_members(m.members), full, low, refs, allow_blocks=False)
            for i, when in enumerate(b for b in m.blocks() if b.condition is not None):
                bpath = full + ("buckets", i)
                low.key_spans[bpath] = when.condition.span
                low.value_spans[bpath] = when.span
                bucket = _members(when.members, bpath, low, refs, allow_blocks=False)
                bucket.update(_bounds(when.condition, low, bpath))
                values.setdefault("buckets", []).append(bucket)
            for sub in (b for b in m.blocks() if b.condition is None):
                sub_path = full + ("subs", sub.kind)
                low.key_spans[sub_path] = sub.kind_span
                low.value_spans[sub_path] = sub.span
                values.setdefault("subs", {})[sub.kind] = _members(sub.members, sub_path, low, refs, allow_blocks=False)
            body[group][label] = values
        else:
            vals = _members(m.members, full + ("values",), low, refs, allow_blocks=False)
            body[group][label] = {"values": _flat_dims(vals, full + ("values",), low)}
    if orphan:
        low.orphans.setdefault("algorithms", {})[key] = body
    else:
        low.raw["algorithms"][key] = body


def _flat_dims(values: dict, path: tuple, low: Lowered) -> dict:
    """A `space` block's dimensions with a sub-policy's dotted ones (``onesweep.threads = [...]``, which
    nest as assignments do) as one key ``onesweep.threads`` (muh/tune/space.py SUB), spans re-keyed."""
    out: dict = {}
    for k, v in values.items():
        if isinstance(v, dict) and path + (k,) not in low.value_spans:  # a dotted key's node, not a value
            for k2, v2 in _flat_dims(v, path + (k,), low).items():
                name = f"{k}.{k2}"
                for spans in (low.value_spans, low.key_spans):
                    if path + (k, k2) in spans:
                        spans[path + (name,)] = spans[path + (k, k2)]
                out[name] = v2
        else:
            out[k] = v
    return out


def _bounds(c: ast.Condition, low: Lowered, path: tuple) -> dict:
    """``{size, lo, hi}`` of a bucket's condition (half-open [lo, hi); hi None: unbounded). Which sizes a
    bucket may test is the family's (its record's ``buckets_by``): validate checks ``size``."""
    low.key_spans[path + ("size",)] = c.size_span
    ends = [c.bound.start, c.bound.stop] if isinstance(c.bound, ast.Range) else [c.bound]
    if isinstance(c.bound, ast.Range) and c.bound.step is not None:
        low.error(
            "E-BUCKET",
            "a bucket's range takes no `step`",
            c.bound.step.span,
            hint=f"write `when {c.size} in 2^16..2^24 {{ … }}`",
        )
    vals = []
    for n in ends:
        ok = n.unit is None and n.value == n.value.to_integral_value() and n.value >= 0 and "." not in n.text
        if not ok:
            what = "an element count" if c.size == "elements" else f"a `{c.size}` (a whole number)"
            low.error(
                "E-BUCKET",
                f"`{n}` is not {what}",
                n.span,
                hint="sizes are whole numbers without a unit, e.g. `2^24` or `16777216`",
            )
        size = BUCKET_SIZES.get(c.size)  # an unknown size is validate's to report (the family's sizes)
        if ok and size is not None and n.value > size.max:
            low.error(
                "E-BUCKET",
                f"`{n}` is more than any `{c.size}` can be: the kernels hold it as `{size.ctype}`, "
                f"at most 2^{size.max_exp} - 1",
                n.span,
                hint=f"the last bucket covers every larger size: end the buckets with `when {c.size} >= n`, "
                f"n below 2^{size.max_exp}",
            )
            ok = False
        vals.append(int(n.value) if ok else None)
    if None in vals:
        low.broken.add(path)
        return {"size": c.size, "lo": 0}  # reported above
    if c.op == "<":
        return {"size": c.size, "lo": 0, "hi": max(vals[0], 1)} if vals[0] >= 1 else _empty(c, low)
    if c.op == ">=":
        return {"size": c.size, "lo": vals[0]}
    if vals[1] <= vals[0]:
        return _empty(c, low)
    return {"size": c.size, "lo": vals[0], "hi": vals[1]}


def _empty(c: ast.Condition, low: Lowered) -> dict:
    low.error(
        "E-BUCKET",
        f"bucket `{c}` holds no size",
        c.span,
        hint="a range `a..b` holds a ≤ size < b, so b must be larger than a",
    )
    return {"size": c.size, "lo": 0, "hi": 1}


def _policy_members(members):
    return [m for m in members if isinstance(m, ast.Assign)]


def _deploy(b: ast.Block, low: Lowered, orphan: bool = False) -> None:
    path = ("deploys", b.label)
    if not orphan and b.label in low.raw["deploys"]:
        low.error("E-DUP", f"`deploy {b.label}` appears twice", b.label_span)
        return
    hw = low.raw["hardware"].get(b.target, {})
    refs = {"hardware": hw}
    body = _members(b.members, path, low, refs, allow_blocks=True)
    body["name"] = b.label
    body["on"] = b.target
    (low.orphans.setdefault("deploys", {}) if orphan else low.raw["deploys"])[b.label] = body
    low.key_spans[path] = b.label_span
    low.value_spans[path] = b.span
    low.value_spans[path + ("on",)] = b.target_span


def _parity(b: ast.Block, low: Lowered) -> None:
    """`parity { out_of_scope = ["<pattern>", …] }`: CUB cases the spec does not claim (docs/parity.md)."""
    path = ("parity",)
    if "parity" in low.raw:
        low.error("E-DUP", "`parity` appears twice", b.kind_span)
        return
    if b.label is not None or b.target is not None:
        low.error(
            "E-BLOCK",
            "the `parity` block takes no name and no `on`",
            b.label_span or b.target_span,
            hint='write `parity { out_of_scope = ["<family> <arch> <type> <op> <offset>", …] }`',
        )
        return
    low.raw["parity"] = _members(b.members, path, low, {}, allow_blocks=False)
    low.key_spans[path] = b.kind_span
    low.value_spans[path] = b.span


_EXAMPLE_NAMES = {"hardware": "bi100", "type": "pair16", "deploy": "competition"}


def lower(module: ast.Module) -> Lowered:
    low = Lowered(raw={"hardware": {}, "types": {}, "algorithms": {}, "deploys": {}}, source=module.source)
    if module.version is None:
        low.error(
            "E-VERSION",
            "the spec does not say its language version",
            ast_span_start(module),
            hint="start the file with `muh 1`",
        )
    elif module.version not in LANGUAGE_VERSIONS:
        low.error(
            "E-VERSION",
            f"language version {module.version} is not supported by this muh",
            module.version_span,
            hint=f"supported: {', '.join(map(str, LANGUAGE_VERSIONS))}",
        )
    else:
        low.raw["version"] = module.version
    # Hardware first, so that algorithms and deployments can refer to it wherever it is written.
    order = sorted(module.members, key=lambda m: 0 if isinstance(m, ast.Block) and m.kind == "hardware" else 1)
    for m in order:
        if isinstance(m, ast.Assign):
            low.error(
                "E-TOPLEVEL",
                f"`{m.name} = …` outside a block",
                m.key_span,
                hint="top-level items are `hardware`, `type`, `algorithm` and `deploy` blocks",
            )
            continue
        if m.kind not in TOP_KINDS:
            low.error(
                "E-BLOCK",
                f"unknown block `{m.kind}`",
                m.kind_span,
                hint=did_you_mean(m.kind, TOP_KINDS)
                or "top-level blocks are hardware, type, algorithm, deploy and parity",
            )
            continue
        if m.kind == "parity":
            _parity(m, low)
            continue
        if m.label is None:
            low.error("E-BLOCK", f"a `{m.kind}` block needs a name: `{m.kind} <name> {{ … }}`", m.kind_span)
            continue
        if m.label in keywords() and m.kind != "algorithm":  # an algorithm's label is its family (E-FAMILY)
            low.error(
                "E-NAME",
                f"`{m.label}` is a word of the language, not a name for a `{m.kind}` block",
                m.label_span,
                hint=f"name it for what it is, e.g. `{m.kind} {_EXAMPLE_NAMES.get(m.kind, 'mine')} {{ … }}`"
                f" (the language's words: {', '.join(f'`{k}`' for k in sorted(keywords()))})",
            )
        if m.kind == "type":
            if m.target is not None:
                low.error(
                    "E-TARGET",
                    "a type block takes no `on`",
                    m.target_span,
                    hint=f"write `type {m.label} {{ size = 16 B  align = 8 B }}`",
                )
                continue
            _type(m, low)
            continue
        needs_target = m.kind in ("algorithm", "deploy")
        if needs_target and m.target is None:
            low.error(
                "E-TARGET",
                f"`{m.kind} {m.label}` must say which hardware it runs on",
                m.label_span,
                hint=f"write `{m.kind} {m.label} on <hardware> {{ … }}`",
            )
            continue
        if not needs_target and m.target is not None:
            low.error("E-TARGET", "a hardware block takes no `on`", m.target_span)
            continue
        if needs_target and m.target not in low.raw["hardware"]:
            low.error(
                "E-REF",
                f"no hardware named `{m.target}`",
                m.target_span,
                hint=did_you_mean(m.target, low.raw["hardware"]) or "declare it with `hardware <name> { … }`",
            )
            (_algorithm if m.kind == "algorithm" else _deploy)(m, low, orphan=True)  # its own errors still count
            continue
        if m.kind == "hardware":
            if m.label in low.raw["hardware"]:
                low.error("E-DUP", f"`hardware {m.label}` appears twice", m.label_span)
                continue
            _hardware(m, low)
        elif m.kind == "algorithm":
            _algorithm(m, low)
        else:
            _deploy(m, low)
    return low


def ast_span_start(module: ast.Module) -> Span:
    return Span(module.file, 1, 1, 1, 2)


__all__ = ["Lowered", "RangeValue", "lower", "value_of"]
