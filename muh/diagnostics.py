"""Errors as values: every stage returns ``Diagnostic``s; only the CLI prints them.

A diagnostic names a source span (file, line, column, end) and carries a hint. ``render`` gives the
compiler-style text::

    specs/x.muh:12:17: error: threads = 96 is not a multiple of warp_size = 64 [E-WARP]
       12 |   policy default { threads = 96  items = 16 }
          |                    ^^^^^^^^^^^^
      hint: use 64 or 128
"""

from __future__ import annotations

import difflib
import functools
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Iterable, Sequence


class Severity(str, Enum):
    error = "error"
    warning = "warning"
    note = "note"


@dataclass(frozen=True)
class Span:
    """A region of a source file. Lines and columns are 1-based; ``end_col`` is exclusive."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"

    def stable(self) -> str:
        """``specs/x.muh:12:5`` however the file was named on the command line (for generated output)."""
        return f"{source_label(self.file)}:{self.line}:{self.col}"

    @staticmethod
    def unknown(file: str = "<input>") -> "Span":
        return Span(file, 1, 1, 1, 1)


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None = None
    hint: str | None = None
    severity: Severity = Severity.error
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.error

    def render(self, source: str | None = None) -> str:
        where = f"{self.span}: " if self.span else ""
        out = [f"{where}{self.severity.value}: {self.message} [{self.code}]"]
        if self.span is not None and source is not None:
            out.extend(_excerpt(source, self.span))
        for note in self.notes:
            out.append(f"  note: {note}")
        if self.hint:
            out.append(f"  hint: {self.hint}")
        return "\n".join(out)


@functools.lru_cache(maxsize=256)
def source_label(file: str) -> str:
    """A spec's name as generated files cite it, the same wherever muh runs: ``specs/<name>.muh``
    when the path given runs through a ``specs`` folder (the bundled specs), else the bare name —
    never a folder the path did not name."""
    from pathlib import PurePath

    p = PurePath(file)
    return f"specs/{p.name}" if p.parent.name == "specs" else p.name


class MuhError(Exception):
    """Raised inside a stage to stop it; carries the diagnostics gathered so far."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.message for d in self.diagnostics))


def _excerpt(source: str, span: Span) -> list[str]:
    lines = source.splitlines()
    if not 1 <= span.line <= len(lines):
        return []
    text = lines[span.line - 1]
    # Keep excerpts printable and short even for hostile input.
    text = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in text)
    if len(text) > 160:
        start = max(0, span.col - 60)
        text = text[start : start + 160]
        col = span.col - start
    else:
        col = span.col
    width = (span.end_col - span.col) if span.end_line == span.line else len(text) - col + 1
    width = max(1, min(width, len(text) - col + 2))
    gutter = f"{span.line:>5} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * (col - 1) + "^" * width
    return [gutter + text.expandtabs(1), caret]


_DID_YOU_MEAN = "did you mean `{}`?"


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """``did you mean `x`?`` for the closest choice, or None."""
    match = difflib.get_close_matches(str(word), sorted(set(choices)), n=1, cutoff=0.6)
    return _DID_YOU_MEAN.format(match[0]) if match else None


def suggestion(hint: str) -> str | None:
    """The word a ``did_you_mean`` hint suggests (the one fix an editor can apply), or None."""
    head, _, tail = _DID_YOU_MEAN.partition("{}")
    i = hint.find(head)
    if i < 0:
        return None
    word, sep, _ = hint[i + len(head) :].partition(tail)
    return word if sep and word else None


EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2  # ok; a check failed or an operation was refused; bad input
EXIT_USAGE = 64  # a command line the option parser refuses (unknown option, missing argument): sysexits' EX_USAGE,
# apart from 2, which `muh deploy` uses for "changes planned"


def number_option(lo: float | None = None, hi: float | None = None, kind: type = int):
    """A command-line option's parser (typer's ``parser=``): a whole number (or, with ``kind=float``, a number)
    in ``lo`` … ``hi``, refused in muh's words (typer's own check words it as pydantic does: "Input should be
    a valid integer, unable to parse string as an integer")."""

    def parse(text: str):
        import typer

        what = "a whole number" if kind is int else "a number"
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{text!r} is not {what}") from None
        if kind is float and value != value:
            raise typer.BadParameter(f"{text!r} is not {what}")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = (
                f"{lo} … {hi}"
                if lo is not None and hi is not None
                else f"at least {lo}"
                if lo is not None
                else f"at most {hi}"
            )
            raise typer.BadParameter(f"{text} is out of range: {bounds}")
        return value

    return parse


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def report(diags: list[Diagnostic], sources: dict[str, str] | None = None) -> None:
    """Print ``diags`` to stderr with their excerpts (``sources``: file -> text; else read), then the count."""
    sources = sources or {}
    for d in diags:
        src = sources.get(d.span.file) if d.span else None
        if d.span and src is None:
            try:
                src = Path(d.span.file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                src = None
        _err(d.render(src))
    n = sum(d.is_error for d in diags)
    if n:
        _err(f"{n} error{'s' if n != 1 else ''}")
