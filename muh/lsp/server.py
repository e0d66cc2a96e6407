"""`muh lsp`: the Language Server Protocol over stdio (pygls + lsprotocol).

This module only translates: buffers in, ``analysis.analyze`` and ``features`` over them, protocol
types out. Diagnostics are published on open and, debounced, on change; requests (hover, …) use the
analysis of the buffer's current version (analysing it on the spot if an edit is still pending).
"""

from __future__ import annotations

import asyncio
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

import muh
from muh.diagnostics import Diagnostic, Severity, Span
from muh.lsp import features
from muh.lsp.analysis import Analysis, Pos, analyze, generate
from muh.lsp.context import context_at

DEBOUNCE_S = 0.05  # parse → validate → derive, this long after the last keystroke
GENERATE_AFTER_S = 0.3  # the generate stage (it renders every artifact: slower), once typing pauses this long
log = logging.getLogger("muh.lsp")


# -- positions: muh counts (line, column) from 1 in code points; the client from 0 in its encoding ----
class Lines:
    def __init__(self, text: str, encoding: str | None):
        self.lines = text.split("\n")  # muh's lexer counts lines at \n only
        self.unit = {"utf-8": 1, "utf-32": 4}.get(str(encoding or "utf-16"), 2)

    def _units(self, s: str) -> int:
        if self.unit == 4:
            return len(s)
        if self.unit == 1:
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, line: int, col: int) -> lsp.Position:
        """muh (line, col) → client position, clamped to the text."""
        if line > len(self.lines):
            return lsp.Position(len(self.lines) - 1, self._units(self.lines[-1]))
        text = self.lines[max(line, 1) - 1]
        return lsp.Position(max(line, 1) - 1, self._units(text[: max(col, 1) - 1]))

    def range(self, span: Span | None) -> lsp.Range:
        if span is None:
            return lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
        return lsp.Range(self.position(span.line, span.col), self.position(span.end_line, span.end_col))

    def pos(self, p: lsp.Position) -> Pos:
        """Client position → muh (line, col)."""
        line = min(max(p.line, 0), len(self.lines) - 1)
        text, units, col = self.lines[line], 0, 0
        while col < len(text) and units < p.character:
            units += self._units(text[col])
            col += 1
        return line + 1, col + 1

    def offset(self, p: lsp.Position) -> int:
        line, col = self.pos(p)
        return sum(len(s) + 1 for s in self.lines[: line - 1]) + col - 1


_SEVERITY = {
    Severity.error: lsp.DiagnosticSeverity.Error,
    Severity.warning: lsp.DiagnosticSeverity.Warning,
    Severity.note: lsp.DiagnosticSeverity.Information,
}


def to_lsp(d: Diagnostic, lines: Lines) -> lsp.Diagnostic:
    message = d.message + "".join(f"\nnote: {n}" for n in d.notes) + (f"\nhint: {d.hint}" if d.hint else "")
    return lsp.Diagnostic(
        range=lines.range(d.span),
        message=message,
        severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Error),
        code=d.code,
        source="muh",
    )


