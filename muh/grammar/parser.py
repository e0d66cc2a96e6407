"""Parse .muh text into a ``Module``: lark (LALR) + a Transformer, errors as diagnostics."""

from __future__ import annotations

import re
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from muh.diagnostics import Diagnostic, MuhError, Span
from muh.grammar import ast

MAX_BYTES = 1 << 20  # 1 MiB: a spec is a page or two; anything larger is almost surely a mistake
MAX_DEPTH = 64  # nesting of { [ ( ; keeps every later stage's recursion shallow
MAX_POWER_BITS = 256  # `a^b` is computed only below 2^256: far past every range muh checks, and instant

# Labelled examples of common mistakes (lark's match_examples): error message -> sample inputs.
_EXAMPLES: dict[str, list[str]] = {
    "a block needs `{` after its name": ["hardware bi100 sm_count = 16 }", "algorithm reduce on x threads = 1"],
    "missing `=` between a key and its value": ["hardware x { sm_count 16 }", "hardware x { a { b 1 } }"],
    "a value is missing after `=`": ["hardware x { sm_count = }", "hardware x { a = = 1 }"],
    "unbalanced braces: a block is not closed": ["hardware x { sm_count = 16", "hardware x { a { b = 1 }"],
    "a list needs `,` between items": ["hardware x { a = [1 2] }"],
    "`muh <version>` must be the first line": ["hardware x { } muh 1"],
}
_VERSION_LABEL = "`muh <version>` must be the first line"
# Words other languages use to pull in another file: muh has none (a spec is one file).
_NOT_LANGUAGE = ("include", "import", "use", "require", "source")


def span_of_word(text: str, file: str, end: int, word: str) -> Span:
    """The span of ``word``, the last one before offset ``end`` on its line."""
    start = text.rfind(word, 0, end)
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return Span(file, line, col, line, col + len(word))


# Comments are ignored by the parser but kept (for `muh fmt`) through a lexer callback that
# forwards to the sink of the parse() call in progress.
_COMMENT_SINK: ContextVar = ContextVar("muh_comment_sink", default=lambda tok: tok)


def _on_comment(tok: Token) -> Token:
    return _COMMENT_SINK.get()(tok)


def _cache_file() -> str | bool:
    """Where lark keeps the analysed grammar between runs (it checks the grammar's hash on load and
    rebuilds on any mismatch or error); False (no cache) without a private cache folder."""
    from muh import __version__, cache

    folder = cache.private("grammar")
    return str(folder / f"muh-{__version__}.lark") if folder is not None else False


@lru_cache(maxsize=2)
def _parser(strict: bool = False) -> Lark:
    """The LALR parser, loaded from lark's cache when it can be (analysing the grammar, and lark's
    check through interegular that no two terminals match the same text, cost most of a second at
    start-up). ``strict`` turns that check into an error; the tests build it so (tests/grammar)."""
    return Lark.open_from_package(
        "muh.grammar",
        "muh.lark",
        parser="lalr",
        strict=strict,
        propagate_positions=True,
        maybe_placeholders=False,
        lexer_callbacks={"COMMENT": _on_comment},
        cache=False if strict else _cache_file(),
    )


def grammar() -> Lark:
    """muh's LALR parser, the one the parse is made with (from lark's cache): for the tools that read
    the grammar itself (the LSP's completion context, the TextMate grammar)."""
    return _parser()


