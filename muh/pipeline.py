"""The one way through: parse → validate → derive → generate → write (atomically)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import muh
from muh.codegen import BuildContext, GeneratedFile, generate
from muh.derive import Derived, derive
from muh.diagnostics import Diagnostic, MuhError
from muh.grammar.parser import read_source
from muh.schema import Spec, load


@dataclass
class Loaded:
    spec: Spec
    derived: Derived
    source: str


def load_file(path: str | Path) -> Loaded:
    text, shown = read_source(path)
    spec = load(text, shown)
    return Loaded(spec, derive(spec), text)


def render(loaded: Loaded, options: dict | None = None, warnings: list[Diagnostic] | None = None) -> list[GeneratedFile]:
    """Every generated file plus the manifest; emitters' warnings are appended to ``warnings``."""
    ctx = BuildContext(loaded.spec, loaded.derived, options=dict(options or {}))
    files = generate(ctx)
    if warnings is not None:
        warnings.extend(d for d in ctx.diagnostics if not d.is_error)
    return files + [_manifest(ctx, files)]


def _manifest(ctx: BuildContext, files: list[GeneratedFile]) -> GeneratedFile:
    data = {
        "@generated": ctx.header_text(),
        "muh_version": muh.__version__,
        "spec": ctx.spec_label,
        "spec_sha256": ctx.spec.sha256,
        "options": ctx.options,
        "files": {f.path: hashlib.sha256(f.content.encode()).hexdigest() for f in files},
    }
    return GeneratedFile("manifest.json", json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_atomic(files: list[GeneratedFile], out: Path) -> None:
    """Write into a sibling temporary folder, then swap it in: a failure leaves ``out`` as it was."""
    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if out.exists() and not out.is_dir():
            raise MuhError([Diagnostic("E-IO", f"{out} exists and is not a folder", None, hint="choose another -o")])
        if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").is_file():
            raise MuhError([Diagnostic("E-IO", f"{out} is not empty and was not written by muh (no manifest.json)", None,
                                       hint="muh replaces its output folder whole; choose an empty or muh-made folder")])
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
        try:
            for f in files:
                target = tmp / f.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(f.content, encoding="utf-8", newline="\n")
                if f.executable:
                    target.chmod(0o755)
            old = None
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
                os.rename(out, old / "x")
            os.rename(tmp, out)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    except OSError as err:
        raise MuhError([Diagnostic("E-IO", f"cannot write {out}: {err.strerror or err}", None)]) from None


def build(spec_path: str | Path, out: str | Path | None = None, options: dict | None = None,
          warnings: list[Diagnostic] | None = None) -> tuple[Path, list[GeneratedFile]]:
    loaded = load_file(spec_path)
    files = render(loaded, options, warnings)
    target = Path(out) if out is not None else Path("generated") / loaded.spec.name
    write_atomic(files, target)
    return target, files
