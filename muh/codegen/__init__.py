"""Generate: run every registered emitter over a derived spec."""

from __future__ import annotations

from muh.codegen.base import BuildContext, Emitter, GeneratedFile
from muh.diagnostics import Diagnostic, MuhError


def generate(ctx: BuildContext, only: set[str] | None = None) -> list[GeneratedFile]:
    from muh.codegen.registry import emitters

    files: dict[str, tuple[str, GeneratedFile]] = {}
    diags: list[Diagnostic] = []
    seen = {id(d) for d in ctx.diagnostics}  # derive's diagnostics about the deploy block join the build's, once
    ctx.diagnostics.extend(d for d in ctx.derived.deploy_diagnostics if id(d) not in seen)
    for name, emit in sorted(emitters().items()):
        if only and name not in only:
            continue
        for f in emit(ctx):
            if f.path in files:
                diags.append(Diagnostic("E-EMIT", f"emitters `{files[f.path][0]}` and `{name}` both write {f.path}"))
            files[f.path] = (name, f)
    diags.extend(ctx.diagnostics)
    if any(d.is_error for d in diags):
        raise MuhError(diags)
    return _formatted([f for _, (_, f) in sorted(files.items())])


def _formatted(files: list[GeneratedFile]) -> list[GeneratedFile]:
    """The C++ among ``files`` formatted by the pinned clang-format in muh's one style (cxx_format)."""
    from dataclasses import replace

    from muh.codegen import cxx_format

    done = cxx_format.format_many({f.path: f.content for f in files if cxx_format.is_cxx(f.path)})
    return [replace(f, content=done[f.path]) if f.path in done else f for f in files]


__all__ = ["BuildContext", "Emitter", "GeneratedFile", "generate"]