def _span(file: str, obj) -> Span:
    """Span of a Token or a tree ``meta``."""
    return Span(file, obj.line, obj.column, obj.end_line, obj.end_column)


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def _unescape(body: str) -> str | None:
    """Decode the four escapes a .muh string has; None if another one is used."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1] if i + 1 < len(body) else ""
            if nxt not in _ESCAPES:
                return None
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


class _ToAst(Transformer):
    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def _s(self, obj) -> Span:
        return _span(self.file, obj)

    # -- values -----------------------------------------------------------------------------------
    @v_args(meta=True)
    def number(self, meta, children):
        tok = children[0]
        unit = str(children[1]) if len(children) > 1 else None
        try:
            base, caret, exp = str(tok).partition("^")
            if caret and abs(int(base)) > 1 and int(exp) * (abs(int(base)).bit_length() - 1) > MAX_POWER_BITS:
                raise MuhError(
                    [
                        Diagnostic(
                            "E-NUMBER",
                            f"`{tok}` is too large to be any value muh accepts",
                            _span(self.file, tok),
                            hint=f"powers go up to 2^{MAX_POWER_BITS}",
                        )
                    ]
                )
            value = Decimal(int(base) ** int(exp)) if caret else Decimal(str(tok))
        except InvalidOperation:  # pragma: no cover - the lexer only admits decimals
            value = Decimal(0)
        return ast.Number(value, str(tok), unit, self._s(meta))

    @v_args(meta=True)
    def range(self, meta, children):
        step = children[2] if len(children) > 2 else None
        return ast.Range(children[0], children[1], step, self._s(meta))

    @v_args(meta=True)
    def string(self, meta, children):
        raw = str(children[0])
        value = _unescape(raw[1:-1])
        if value is None:
            raise MuhError(
                [
                    Diagnostic(
                        "E-STRING",
                        f"bad escape sequence in string {raw}",
                        self._s(meta),
                        hint='the escapes are \\" \\\\ \\n and \\t',
                    )
                ]
            )
        return ast.Str(value, raw, self._s(meta))

    @v_args(meta=True)
    def boolean(self, meta, children):
        return ast.Bool(str(children[0]) == "true", self._s(meta))

    @v_args(meta=True)
    def list(self, meta, children):
        return ast.ListV(tuple(children), self._s(meta))

    @v_args(meta=True)
    def ident(self, meta, children):
        return ast.Ident(children[0][0], self._s(meta))

    @v_args(meta=True)
    def kwarg(self, meta, children):
        return ast.Arg(str(children[0]), children[1], self._s(meta))

    @v_args(meta=True)
    def call(self, meta, children):
        args = tuple(c if isinstance(c, ast.Arg) else ast.Arg(None, c, c.span) for c in children[1:])
        return ast.Call(str(children[0]), args, self._s(meta))

    @v_args(meta=True)
    def tagged(self, meta, children):
        path, _span_ = children[0]
        tok = children[1]
        raw = str(tok)
        return ast.Tagged(".".join(path), ast.Str(raw[1:-1], raw, _span(self.file, tok)), self._s(meta))

    # -- structure --------------------------------------------------------------------------------
    @v_args(meta=True)
    def path(self, meta, children):
        return tuple(str(c) for c in children), self._s(meta)

    def label(self, children):
        return ("label", children[0])

    def target(self, children):
        return ("target", (str(children[0]), _span(self.file, children[0])))

    def annotation(self, children):
        return ("annotation", children[0])

    @v_args(meta=True)
    def assign(self, meta, children):
        (key, key_span), value = children[0], children[1]
        note = children[2][1] if len(children) > 2 else None
        return ast.Assign(key, value, key_span, self._s(meta), note)

    @v_args(meta=True)
    def block(self, meta, children):
        (kind, kind_span), rest = children[0], children[1:]
        label = target = None
        label_span = target_span = None
        members = []
        for c in rest:
            if isinstance(c, tuple) and c and c[0] == "label":
                label, label_span = ".".join(c[1][0]), c[1][1]
            elif isinstance(c, tuple) and c and c[0] == "target":
                target, target_span = c[1]
            else:
                members.append(c)
        if len(kind) > 1:
            raise MuhError(
                [
                    Diagnostic(
                        "E-SYNTAX",
                        f"a block kind is a single name, not `{'.'.join(kind)}`",
                        kind_span,
                        hint="write `name = value` to set a dotted key",
                    )
                ]
            )
        return ast.Block(kind[0], label, target, tuple(members), kind_span, label_span, target_span, self._s(meta))

    @v_args(meta=True)
    def condition(self, meta, children):
        name, *rest = children
        op, bound = ("in", rest[0]) if len(rest) == 1 else (str(rest[0]), rest[1])
        return ast.Condition(str(name), op, bound, _span(self.file, name), self._s(meta))

    @v_args(meta=True)
    def when(self, meta, children):
        cond, members = children[0], tuple(children[1:])
        kind_span = Span(self.file, meta.line, meta.column, meta.line, meta.column + len("when"))
        return ast.Block("when", None, None, members, kind_span, None, None, self._s(meta), cond)

    def version(self, children):
        return ("version", int(children[0]), _span(self.file, children[0]))

    def start(self, children):
        return children


def _precheck(text: str, file: str) -> list[Diagnostic]:
    depth = 0
    line, col = 1, 0
    for ch in text:
        col += 1
        if ch == "\n":
            line, col = line + 1, 0
        elif ch in "{[(":
            depth += 1
            if depth > MAX_DEPTH:
                return [
                    Diagnostic(
                        "E-DEPTH",
                        f"nesting deeper than {MAX_DEPTH} levels",
                        Span(file, line, col, line, col + 1),
                        hint="a spec needs a handful of levels; check for a runaway bracket",
                    )
                ]
        elif ch in "}])":
            depth = max(0, depth - 1)
    return []


# Letters from other scripts that look like ASCII ones (the common homoglyphs of names).
_LOOKALIKE = dict(
    zip("аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅοαινρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "aeopcyxijsdhlABEKMHOPCTXIJSoaivptuxABEZHIKMNOPTYX")
)
_BAD_NUMBERS = {"nan", "inf", "infinity"}


@lru_cache(maxsize=1)
def units() -> list[str]:
    """Every unit the lexer knows, read off the grammar's UNIT terminal (``(KiB|…)/s``, ``(ns|…)``);
    tests/grammar checks that this is the schema's list of units."""
    import re

    pattern = _parser().get_terminal("UNIT").pattern.value
    out: list[str] = []
    for group, per_second in re.findall(r"\(([A-Za-z|]+)\)(\\/s)?", pattern):
        out += [u + ("/s" if per_second else "") for u in group.split("|")]
    return sorted(dict.fromkeys(out), key=lambda u: u.endswith("/s"))  # sizes, times, frequencies, then rates


