"""The one way through: parse → validate → derive → generate → write (atomically)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import muh
from muh import output
from muh.codegen import BuildContext, GeneratedFile, generate
from muh.derive import Derived, derive
from muh.diagnostics import Diagnostic
from muh.grammar.parser import read_source
from muh.schema import Spec, load

OUTPUT_ROOT = Path("generated")


@dataclass
class Loaded:
    spec: Spec
    derived: Derived
    source: str


def load_file(path: str | Path) -> Loaded:
    text, shown = read_source(path)
    spec = load(text, shown)
    return Loaded(spec, derive(spec), text)


def render(
    loaded: Loaded, options: dict | None = None, warnings: list[Diagnostic] | None = None
) -> list[GeneratedFile]:
    """Every generated file plus the manifest; the warnings of derive and the emitters are appended to
    ``warnings``, less those the spec acknowledges at their line (``@acknowledged``). The same wherever the
    files go (the manifest names the spec by its path in its repository: ``output.spec_source``)."""
    ctx = BuildContext(loaded.spec, loaded.derived, options=dict(options or {}))
    files = generate(ctx)
    if warnings is not None:
        shown, _ = loaded.spec.acknowledge([d for d in ctx.diagnostics if not d.is_error])
        warnings.extend(shown)
    return files + [_manifest(ctx, files)]


def _manifest(ctx: BuildContext, files: list[GeneratedFile]) -> GeneratedFile:
    """The one file that changes with every edit of the spec: its hash and its path in its repository
    (``source``, so a build of another spec of the same name is found); the other files name the spec by
    its file name only."""
    meta = {
        "@generated": ctx.header_text(),
        "muh_version": muh.__version__,
        "spec": ctx.spec_label,
        "spec_sha256": ctx.spec.sha256,
        "options": ctx.options,
    }
    source = output.spec_source(ctx.spec.file) if ctx.spec.file else None
    if source is not None:
        meta["source"] = source
    return GeneratedFile(output.MANIFEST, output.manifest_text(meta, {f.path: f.content for f in files}))


def write_atomic(files: list[GeneratedFile], out: Path) -> None:
    """Swap ``files`` in as the folder ``out``: all or nothing, never losing a file muh did not write
    (the rules are in muh/output.py)."""
    output.write_folder({f.path: (f.content, f.executable) for f in files}, Path(out))


def build(
    spec_path: str | Path,
    out: str | Path | None = None,
    options: dict | None = None,
    warnings: list[Diagnostic] | None = None,
) -> tuple[Path, list[GeneratedFile]]:
    loaded = load_file(spec_path)
    target = (
        Path(out) if out is not None else OUTPUT_ROOT / output.default_folder_name(loaded.spec.name, str(spec_path))
    )
    if out is None:
        output.refuse_other_spec(target, loaded.spec.file)
    files = render(loaded, options, warnings)
    write_atomic(files, target)
    return target, files
