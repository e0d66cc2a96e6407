"""An editor for the language-server tests: pygls' client drives `python -m muh.cli lsp` over stdio.

The client's event loop runs in a background thread so that tests stay plain functions; every
notification and request goes through that loop, in order.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]


class Editor:
    def __init__(self, encoding: str | None = None):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("muh-tests", "1")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.cond = threading.Condition()
        self.versions: dict[str, int] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            with self.cond:
                self.published.setdefault(params.uri, []).append((time.perf_counter(), params))
                self.cond.notify_all()

        self.stderr = bytearray()
        self.run(self.client.start_io(sys.executable, "-m", "muh.cli", "lsp", cwd=str(ROOT)))
        self.run(self._drain_stderr_soon())
        caps = lsp.ClientCapabilities(
            text_document=lsp.TextDocumentClientCapabilities(
                completion=lsp.CompletionClientCapabilities(
                    completion_item=lsp.ClientCompletionItemOptions(snippet_support=False)
                )
            ),
            general=lsp.GeneralClientCapabilities(position_encodings=[encoding]) if encoding else None,
        )
        self.init = self.run(self.client.initialize_async(lsp.InitializeParams(capabilities=caps, process_id=None)))
        self.notify(self.client.initialized, lsp.InitializedParams())

    async def _drain_stderr_soon(self) -> None:
        async def drain(stream):
            while chunk := await stream.read(65536):
                self.stderr.extend(chunk)

        self.loop.create_task(drain(self.client._server.stderr))  # a full pipe would block the server

    # plumbing ------------------------------------------------------------------------------------
    def run(self, coro, timeout: float = 60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def notify(self, method, params) -> None:
        self.loop.call_soon_threadsafe(method, params)

    def count(self, uri: str) -> int:
        with self.cond:
            return len(self.published.get(uri, []))

    def wait_diagnostics(
        self, uri: str, after: int, timeout: float = 30, version: int | None = None
    ) -> lsp.PublishDiagnosticsParams:
        """The first diagnostics published for ``uri`` after the ``after``-th (and for ``version`` if given)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                got = self.published.get(uri, [])[after:]
                for _, p in got:
                    if version is None or p.version == version:
                        return p
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no diagnostics for {uri} (version {version}) within {timeout} s")
                self.cond.wait(left)

    # editor actions ------------------------------------------------------------------------------
    def open(self, uri: str, text: str) -> lsp.PublishDiagnosticsParams:
        n = self.count(uri)
        self.versions[uri] = 1
        self.notify(
            self.client.text_document_did_open,
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=uri, language_id="muh", version=1, text=text)),
        )
        return self.wait_diagnostics(uri, n, version=1)

    def change(
        self, uri: str, text: str | None = None, edits: list[tuple[lsp.Range, str]] | None = None, wait: bool = True
    ):
        n = self.count(uri)
        self.versions[uri] += 1
        changes = (
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]
            if text is not None
            else [lsp.TextDocumentContentChangePartial(range=r, text=t) for r, t in edits or []]
        )
        self.notify(
            self.client.text_document_did_change,
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]), changes
            ),
        )
        return self.wait_diagnostics(uri, n, version=self.versions[uri]) if wait else None

    def close(self, uri: str) -> None:
        self.notify(
            self.client.text_document_did_close, lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri))
        )

    def hover(self, uri, line, char):
        return self.run(
            self.client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, char))
            )
        )

    def definition(self, uri, line, char):
        return self.run(
            self.client.text_document_definition_async(
                lsp.DefinitionParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, char))
            )
        )

    def completion(self, uri, line, char) -> list[str]:
        got = self.run(
            self.client.text_document_completion_async(
                lsp.CompletionParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, char))
            )
        )
        items = got.items if isinstance(got, lsp.CompletionList) else (got or [])
        return [i.label for i in items]

    def formatting(self, uri):
        return self.run(
            self.client.text_document_formatting_async(
                lsp.DocumentFormattingParams(
                    lsp.TextDocumentIdentifier(uri), lsp.FormattingOptions(tab_size=2, insert_spaces=True)
                )
            )
        )

    def symbols(self, uri):
        return self.run(
            self.client.text_document_document_symbol_async(lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
        )

    def code_actions(self, uri, rng: lsp.Range, diagnostics):
        return self.run(
            self.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    lsp.TextDocumentIdentifier(uri), rng, lsp.CodeActionContext(diagnostics=diagnostics)
                )
            )
        )

    def shutdown(self) -> int:
        """shutdown → exit; the server's exit status."""
        self.run(self.client.shutdown_async(None))
        self.notify(self.client.exit, None)
        proc = self.client._server
        self.run(asyncio.wait_for(proc.wait(), 30))
        self.run(self.client.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        return proc.returncode

    def alive(self) -> bool:
        return self.client._server is not None and self.client._server.returncode is None


def uri_of(path: Path) -> str:
    return path.resolve().as_uri()
