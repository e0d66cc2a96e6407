"""The folder tree is the pipeline: no stage imports a later one, and no module imports itself back
through others (checked over every module's imports, function-level ones included)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "muh"
# The chain, first to last. `pipeline` is the orchestration (parse → … → generate → write) that the
# later stages run a spec through; `cli` is the command on top. Nothing is exempt.
ORDER = [
    "codes",
    "diagnostics",
    "cache",
    "output",
    "grammar",
    "schema",
    "derive",
    "codegen",
    "pipeline",
    "check",
    "deploy",
    "tune",
    "probe_ingest",
    "explain",
    "lsp",
    "cli",
]
# Beside the chain, one way: the runtime (stands alone on GPU machines; the dtype table's owner; imports
# no family) and the kernel family records (pure Python; read by derive, codegen and tune; they call
# the kernels through the runtime).
BESIDE = {"runtime": {"runtime"}, "families": {"families", "runtime"}}


# An engine (muh/engines/<engine>/) is one folder holding its parts of several stages. Its modules take
# their stage from the first name below the engine's folder when that is a stage's name
# (`muh/engines/vllm/codegen/emit.py` is codegen, `muh/engines/vllm/check/verify.py` check); everything else
# under muh/engines (the registry, the interface, the variants' model, an engine's record, its data
# readers) is derive: derive resolves a deploy block with it.
ENGINES = "engines"
# A platform (muh/platforms/<platform>/) is one folder the same way: `muh/platforms/computility/codegen/image.py`
# is codegen; its facts' readers are derive.
PLATFORMS = "platforms"


def stage_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "muh" or len(parts) < 2:
        return None
    if parts[1] in (ENGINES, PLATFORMS):
        return parts[3] if len(parts) > 3 and parts[3] in ORDER else "derive"
    if parts[1] == "__main__":  # `python3 -m muh`: the cli's other door
        return "cli"
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


# The engines' convention (muh/engines/__init__.py PARTS): a call ``stage_parts("<stage>")`` imports every
# registered engine folder's ``<stage>`` package by a computed name. The graph counts it as the caller's
# import of each of them, read from the same registry, so a back-arrow through the convention fails here.
LOADER = "stage_parts"


def engine_parts(stage: str, registry=None) -> set[str]:
    """The modules a ``stage_parts(stage)`` call imports: each registered engine's ``<folder>.<stage>``."""
    from muh import engines

    registry = engines.REGISTRY if registry is None else registry
    return {engines.part_module(plugin, stage) for plugin in registry.values()}


def platform_parts(stage: str) -> set[str]:
    """The modules a ``platforms.stage_parts(stage)`` call imports: each registered platform's ``<folder>.<stage>``."""
    from muh import platforms

    return {f"{p.package}.{stage}" for p in platforms.REGISTRY.values() if f"{p.package}.{stage}" in MODULES}