@lru_cache(maxsize=1)
def keywords() -> frozenset[str]:
    """The language's words (`muh`, `on`, `when`, `true`, …), read off the grammar: its string terminals
    spelled like a name. No block may be named with one (muh/schema/lower.py)."""
    import re

    name = _parser().get_terminal("NAME").pattern.value
    return frozenset(
        t.pattern.value for t in _parser().terminals if t.pattern.type == "str" and re.fullmatch(name, t.pattern.value)
    )


def _unit_like(word: str) -> str | None:
    """The unit ``word`` was probably meant to be (``kib`` → ``KiB``, ``KiBs`` → ``KiB``), or None."""
    import difflib

    known = units()
    lower = {u.lower(): u for u in known}
    for cand in (word, word.rstrip("sS")):
        if cand.lower() in lower:
            return lower[cand.lower()]
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.75)
    return close[0] if close else None


def _tok_span(file: str, tok: Token, text: str | None = None) -> Span:
    return Span(file, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + len(str(tok)))


def _token_diagnostic(text: str, file: str, err_pos: int) -> Diagnostic | None:
    """A better diagnostic for mistakes that the grammar only notices a token or a line later: a
    number with an unknown unit (``48 kib``, ``48 KiBs``), a hexadecimal number (``0x10``), ``nan``
    or ``inf`` as a value. Looks at the tokens up to the error; None when none of these is the cause."""
    toks: list[Token] = []
    try:
        for tok in _parser().lex(text, dont_ignore=True):
            if tok.start_pos > err_pos:
                break
            toks.append(tok)
    except UnexpectedInput:
        pass
    code = [t for t in toks if t.type not in ("WS", "COMMENT")]
    unit_list = ", ".join(units())
    for i, tok in enumerate(code):
        prev = code[i - 1] if i else None
        if prev is None:
            continue
        if tok.type == "NAME" and prev.type == "NUMBER" and prev.end_pos == tok.start_pos:
            both = Span(file, prev.line, prev.column, tok.end_line, tok.end_column)
            if str(prev).lstrip("-") == "0" and str(tok)[:1] in "xXbBoO":
                return Diagnostic(
                    "E-NUMBER", f"`{prev}{tok}`: muh numbers are decimal", both, hint=_based_hint(f"{prev}{tok}")
                )
            guess = _unit_like(str(tok))
            return Diagnostic(
                "E-UNIT",
                f"unknown unit `{tok}`",
                _tok_span(file, tok),
                hint=(f"did you mean `{guess}`? " if guess else "") + f"units: {unit_list}",
            )
        if tok.type == "NAME" and prev.type == "NUMBER" and tok.line == prev.end_line:
            nxt = code[i + 1] if i + 1 < len(code) else None
            if nxt is not None and str(nxt) in ("=", ".", "{"):
                continue  # the next key on the same line (`threads = 256  items = 16`)
            guess = _unit_like(str(tok))
            last_on_line = nxt is None or nxt.line != tok.line  # `= 6.2 hours⏎`: a word where a unit goes
            if guess is not None or last_on_line:
                return Diagnostic(
                    "E-UNIT",
                    f"unknown unit `{tok}`",
                    _tok_span(file, tok),
                    hint=(f"did you mean `{guess}`? " if guess else "") + f"units: {unit_list}",
                )
        if tok.type == "NAME" and str(tok).lower() in _BAD_NUMBERS and str(prev) in ("=", "(", ",", "["):
            return Diagnostic(
                "E-NUMBER",
                f"`{tok}` is not a number muh accepts",
                _tok_span(file, tok),
                hint="write a finite decimal number, e.g. `584.2 GB/s`",
            )
    return None


