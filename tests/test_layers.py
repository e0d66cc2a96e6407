"""The folder tree is the pipeline: no stage imports a later one, and no module imports itself back
through others (checked over every module's imports, function-level ones included)."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "muh"
# The chain, first to last. `pipeline` is the orchestration (parse → … → generate → write) that the
# later stages run a spec through; `cli` is the command on top. Nothing is exempt.
ORDER = ["codes", "diagnostics", "cache", "output", "grammar", "schema", "derive", "codegen", "pipeline", "check",
         "deploy", "tune", "probe", "explain", "lsp", "cli"]
# Beside the chain, one way: the runtime (stands alone on GPU machines; the dtype table's owner; imports
# no family) and the kernel family records (pure Python; read by derive, codegen and tune; they call
# the kernels through the runtime).
BESIDE = {"runtime": {"runtime"}, "families": {"families", "runtime"}}


# An engine (muh/engines/<engine>/) is one folder holding its parts of several stages. Its modules take
# their stage from the first name below the engine's folder when that is a stage's name
# (`muh/engines/vllm/codegen/emit.py` is codegen, `muh/engines/vllm/explain.py` explain); everything else
# under muh/engines (the registry, the interface, the variants' model, an engine's record, its data
# readers) is derive: derive resolves a deploy block with it.
ENGINES = "engines"


def stage_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "muh" or len(parts) < 2:
        return None
    if parts[1] == ENGINES:
        return parts[3] if len(parts) > 3 and parts[3] in ORDER else "derive"
    return parts[1].removesuffix(".py")


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = modules()


def imports(path: Path, name: str = "") -> set[str]:
    """Every muh module ``path`` imports (``from pkg import sub`` counts as the submodule)."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            out.update(subs)
            if len(subs) < len(node.names):
                out.add(base)
    return out


def _resolve(mod: str) -> str | None:
    while mod and mod not in MODULES:
        mod = mod.rpartition(".")[0]
    return mod or None


@lru_cache(maxsize=None)
def graph() -> dict[str, set[str]]:
    g = {}
    for name, path in MODULES.items():
        g[name] = {m for m in map(_resolve, imports(path, name)) if m and m != name}
    return g


def test_no_stage_imports_a_later_stage():
    bad = []
    for name, deps in sorted(graph().items()):
        own = stage_of(name)
        for mod in sorted(deps):
            other = stage_of(mod)
            if own in BESIDE:
                if other is not None and other not in BESIDE[own]:
                    bad.append(f"{name}: imports {mod} (the {own} stands beside the chain)")
            elif own in ORDER and other in ORDER and ORDER.index(other) > ORDER.index(own):
                bad.append(f"{name}: imports {mod} (stage {other} comes after {own})")
            elif own is None and other is not None:
                bad.append(f"{name}: imports {mod}")
    assert not bad, "\n".join(bad)


def test_every_module_has_a_stage():
    stages = set(ORDER) | set(BESIDE)
    assert not [m for m in MODULES if stage_of(m) not in stages and m != "muh"]


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circles():
    found = circles(graph())
    print(f"import graph: {len(MODULES)} modules, {sum(map(len, graph().values()))} imports, circles: {len(found)}")
    assert not found, "\n".join(" -> ".join(c) for c in found)


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_runtime_needs_no_spec_stack():
    """muh.runtime runs on GPU machines without lark/pydantic: it may not import the spec stages."""
    bad = []
    for name, deps in graph().items():
        if stage_of(name) in ("runtime", "families"):
            bad += [f"{name} imports {m}" for m in deps if stage_of(m) in ORDER]
    assert not bad, "\n".join(bad)
