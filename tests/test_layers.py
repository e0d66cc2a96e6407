"""The folder tree is the pipeline: no stage imports a later one (checked over every module's imports)."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "muh"
ORDER = ["diagnostics", "cache", "output", "grammar", "schema", "derive", "codegen", "check", "deploy", "tune", "probe"]
# Modules outside the chain: the CLI and the orchestration may import anything; the runtime stands alone.
FREE = {"cli", "pipeline", "explain", "__init__", "runtime"}


def stage_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "muh" or len(parts) < 2:
        return None
    return parts[1].removesuffix(".py")


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_no_stage_imports_a_later_stage():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG.parent).with_suffix("")
        own = stage_of(".".join(rel.parts))
        if own in FREE or own not in ORDER:
            continue
        for mod in imports(path):
            other = stage_of(mod)
            if other in ORDER and ORDER.index(other) > ORDER.index(own):
                bad.append(f"{rel}: imports {mod} (stage {other} comes after {own})")
    assert not bad, "\n".join(bad)


def test_runtime_needs_no_spec_stack():
    """muh.runtime runs on GPU machines without lark/pydantic: it may not import the spec stages."""
    bad = []
    for path in sorted((PKG / "runtime").rglob("*.py")):
        for mod in imports(path):
            if stage_of(mod) in ORDER[1:]:
                bad.append(f"{path.relative_to(PKG.parent)} imports {mod}")
    assert not bad, "\n".join(bad)