def _based_hint(word: str) -> str:
    try:
        return f"write `{int(word, 0)}`"
    except ValueError:
        return "write the value in decimal"


def _character(ch: str) -> tuple[str, str | None]:
    """How to show an unexpected character, and a hint when it is a homoglyph of an ASCII letter."""
    import unicodedata

    if ch.isascii():
        return (ch if ch.isprintable() else f"U+{ord(ch):04X}"), None
    name = unicodedata.name(ch, "unnamed character")
    shown = f"{ch}` (U+{ord(ch):04X} {name})" if ch.isprintable() else f"U+{ord(ch):04X}` ({name})"
    latin = _LOOKALIKE.get(ch)
    hint = (
        f"`{ch}` is U+{ord(ch):04X} {name}, not the ASCII `{latin}`: retype it"
        if latin
        else f"names, keys, numbers and units are ASCII; U+{ord(ch):04X} {name} may appear only inside a string"
    )
    return shown, hint


def _syntax_diagnostic(err: UnexpectedInput, text: str, file: str) -> Diagnostic:
    err_pos = (
        err.token.start_pos
        if isinstance(err, UnexpectedToken) and err.token.type != "$END"
        else getattr(err, "pos_in_stream", len(text))
    )
    better = _token_diagnostic(text, file, err_pos if err_pos is not None else len(text))
    if better is not None:
        return better
    line = getattr(err, "line", 1) or 1
    col = getattr(err, "column", 1) or 1
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
    span = Span(file, line, col, line, col + 1)
    label = None
    try:
        label = err.match_examples(_parser().parse, _EXAMPLES, use_accepts=True)
    except Exception:  # noqa: BLE001 - a failed heuristic must never hide the real error
        label = None
    before = text[:err_pos].rsplit("\n", 1)[-1].split() if err_pos is not None else []
    if label == _VERSION_LABEL and "muh" not in before:  # the same parser state as any top-level `word <value>`
        label = None
    if before and before[0] in _NOT_LANGUAGE and len(before) == 1:  # `include "x.muh"`, `import x`
        word = before[0]
        return Diagnostic(
            "E-SYNTAX",
            f"`{word}` is not part of the language: a spec is one file",
            span_of_word(text, file, err_pos, word),
            hint="copy the blocks you need into this spec (hardware, algorithm, deploy); "
            "top-level items are `hardware`, `type`, `algorithm`, `deploy` and `parity` blocks",
        )
    if isinstance(err, UnexpectedCharacters) and text[err.pos_in_stream : err.pos_in_stream + 1] == '"':
        rest = text[err.pos_in_stream + 1 :].split("\n", 1)[0]
        if not re.search(r'(?<!\\)(\\\\)*"', rest):  # no closing quote on its line
            return Diagnostic(
                "E-STRING",
                "a line break inside a string: a string ends on the line it starts",
                span,
                hint="close it on its line; write `\\n` for a line break in the value",
            )
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        shown, char_hint = _character(ch)
        msg = f"unexpected character `{shown}" + ("" if shown.endswith(")") else "`")
        hint = (
            char_hint or label or "names are [A-Za-z_][A-Za-z0-9_]*, strings use double quotes, comments start with #"
        )
    elif isinstance(err, UnexpectedToken):
        tok = err.token
        got = "end of file" if tok.type == "$END" else f"`{tok}`"
        expected = sorted(_pretty_terminal(t) for t in (err.accepts or err.expected))
        msg = f"unexpected {got}"
        if tok.type != "$END":
            span = Span(file, tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column + 1)
        hint = label or ("expected one of: " + ", ".join(expected[:8]) if expected else None)
    else:
        msg, hint = "unexpected end of file", label or "a block or list is not closed"
    return Diagnostic("E-SYNTAX", msg, span, hint=hint)


_TERMINALS = {
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "EQUAL": "`=`",
    "COMMA": "`,`",
    "DOT": "`.`",
    "AT": "`@`",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "UNIT": "a unit",
    "INT": "an integer",
    "TRUE": "`true`",
    "FALSE": "`false`",
    "$END": "end of file",
}


def _pretty_terminal(name: str) -> str:
    if name in _TERMINALS:
        return _TERMINALS[name]
    return f"`{name.lower()}`" if name.isupper() else name