def uri_to_file(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


class MuhProtocol(LanguageServerProtocol):
    """pygls' protocol with the two rules of the LSP's lifecycle it leaves to the server: a request
    before ``initialize`` is answered with ServerNotInitialized (-32002), a notification then is dropped
    (``exit`` excepted); ``exit`` sets the process's exit code, 0 after ``shutdown`` and 1 without."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.initialize_seen = False
        self.exit_code = 0  # the stream ended without `exit`: as before

    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        if method == lsp.INITIALIZE:
            self.initialize_seen = True
        elif method == lsp.EXIT:
            self.exit_code = 0 if self._shutdown else 1
        elif method is not None and not self.initialize_seen:
            if getattr(message, "id", None) is not None:  # a request: say why it gets no answer
                log.warning("answered %s before initialize with ServerNotInitialized", method)
                self._send_response(message.id, None, JsonRpcServerNotInitialized().to_response_error())
            return
        super().handle_message(message)


class MuhServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "muh",
            muh.__version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=MuhProtocol,
        )
        self.analyses: dict[str, tuple[int | None, Analysis]] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="muh-analyze")

    # -- buffers and their analyses ----------------------------------------------------------------
    def lines(self, text: str) -> Lines:
        return Lines(text, self.workspace.position_encoding)

    def analysis(self, uri: str) -> Analysis:
        """The analysis of the buffer as it is now."""
        doc = self.workspace.get_text_document(uri)
        cached = self.analyses.get(uri)
        if cached is not None and cached[0] == doc.version and cached[1].text == doc.source:
            return cached[1]
        a = _safe(analyze, doc.source, uri_to_file(uri), False)
        self.analyses[uri] = (doc.version, a)
        return a

    def schedule(self, uri: str, delay: float) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def _publish(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        doc = self.workspace.get_text_document(uri)
        version, text = doc.version, doc.source
        loop = asyncio.get_running_loop()
        a = await loop.run_in_executor(self.worker, _safe, analyze, text, uri_to_file(uri), False)
        if not self._current(uri, version, text):
            return  # closed or edited meanwhile: a newer run is scheduled
        self.analyses[uri] = (version, a)
        lines = self.lines(text)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[to_lsp(d, lines) for d in a.diagnostics]
            )
        )
        if a.derived is None:
            return
        # the generate stage: published again only when it finds something
        await asyncio.sleep(GENERATE_AFTER_S)
        if not self._current(uri, version, text):
            return
        found = await loop.run_in_executor(self.worker, _safe_generate, a)
        if found and self._current(uri, version, text):
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(
                    uri=uri, version=version, diagnostics=[to_lsp(d, lines) for d in a.diagnostics]
                )
            )

    def _current(self, uri: str, version: int | None, text: str) -> bool:
        doc = self.workspace.text_documents.get(uri)
        return doc is not None and doc.version == version and doc.source == text


def _internal(err: Exception, file: str) -> Diagnostic:
    log.exception("muh crashed on %s", file)
    return Diagnostic(
        "E-INTERNAL",
        f"muh failed on this input ({type(err).__name__}: {err})",
        Span(file, 1, 1, 1, 2),
        hint="this is a bug in muh: please report it with the spec",
    )


def _safe(fn, text: str, file: str, *args) -> Analysis:
    try:
        return fn(text, file, *args)
    except Exception as err:  # noqa: BLE001 - a bug in a stage must not take the editor's server down
        a = Analysis(text, file)
        a.diagnostics.append(_internal(err, file))
        return a


def _safe_generate(a: Analysis) -> list[Diagnostic]:
    try:
        return generate(a)
    except Exception as err:  # noqa: BLE001
        d = _internal(err, a.file)
        a.diagnostics.append(d)
        return [d]


server = MuhServer()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: MuhServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: MuhServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, DEBOUNCE_S)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: MuhServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: MuhServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.analyses.pop(uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: MuhServer, params: lsp.HoverParams) -> lsp.Hover | None:
    a = ls.analysis(params.text_document.uri)
    lines = ls.lines(a.text)
    got = features.hover(a, lines.pos(params.position))
    if got is None:
        return None
    text, span = got
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text), range=lines.range(span))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: MuhServer, params: lsp.DefinitionParams) -> list[lsp.Location] | None:
    uri = params.text_document.uri
    a = ls.analysis(uri)
    lines = ls.lines(a.text)
    spans = features.definition(a, lines.pos(params.position))
    return [lsp.Location(uri=uri, range=lines.range(s)) for s in spans] or None


_ITEM_KIND = {
    "keyword": lsp.CompletionItemKind.Keyword,
    "block": lsp.CompletionItemKind.Module,
    "key": lsp.CompletionItemKind.Property,
    "family": lsp.CompletionItemKind.Class,
    "type": lsp.CompletionItemKind.TypeParameter,
    "enum": lsp.CompletionItemKind.EnumMember,
    "unit": lsp.CompletionItemKind.Unit,
    "value": lsp.CompletionItemKind.Value,
    "hardware": lsp.CompletionItemKind.Reference,
}


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["=", "[", ",", "("]))
def completion(ls: MuhServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    text = doc.source
    lines = ls.lines(text)
    ctx = context_at(text, lines.offset(params.position))
    snippets = _snippets_supported(ls)
    items = []
    for i, it in enumerate(features.completion(text, ctx)):
        snippet = it.insert is not None and snippets and "$" in it.insert
        insert = (
            it.insert
            if snippet
            else (
                it.insert.split("$")[0].rstrip() + (" " if it.insert.rstrip().endswith("=") else "")
                if it.insert
                else None
            )
        )
        items.append(
            lsp.CompletionItem(
                label=it.label,
                kind=_ITEM_KIND.get(it.kind),
                detail=it.detail or None,
                documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=it.doc) if it.doc else None,
                insert_text=insert,
                insert_text_format=lsp.InsertTextFormat.Snippet if snippet else lsp.InsertTextFormat.PlainText,
                sort_text=f"{0 if it.kind != 'key' or ctx.where != 'unit' else 1}{i:04d}",
            )
        )
    return lsp.CompletionList(is_incomplete=False, items=items)


def _snippets_supported(ls: MuhServer) -> bool:
    try:
        return bool(ls.client_capabilities.text_document.completion.completion_item.snippet_support)
    except AttributeError:
        return False


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: MuhServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
    uri = params.text_document.uri
    text = ls.workspace.get_text_document(uri).source
    new = features.formatted(text, uri_to_file(uri))
    if new is None or new == text:
        return None if new is None else []
    lines = ls.lines(text)
    end = lines.position(len(lines.lines), len(lines.lines[-1]) + 1)
    return [lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), end), new_text=new)]


_SYMBOL_KIND = {"block": lsp.SymbolKind.Module, "policy": lsp.SymbolKind.Struct, "key": lsp.SymbolKind.Property}


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbols(ls: MuhServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    a = ls.analysis(params.text_document.uri)
    lines = ls.lines(a.text)

    def conv(s: features.Symbol) -> lsp.DocumentSymbol:
        return lsp.DocumentSymbol(
            name=s.name,
            kind=_SYMBOL_KIND[s.kind],
            detail=s.detail or None,
            range=lines.range(s.span),
            selection_range=lines.range(s.selection),
            children=[conv(c) for c in s.children],
        )

    return [conv(s) for s in features.symbols(a)]


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_actions(ls: MuhServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    a = ls.analysis(uri)
    lines = ls.lines(a.text)
    lo, hi = lines.pos(params.range.start), lines.pos(params.range.end)
    out = []
    for d in a.diagnostics:
        if d.span is None or (d.span.end_line, d.span.end_col) < lo or (d.span.line, d.span.col) > hi:
            continue
        got = features.fix(d, a.text)
        if got is None:
            continue
        span, word = got
        out.append(
            lsp.CodeAction(
                title=f"Change to `{word}`",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[to_lsp(d, lines)],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(range=lines.range(span), new_text=word)]}),
            )
        )
    return out


MAX_MESSAGE = 64 << 20  # bytes of one JSON-RPC message: a spec is limited to 1 MiB, its edits to less
MAX_HEADER_LINE = 64 << 10
IGNORED = b'{"jsonrpc": "2.0", "method": "$/muh/ignored", "params": {}}'  # what the loop gets instead of a bad message


@server.feature("$/muh/ignored")
def _ignored(ls: MuhServer, params) -> None:
    """The stand-in for a message the reader refused (its one-line reason is on stderr)."""


class BoundedStdin:
    """The client's stream as pygls reads it (``readline``, ``read(n)``), bounded: a header line of at
    most MAX_HEADER_LINE bytes, a body of at most MAX_MESSAGE (a larger Content-Length is refused
    without reading it: the reader finds the next header), and a body that is no JSON-RPC object is
    replaced by a no-op notification. Each refusal is one line on stderr; the server keeps serving."""

    def __init__(self, raw):
        self.raw = raw

    def readline(self) -> bytes:
        return self.raw.readline(MAX_HEADER_LINE)

    def read(self, n: int) -> bytes:
        if n > MAX_MESSAGE:
            log.error("ignored a message of Content-Length %d (limit %d bytes)", n, MAX_MESSAGE)
            return IGNORED
        body = self.raw.read(n)
        if not body:
            return body
        try:
            msg = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            log.error("ignored a message that is not JSON (%s)", str(err).splitlines()[0][:120])
            return IGNORED
        if not isinstance(msg, dict) or not ("method" in msg or "id" in msg):
            log.error("ignored a message that is not a JSON-RPC request, notification or response")
            return IGNORED
        return body


class _OneLine(logging.Filter):
    """pygls logs a message it cannot handle with its traceback: keep the reason, on one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if "Traceback (most recent call last)" in text:  # a traceback formatted into the message itself
            record.msg, record.args = text.split("\n", 1)[0], ()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            cause = exc.__cause__ or exc
            first = str(cause).splitlines()[0][:200] if str(cause) else ""
            record.msg = f"{record.getMessage()}: {type(cause).__name__}: {first}"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def main() -> None:
    """Serve over stdin/stdout until the client says exit."""
    import sys

    logging.basicConfig(level=logging.WARNING, format="muh lsp: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_OneLine())
    server.start_io(stdin=BoundedStdin(sys.stdin.buffer))
    if server.protocol.exit_code:  # `exit` without `shutdown` (pygls' own sys.exit is swallowed by start_io)
        sys.exit(server.protocol.exit_code)
