"""One run of muh's own pipeline over an editor buffer, and what sits under a cursor.

``analyze`` calls the stages `muh build` calls — parse → validate → derive, then ``generate``
renders the output in memory (nothing is written) — and keeps each stage's result, so the editor
sees exactly the diagnostics of a build, the derive- and generate-stage ones included. The server
publishes after derive and again if generation adds anything: rendering every artifact costs more
than the other stages together, and derive's diagnostics should not wait for it. Where a stage fails the earlier
results stay usable:
hover and go-to-definition work on a spec that does not validate (from the syntax tree and the
lowered path → span table), and show resolved values once it does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator

from muh.derive import Derived, derive
from muh.diagnostics import Diagnostic, MuhError, Span
from muh.grammar import ast
from muh.grammar.parser import MAX_BYTES, parse
from muh.schema import Spec, from_module
from muh.schema.lower import Lowered, lower

Pos = tuple[int, int]
"""A cursor as muh's spans count: (line, column), both 1-based, in code points."""


@dataclass
class Analysis:
    text: str
    file: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    module: ast.Module | None = None
    lowered: Lowered | None = None
    spec: Spec | None = None
    derived: Derived | None = None
    generated: bool = False
    seconds: float = 0.0


def analyze(text: str, file: str, with_generate: bool = True) -> Analysis:
    """Run the pipeline over ``text`` (named ``file`` in diagnostics); never raises for bad input."""
    t0 = time.perf_counter()
    a = Analysis(text, file)
    try:
        _run(a)
    except RecursionError:
        a.diagnostics.append(Diagnostic("E-DEPTH", "input nests too deeply", Span(file, 1, 1, 1, 2)))
    if with_generate:
        generate(a)
    a.seconds = time.perf_counter() - t0
    return a


def generate(a: Analysis) -> list[Diagnostic]:
    """The generate stage's diagnostics (added to ``a``); none unless derive succeeded."""
    if a.derived is None or a.generated:
        return []
    from muh.pipeline import Loaded, render

    a.generated = True
    found: list[Diagnostic] = []
    try:
        render(Loaded(a.spec, a.derived, a.text), None, found)
    except MuhError as err:
        found = list(err.diagnostics) + found
    except RecursionError:
        found.append(Diagnostic("E-DEPTH", "input nests too deeply", Span(a.file, 1, 1, 1, 2)))
    a.diagnostics.extend(found)
    return found


def _run(a: Analysis) -> None:
    if len(a.text) > MAX_BYTES or len(a.text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        a.diagnostics.append(
            Diagnostic(
                "E-IO",
                f"the document is larger than {MAX_BYTES // 1024} KiB; a .muh spec is a small text file",
                Span(a.file, 1, 1, 1, 2),
            )
        )
        return
    try:
        a.module = parse(a.text, a.file)
    except MuhError as err:
        a.diagnostics.extend(err.diagnostics)
        return
    a.lowered = lower(a.module)  # the path → span table (validation lowers again; this copy never raises)
    try:
        a.spec = from_module(a.module)
    except MuhError as err:
        a.diagnostics.extend(err.diagnostics)
        return
    try:
        a.derived = derive(a.spec)
    except MuhError as err:
        a.diagnostics.extend(err.diagnostics)


# -- what is under the cursor ----------------------------------------------------------------------
def contains(span: Span | None, pos: Pos) -> bool:
    """``pos`` inside ``span``, its end included (a cursor just after a word is on it)."""
    return span is not None and (span.line, span.col) <= pos <= (span.end_line, span.end_col)


def _extent(span: Span) -> tuple[int, int]:
    return (span.end_line - span.line, span.end_col - span.col if span.end_line == span.line else 1 << 30)


@dataclass(frozen=True)
class Hit:
    """The innermost key or value of the lowered spec at a cursor."""

    path: tuple
    span: Span
    is_key: bool


def hit_at(a: Analysis, pos: Pos) -> Hit | None:
    if a.lowered is None:
        return None
    best: Hit | None = None
    for table, is_key in ((a.lowered.key_spans, True), (a.lowered.value_spans, False)):
        for path, span in table.items():
            if contains(span, pos) and (best is None or _extent(span) < _extent(best.span)):
                best = Hit(path, span, is_key)
    return best


def values(node) -> Iterator[ast.Value]:
    """``node`` and every value nested in it."""
    yield node
    if isinstance(node, ast.ListV):
        for item in node.items:
            yield from values(item)
    elif isinstance(node, ast.Range):
        yield from values(node.start)
        yield from values(node.stop)
        if node.step is not None:
            yield from values(node.step)
    elif isinstance(node, ast.Call):
        for arg in node.args:
            yield from values(arg.value)


def walk(members, parents: tuple = ()) -> Iterator[tuple[object, tuple]]:
    """Every block and assignment with the blocks around it (outermost first)."""
    for m in members:
        yield m, parents
        if isinstance(m, ast.Block):
            yield from walk(m.members, parents + (m,))


def node_at(a: Analysis, pos: Pos) -> tuple[object, tuple] | None:
    """The innermost syntax node at ``pos`` — a value, an assignment or a block — and its enclosing blocks."""
    if a.module is None:
        return None
    best = None
    for m, parents in walk(a.module.members):
        if isinstance(m, ast.Assign):
            if contains(m.span, pos):
                best = (m, parents)
                for v in values(m.value):
                    if contains(v.span, pos) and _extent(v.span) < _extent(best[0].span):
                        best = (v, parents + (m,))
        elif contains(m.span, pos):
            best = (m, parents)
    return best
