"""`muh tune --apply`: write winning values back into the spec, keeping comments and layout.

Only the text of a changed value is replaced, using the parser's spans; the ``@measured(…)``
annotation is written right after it (replacing an older one). A dimension the typed policy does
not set yet is added to that policy block; a missing typed policy block is added after the
algorithm's last policy. Everything else in the file is left byte for byte. If the file was in
canonical layout before (``muh fmt --check`` clean), the result is put back into canonical layout,
so `muh fmt --check` stays green.
"""
from __future__ import annotations

from dataclasses import dataclass

from muh.diagnostics import Diagnostic, MuhError, Span
from muh.grammar import ast
from muh.grammar.format import format_module
from muh.grammar.parser import parse
from muh.schema.models import Delay


@dataclass(frozen=True)
class Evidence:
    """What `@measured(…)` records (the fields of ``muh.schema.models.Measured``)."""

    device: str
    date: str
    toolkit: str
    samples: int
    variant: str
    score: float
    min: float
    mean: float
    max: float
    fingerprint: str
    kept: bool = False
    """No challenger won: the incumbent's values are annotated as measured-and-kept."""


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def annotation(e: Evidence) -> str:
    """``@measured(device = "…", …)`` in the field order of the schema."""
    return (f"@measured(device = {_q(e.device)}, date = {_q(e.date)}, toolkit = {_q(e.toolkit)}, samples = {int(e.samples)}, "
            f"variant = {_q(e.variant)}, score = {e.score:.6f}, min = {e.min:.6f}, mean = {e.mean:.6f}, max = {e.max:.6f}, "
            f"fingerprint = {_q(e.fingerprint)}" + (", kept = true" if e.kept else "") + ")")


def value_text(v, dim: str | None = None) -> str:
    from muh.schema.catalog import DIMS

    if dim in DIMS and DIMS[dim].kind == "bytes" and isinstance(v, int) and not isinstance(v, bool):
        for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
            if v % size == 0:
                return f"{v // size} {unit}"
        return f"{v} B"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Delay):
        return f"{v.kind}(ns = {int(v.ns)} ns, l2_write_latency = {int(v.l2_write_latency)} ns)"
    if isinstance(v, dict) and "kind" in v:
        d = Delay(**v)
        return value_text(d)
    return str(v)