def parse(text: str, file: str = "<input>") -> ast.Module:
    """Parse ``text``; raise ``MuhError`` with diagnostics on bad input (never anything else). CRLF and CR
    end a line as LF does (the module's source is the LF text)."""
    text = to_lf(text)
    diags = _precheck(text, file)
    if diags:
        raise MuhError(diags)
    comments: list[ast.Comment] = []

    def keep(tok: Token) -> Token:
        comments.append(ast.Comment(str(tok), tok.line, tok.column))
        return tok

    token = _COMMENT_SINK.set(keep)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as err:
        raise MuhError([_syntax_diagnostic(err, text, file)]) from None
    finally:
        _COMMENT_SINK.reset(token)
    try:
        items = _ToAst(file).transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, MuhError):
            raise err.orig_exc from None
        raise
    version = version_span = None
    members = []
    for item in items:
        if isinstance(item, tuple) and item[0] == "version":
            version, version_span = item[1], item[2]
        else:
            members.append(item)
    return ast.Module(version, version_span, tuple(members), tuple(comments), file, text)


def read_bounded(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``path``, or None when it holds more than ``limit``: at most
    ``limit + 1`` bytes are read (``st_size`` says 0 for /dev/zero and /proc files). Anything but a
    regular file (a FIFO would block forever, a device never ends) raises ``IsADirectoryError`` for a
    folder, else ``OSError`` naming what it is."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # opening a FIFO must not wait for a writer
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            kind = (
                "a named pipe (FIFO)"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket"
                if stat.S_ISSOCK(mode)
                else "not a regular file"
            )
            raise OSError(0, f"it is {kind}, not a regular file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return None if size > limit else b"".join(chunks)
    finally:
        os.close(fd)


LINE_ENDINGS = ("\r\n", "\r", "\n")  # what ends a line in a spec: CRLF, CR alone or LF (as in LSP and most editors)


def line_ending(text: str) -> str:
    """The line ending a text uses (its first one; LF when it has none)."""
    i = next((j for j, ch in enumerate(text) if ch in "\r\n"), None)
    return "\n" if i is None else "\r\n" if text.startswith("\r\n", i) else text[i]


def to_lf(text: str) -> str:
    """``text`` with every line ending (CRLF, CR) written as LF: what the parser reads, so that lines and
    columns are the editor's whatever the file's endings."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def with_ending(text: str, ending: str) -> str:
    """LF ``text`` written with ``ending`` (a rewritten spec keeps the file's own line endings)."""
    return text if ending == "\n" else text.replace("\n", ending)


class Source(NamedTuple):
    text: str  # LF line endings
    shown: str  # the path as the user wrote it
    ending: str  # the file's own line ending (write it back with ``with_ending``)


def read_source(path: str | Path) -> tuple[str, str]:
    """Read a spec file as text (LF line endings); raise ``MuhError`` for unreadable, binary or oversized files."""
    src = read_spec(path)
    return src.text, src.shown


def read_spec(path: str | Path) -> Source:
    """:func:`read_source` with the file's own line ending, for commands that write the spec back."""
    p = Path(path)
    shown = str(path)
    try:
        data = read_bounded(p, MAX_BYTES)
    except FileNotFoundError:
        raise MuhError(
            [Diagnostic("E-IO", f"no such file: {shown}", None, hint="check the path; bundled specs live in specs/")]
        ) from None
    except IsADirectoryError:
        raise MuhError([Diagnostic("E-IO", f"{shown} is a directory, not a .muh file", None)]) from None
    except OSError as err:
        raise MuhError([Diagnostic("E-IO", f"cannot read {shown}: {err.strerror}", None)]) from None
    if data is None:
        raise MuhError(
            [
                Diagnostic(
                    "E-IO",
                    f"{shown} is larger than {MAX_BYTES // 1024} KiB; a .muh spec is a small text file",
                    Span(shown, 1, 1, 1, 2),
                )
            ]
        )
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        line = before.count(b"\n") + 1
        col = len(before) - (before.rfind(b"\n") + 1) + 1
        raise MuhError(
            [
                Diagnostic(
                    "E-ENCODING",
                    f"not UTF-8 text (byte 0x{data[err.start]:02x})",
                    Span(shown, line, col, line, col + 1),
                    hint="save the spec as UTF-8",
                )
            ]
        ) from None
    text = to_lf(raw)
    if "\x00" in text:
        i = text.index("\x00")
        line = text.count("\n", 0, i) + 1
        col = i - (text.rfind("\n", 0, i) + 1) + 1
        raise MuhError(
            [Diagnostic("E-ENCODING", "binary data (a NUL byte) in the spec", Span(shown, line, col, line, col + 1))]
        )
    return Source(text, shown, line_ending(raw))
