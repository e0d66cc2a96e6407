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

from muh.diagnostics import Diagnostic, MuhError
from muh.grammar import ast
from muh.grammar.edit import SpecText
from muh.grammar.edit import string_literal as _q
from muh.schema.models import Delay, sub_dim


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


def annotation(e: Evidence) -> str:
    """``@measured(device = "…", …)`` in the field order of the schema."""
    return (
        f"@measured(device = {_q(e.device)}, date = {_q(e.date)}, toolkit = {_q(e.toolkit)}, samples = "
        f"{int(e.samples)}, "
        f"variant = {_q(e.variant)}, score = {e.score:.6f}, min = {e.min:.6f}, mean = {e.mean:.6f}, max = {e.max:.6f}, "
        f"fingerprint = {_q(e.fingerprint)}" + (", kept = true" if e.kept else "") + ")"
    )


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


def _split(changes: dict) -> tuple[dict, dict[str, dict]]:
    """(the policy's own changes, {sub-policy: its changes}) of ``changes`` (``onesweep.threads``: sub_dim)."""
    own: dict = {}
    subs: dict[str, dict] = {}
    for dim, value in changes.items():
        sd = sub_dim(dim)
        if sd is None:
            own[dim] = value
        else:
            subs.setdefault(sd[0], {})[sd[1]] = value
    return own, subs


def _sub_text(sub: str, changes: dict, note: str) -> str:
    return f"{sub} {{ " + "  ".join(f"{d} = {value_text(v, d)} {note}" for d, v in sorted(changes.items())) + " }"


def _edit_block(doc: SpecText, block: ast.Block, changes: dict, note: str) -> None:
    """Write ``changes`` into ``block``: a value already there is replaced, a new one added at the end; a
    sub-policy's (``onesweep.threads``) into the block's `onesweep { … }`, which is added when missing."""
    changes, subs = _split(changes)
    assigns = {a.name: a for a in block.assigns()}
    added = []
    for sub, sub_changes in sorted(subs.items()):
        inner = next((b for b in block.blocks(sub) if b.condition is None), None)
        if inner is None:
            added.append(_sub_text(sub, sub_changes, note))
        else:
            _edit_block(doc, inner, sub_changes, note)
    for dim, value in sorted(changes.items()):
        a = assigns.get(dim)
        if a is None:
            added.append(f"{dim} = {value_text(value, dim)} {note}")
            continue
        start, _, end = doc.value_span(a)
        doc.replace(start, end, f"{value_text(value, dim)} {note}")
    _add_members(doc, block, added)


def _add_members(doc: SpecText, block: ast.Block, added: list[str]) -> None:
    """Members (text) added at the end of ``block``: on its line when it is one line, else one a line."""
    if not added:
        return
    close = doc.offset(block.span.end_line, block.span.end_col) - 1  # the `}`
    if block.span.line == block.span.end_line:
        sep = " " if doc.text[close - 1] == "{" else ""  # an empty `{}`
        doc.insert(close, sep + "  ".join(added) + " ")
    else:
        indent = doc.indent_of(block.span.line) + "  "
        doc.insert(doc.line_start(block.span.end_line), "".join(f"{indent}{a}\n" for a in added))


def _when_text(size: str, lo: int, hi: int | None, changes: dict, note: str) -> str:
    from muh.schema.models import Bucket

    body = "  ".join(f"{dim} = {value_text(v, dim)} {note}" for dim, v in sorted(changes.items()))
    return f"when {Bucket(size=size, lo=lo, hi=hi).label} " + (f"{{ {body} }}" if body else "{}")


def apply_winner(
    text: str,
    file: str,
    family: str,
    hw: str,
    policy_key: str,
    changes: dict[str, object],
    evidence: Evidence,
    bucket: tuple[int, int | None] | None = None,
    buckets: list[tuple[int, int | None]] | None = None,
    size: str = "elements",
) -> str:
    """The new spec text with ``changes`` (dim → value) written into ``policy <policy_key>``, or with
    ``bucket`` (lo, hi) into that bucket of it (testing ``size``: `elements`, `k` …); a policy without
    buckets gets ``buckets`` (every bucket tuned, ascending) as `when` blocks, the others empty until
    their own results are written."""
    if bucket is not None and _split(changes)[1]:
        subs = ", ".join(sorted(d for d in changes if sub_dim(d)))
        raise MuhError(
            [
                Diagnostic(
                    "E-TUNE",
                    f"a size bucket holds no sub-policies: {subs} cannot be written into a `when` block",
                    None,
                    hint="tune sub-policy dimensions for every size (a policy without size buckets)",
                )
            ]
        )
    doc = SpecText(text, file)
    alg = _find_algorithm(doc.module, family, hw)
    if alg is None:
        raise MuhError([Diagnostic("E-TUNE", f"no `algorithm {family} on {hw}` block in {file}", None)])
    note = annotation(evidence)
    pol = _find_policy(alg, policy_key)
    whens = [b for b in pol.blocks("when")] if pol is not None else []
    if pol is not None and bucket is not None and whens:
        target = next((b for b in whens if _bucket_of(b) == (size, *bucket)), None)
        if target is None:
            raise MuhError(
                [
                    Diagnostic(
                        "E-TUNE",
                        f"policy {policy_key} of {family} on {hw} has no bucket "
                        f"{size} {bucket[0]}..{bucket[1] if bucket[1] is not None else ''}",
                        pol.kind_span,
                    )
                ]
            )
        _edit_block(doc, target, changes, note)
    elif pol is not None and bucket is not None:
        _add_members(
            doc,
            pol,
            [
                _when_text(size, lo, hi, changes if (lo, hi) == tuple(bucket) else {}, note)
                for lo, hi in (buckets or [bucket])
            ],
        )
    elif pol is not None:
        _edit_block(doc, pol, changes, note)
    else:
        last = (alg.blocks("policy") or [None])[-1]
        anchor = last or alg
        indent = doc.indent_of(anchor.span.line) + ("" if last else "  ")
        if bucket is not None:
            body = "".join(
                f"{indent}  {_when_text(size, lo, hi, changes if (lo, hi) == tuple(bucket) else {}, note)}\n"
                for lo, hi in (buckets or [bucket])
            )
        else:
            own, subs = _split(changes)
            body = "".join(f"{indent}  {dim} = {value_text(v, dim)} {note}\n" for dim, v in sorted(own.items()))
            body += "".join(f"{indent}  {_sub_text(sub, c, note)}\n" for sub, c in sorted(subs.items()))
        pos = (
            doc.after_line_of(last.span.end_line, last.span.end_col)
            if last is not None
            else doc.line_start(alg.span.end_line)
        )
        doc.insert(pos, f"{indent}policy {policy_key} {{\n{body}{indent}}}\n")
    return doc.result()