def loads(tree: ast.AST) -> list[str | None]:
    """The stage named by each ``stage_parts(...)`` call in ``tree`` (None: not a literal string, unseeable)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) == LOADER:
                arg = node.args[0] if node.args else None
                out.append(arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None)
    return out


def _resolve(mod: str) -> str | None:
    while mod and mod not in MODULES:
        mod = mod.rpartition(".")[0]
    return mod or None


@lru_cache(maxsize=None)
def graph() -> dict[str, set[str]]:
    g = {}
    for name, path in MODULES.items():
        found = imports(path, name)
        for stage in loads(ast.parse(path.read_text(), str(path))):
            found |= (engine_parts(stage) | platform_parts(stage)) if stage is not None else set()
        g[name] = {m for m in map(_resolve, found) if m and m != name}
    return g


def test_every_engine_load_names_its_stage():
    """A ``stage_parts`` call the graph cannot follow (a computed stage) is a hidden dependency."""
    bad = [name for name, path in MODULES.items() if None in loads(ast.parse(path.read_text(), str(path)))]
    assert not bad, f"stage_parts called with a computed stage in: {', '.join(bad)}"


def test_the_convention_s_loads_are_in_the_graph():
    """The registries' convention calls are edges: codegen's registry imports each engine's codegen package,
    check's deploy check each engine's check package."""
    assert engine_parts("codegen") <= graph()["muh.codegen.registry"]
    assert engine_parts("check") <= graph()["muh.check.deploy"]
    assert loads(ast.parse('x = engines.stage_parts("codegen"); stage_parts(s)')) == ["codegen", None]


def missing_parts(registry=None) -> list[str]:
    """Each registered engine's convention module (muh.engines.PARTS) that is not a module of muh, or lacks its
    export; and a registry key that is not its plug-in's name (the key the registries look a plan's engine up by)."""
    from muh import engines

    registry = engines.REGISTRY if registry is None else registry
    out = [
        f"REGISTRY[{k!r}] is the plug-in named {p.name!r} (a plan names its engine by the plug-in's name)"
        for k, p in sorted(registry.items())
        if k != p.name
    ]
    for stage, export in engines.PARTS.items():
        for mod in sorted(engine_parts(stage, registry)):
            if mod not in MODULES:
                out.append(f"{mod}: missing (an engine folder's {stage} package, exporting `{export}`)")
            elif not _defines(MODULES[mod], export):
                out.append(f"{mod}: does not define `{export}`")
    return out


def _defines(path: Path, name: str) -> bool:
    for node in ast.parse(path.read_text(), str(path)).body:
        targets = (
            [node.target] if isinstance(node, ast.AnnAssign) else node.targets if isinstance(node, ast.Assign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


def test_every_registered_engine_has_the_convention_s_parts():
    assert not missing_parts(), "\n".join(missing_parts())


def test_an_engine_without_its_parts_is_found():
    from dataclasses import replace

    from muh import engines

    half = {"half": replace(engines.REGISTRY["vllm"], name="half", package="muh.engines.vllm.derive")}
    assert missing_parts(half) == [
        "muh.engines.vllm.derive.codegen: missing (an engine folder's codegen package, exporting `EMITTERS`)",
        "muh.engines.vllm.derive.check: missing (an engine folder's check package, exporting `check`)",
    ]
    bare = {"bare": replace(engines.REGISTRY["vllm"], name="bare", package="muh")}  # muh.codegen, muh.check: no exports
    assert missing_parts(bare) == ["muh.codegen: does not define `EMITTERS`", "muh.check: does not define `check`"]
    assert missing_parts({"other": engines.REGISTRY["vllm"]}) == [
        "REGISTRY['other'] is the plug-in named 'vllm' (a plan names its engine by the plug-in's name)"
    ]


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


# Each engine's folder is its own: the core reaches an engine only through the interface (muh/engines/base.py)
# and the registry (muh/engines/__init__.py, one line per engine), never by importing the folder's modules.
REGISTRIES = {ENGINES: "muh.engines", PLATFORMS: "muh.platforms"}


def plugin_folders(kind: str = ENGINES) -> list[str]:
    """The packages of every plug-in folder of ``kind`` (``muh.engines.vllm``)."""
    root = PKG / kind
    return sorted(f"muh.{kind}.{d.name}" for d in root.iterdir() if (d / "__init__.py").is_file())


def foreign_imports(kind: str = ENGINES, graph_=None) -> list[str]:
    """Imports of a plug-in folder's modules by a module outside that folder (its registry excepted)."""
    direct = (
        graph_
        if graph_ is not None
        else {n: {m for m in map(_resolve, imports(p, n)) if m and m != n} for n, p in MODULES.items()}
    )
    bad = []
    for folder in plugin_folders(kind):
        for name, deps in sorted(direct.items()):
            if name == folder or name.startswith(folder + ".") or name == REGISTRIES[kind]:
                continue
            bad += [
                f"{name}: imports {m} (only {folder} and the registry {REGISTRIES[kind]} may)"
                for m in sorted(deps)
                if m == folder or m.startswith(folder + ".")
            ]
    return bad


def test_no_module_outside_an_engine_s_folder_imports_it():
    assert not foreign_imports(), "\n".join(foreign_imports())


def test_no_module_outside_a_platform_s_folder_imports_it():
    assert not foreign_imports(PLATFORMS), "\n".join(foreign_imports(PLATFORMS))


def test_the_platforms_codegen_parts_are_in_the_graph():
    assert platform_parts("codegen") and platform_parts("codegen") <= graph()["muh.codegen.registry"]


def test_an_import_of_an_engine_s_module_from_outside_is_found():
    g = {
        "muh.codegen.probe": {"muh.engines.vllm.derive.tuning", "muh.engines.base"},
        "muh.engines": {"muh.engines.vllm"},
        "muh.engines.vllm.codegen.emit": {"muh.engines.vllm.derive.plan"},
    }
    assert foreign_imports(graph_=g) == [
        "muh.codegen.probe: imports muh.engines.vllm.derive.tuning (only muh.engines.vllm and the registry "
        "muh.engines may)"
    ]