def _offsets(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _off(starts: list[int], line: int, col: int) -> int:
    return starts[line - 1] + col - 1


def value_span(starts: list[int], a) -> tuple[int, int, int]:
    """Offsets of an assignment's value: (start, end of the value, end of its annotation or value)."""
    start = _off(starts, a.value.span.line, a.value.span.col)
    end_span: Span = a.annotation.span if a.annotation is not None else a.value.span
    return start, _off(starts, a.value.span.end_line, a.value.span.end_col), _off(starts, end_span.end_line, end_span.end_col)


def _find_algorithm(module: ast.Module, family: str, hw: str) -> ast.Block | None:
    for m in module.members:
        if isinstance(m, ast.Block) and m.kind == "algorithm" and m.label == family and m.target == hw:
            return m
    return None


def _find_policy(alg: ast.Block, key: str) -> ast.Block | None:
    for b in alg.blocks("policy"):
        if b.label == key:
            return b
    return None


def _bucket_of(block: ast.Block) -> tuple[str, int, int | None] | None:
    """(size, lo, hi) of a `when` block, as the schema reads its condition."""
    from muh.schema.lower import Lowered, _bounds

    low = Lowered(raw={})
    got = _bounds(block.condition, low, ())
    return None if low.diags else (got["size"], got["lo"], got.get("hi"))


def _edit_block(text: str, starts: list[int], block: ast.Block, changes: dict, note: str, edits: list) -> None:
    """Write ``changes`` into ``block``: a value already there is replaced, a new one added at the end."""
    assigns = {a.name: a for a in block.assigns()}
    added = []
    for dim, value in sorted(changes.items()):
        a = assigns.get(dim)
        if a is None:
            added.append(f"{dim} = {value_text(value, dim)} {note}")
            continue
        start, _, end = value_span(starts, a)
        edits.append((start, end, f"{value_text(value, dim)} {note}"))
    _add_members(text, starts, block, added, edits)


def _add_members(text: str, starts: list[int], block: ast.Block, added: list[str], edits: list) -> None:
    """Members (text) added at the end of ``block``: on its line when it is one line, else one a line."""
    if not added:
        return
    close = _off(starts, block.span.end_line, block.span.end_col) - 1  # the `}`
    if block.span.line == block.span.end_line:
        sep = " " if text[close - 1] == "{" else ""  # an empty `{}`
        edits.append((close, close, sep + "  ".join(added) + " "))
    else:
        indent = _indent_of(text, starts, block.span.line) + "  "
        line_start = starts[block.span.end_line - 1]
        edits.append((line_start, line_start, "".join(f"{indent}{a}\n" for a in added)))


def _when_text(size: str, lo: int, hi: int | None, changes: dict, note: str) -> str:
    from muh.schema.models import Bucket

    body = "  ".join(f"{dim} = {value_text(v, dim)} {note}" for dim, v in sorted(changes.items()))
    return f"when {Bucket(size=size, lo=lo, hi=hi).label} " + (f"{{ {body} }}" if body else "{}")


def apply_winner(text: str, file: str, family: str, hw: str, policy_key: str, changes: dict[str, object],
                 evidence: Evidence, bucket: tuple[int, int | None] | None = None,
                 buckets: list[tuple[int, int | None]] | None = None, size: str = "elements") -> str:
    """The new spec text with ``changes`` (dim → value) written into ``policy <policy_key>``, or with
    ``bucket`` (lo, hi) into that bucket of it (testing ``size``: `elements`, `k` …); a policy without
    buckets gets ``buckets`` (every bucket tuned, ascending) as `when` blocks, the others empty until
    their own results are written."""
    module = parse(text, file)
    canonical = format_module(module) == text
    alg = _find_algorithm(module, family, hw)
    if alg is None:
        raise MuhError([Diagnostic("E-TUNE", f"no `algorithm {family} on {hw}` block in {file}", None)])
    note = annotation(evidence)
    starts = _offsets(text)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), non-overlapping
    pol = _find_policy(alg, policy_key)
    whens = [b for b in pol.blocks("when")] if pol is not None else []
    if pol is not None and bucket is not None and whens:
        target = next((b for b in whens if _bucket_of(b) == (size, *bucket)), None)
        if target is None:
            raise MuhError([Diagnostic("E-TUNE", f"policy {policy_key} of {family} on {hw} has no bucket "
                                       f"{size} {bucket[0]}..{bucket[1] if bucket[1] is not None else ''}",
                                       pol.kind_span)])
        _edit_block(text, starts, target, changes, note, edits)
    elif pol is not None and bucket is not None:
        _add_members(text, starts, pol, [_when_text(size, lo, hi, changes if (lo, hi) == tuple(bucket) else {}, note)
                                         for lo, hi in (buckets or [bucket])], edits)
    elif pol is not None:
        _edit_block(text, starts, pol, changes, note, edits)
    else:
        last = (alg.blocks("policy") or [None])[-1]
        anchor = last or alg
        indent = _indent_of(text, starts, anchor.span.line) + ("" if last else "  ")
        if bucket is not None:
            body = "".join(f"{indent}  {_when_text(size, lo, hi, changes if (lo, hi) == tuple(bucket) else {}, note)}\n"
                           for lo, hi in (buckets or [bucket]))
        else:
            body = "".join(f"{indent}  {dim} = {value_text(v, dim)} {note}\n" for dim, v in sorted(changes.items()))
        block = f"{indent}policy {policy_key} {{\n{body}{indent}}}\n"
        if last is not None:
            pos = _off(starts, last.span.end_line, last.span.end_col)
            nl = text.find("\n", pos)
            pos = len(text) if nl < 0 else nl + 1
        else:
            pos = starts[alg.span.end_line - 1]
        edits.append((pos, pos, block))
    out = text
    for start, end, rep in sorted(edits, key=lambda e: -e[0]):
        out = out[:start] + rep + out[end:]
    if canonical:
        out = format_module(parse(out, file))
    return out


def _indent_of(text: str, starts: list[int], line: int) -> str:
    s = starts[line - 1]
    e = text.find("\n", s)
    row = text[s: e if e >= 0 else len(text)]
    return row[: len(row) - len(row.lstrip())]
