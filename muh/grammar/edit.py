"""Edits of a spec's text at the parser's spans, keeping comments and layout.

`muh tune --apply` and `muh probe --ingest` both write values (with their ``@measured(…)``
annotation) back into a spec: they collect ``(start, end, replacement)`` edits at offsets found from
the syntax tree's spans and apply them here. Everything outside an edit is left byte for byte; a file
that was in canonical layout (``muh fmt --check`` clean) is put back into it, so `fmt --check` stays green.
"""

from __future__ import annotations

from muh.diagnostics import Span
from muh.grammar import ast
from muh.grammar.format import format_module
from muh.grammar.parser import parse


def string_literal(s: str) -> str:
    """A spec string literal for ``s`` (quotes, backslashes and newlines escaped)."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class SpecText:
    """A spec's text, its syntax tree and the edits to make to it."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.module = parse(text, file)
        self.canonical = format_module(self.module) == text
        self.starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement), non-overlapping

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col - 1

    def value_span(self, a: ast.Assign) -> tuple[int, int, int]:
        """Offsets of an assignment's value: (start, end of the value, end of its annotation or value)."""
        end_span: Span = a.annotation.span if a.annotation is not None else a.value.span
        return (
            self.offset(a.value.span.line, a.value.span.col),
            self.offset(a.value.span.end_line, a.value.span.end_col),
            self.offset(end_span.end_line, end_span.end_col),
        )

    def indent_of(self, line: int) -> str:
        s = self.starts[line - 1]
        e = self.text.find("\n", s)
        row = self.text[s : e if e >= 0 else len(self.text)]
        return row[: len(row) - len(row.lstrip())]

    def after_line_of(self, line: int, col: int) -> int:
        """The offset where the line holding (line, col) ends (after its newline)."""
        nl = self.text.find("\n", self.offset(line, col))
        return len(self.text) if nl < 0 else nl + 1

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def replace(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, text))

    def insert(self, pos: int, text: str) -> None:
        self.edits.append((pos, pos, text))

    def result(self) -> str:
        """The text with every edit made (back in canonical layout when it was before)."""
        out = self.text
        for start, end, rep in sorted(self.edits, key=lambda e: -e[0]):
            out = out[:start] + rep + out[end:]
        return format_module(parse(out, self.file)) if self.canonical else out
