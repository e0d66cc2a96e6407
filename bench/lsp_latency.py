"""How long `muh lsp` takes from an edit of specs/baseline.muh to its diagnostics (target: ≤ 200 ms warm).

A pygls client starts `python -m muh.cli lsp`, opens the baseline (cold: imports and first parse),
then edits it: each edit sets a policy's `threads` to a new value (the document stays valid, so all
of parse → validate → derive runs) or introduces an error found by derive (E-SMEM), and the time
from sending `didChange` to receiving `publishDiagnostics` for that version is recorded. ``idle``
edits wait 0.6 s between edits (the generate stage runs in the pauses, as when someone reads);
``burst`` edits come 30 ms apart and only the last one's latency counts. The in-process time of
the analysis itself (no protocol, no debounce) is measured in the same run for reference.
Usage: python bench/lsp_latency.py [--edits 30]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "baseline.muh"


async def run(edits: int) -> dict:
    client = LanguageClient("bench", "1")
    got: dict[int, float] = {}
    event = asyncio.Event()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diag(params: lsp.PublishDiagnosticsParams) -> None:
        got.setdefault(params.version, time.perf_counter())
        event.set()

    async def until(version: int) -> float:
        while version not in got:
            event.clear()
            await asyncio.wait_for(event.wait(), 30)
        return got[version]

    await client.start_io(sys.executable, "-m", "muh.cli", "lsp", cwd=str(ROOT))
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    uri, text = SPEC.resolve().as_uri(), SPEC.read_text()
    t0 = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "muh", 1, text)))
    cold = await until(1) - t0
    version = 1

    def change(new: str) -> float:
        nonlocal version
        version += 1
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=version, uri=uri), [lsp.TextDocumentContentChangeWholeDocument(new)]))
        return time.perf_counter()

    variants = [text.replace("threads = 384", f"threads = {384 + 64 * (i % 5)}") for i in range(5)]
    variants.append(text.replace("items = 22", "items = 900"))  # a derive-stage error: E-SMEM
    idle = []
    for i in range(edits):
        await asyncio.sleep(0.6)
        sent = change(variants[i % len(variants)])
        idle.append(await until(version) - sent)
    bursts = []
    for i in range(max(3, edits // 10)):
        await asyncio.sleep(0.6)
        for j in range(10):
            sent = change(variants[(i + j) % len(variants)])
            await asyncio.sleep(0.03)
        bursts.append(await until(version) - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"cold": cold, "idle": idle, "bursts": bursts}


def in_process(runs: int) -> list[float]:
    from muh.lsp.analysis import analyze

    text = SPEC.read_text()
    analyze(text, str(SPEC), False)
    return [analyze(text, str(SPEC), False).seconds for _ in range(runs)]


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    return f"median {statistics.median(xs) * 1000:.0f} ms, p90 {p90 * 1000:.0f} ms, max {xs[-1] * 1000:.0f} ms (n={len(xs)})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edits", type=int, default=30)
    args = ap.parse_args()
    r = asyncio.run(run(args.edits))
    from muh.lsp.server import DEBOUNCE_S

    print(f"open → diagnostics (cold start, imports included): {r['cold'] * 1000:.0f} ms")
    print(f"edit → diagnostics, warm, idle between edits: {ms(r['idle'])}  (debounce {DEBOUNCE_S * 1000:.0f} ms included)")
    print(f"last edit of a 10-edit burst (30 ms apart) → diagnostics: {ms(r['bursts'])}")
    print(f"analysis in-process (parse → validate → derive): {ms(in_process(30))}")


if __name__ == "__main__":
    main()
