"""Emitter `ops_package`: ``muh_kernels/``, the LLM serving ops as a Python package for the serving image.

Output (in the folder of the kernels it builds on: the same prefix as the ``kernels`` and ``ops``
emitters, ``""`` for a single hardware)::

    muh_kernels/__init__.py      the target's constants (warp size, C++ level, compiler flags) and library_path()
    muh_kernels/__main__.py      python -m muh_kernels --build SRC | --check  (stdlib only)
    muh_kernels/build_info.cu    compiled with the ops: refuses a command line whose warp size is not the headers'
    muh_kernels/vllm_ops.py      the plugin's provider: loads libmuh_ops.so or raises the reason
    muh_kernels/_provider.py     muh/runtime/vllm_provider.py  ┐ copied byte for byte (the runtime imports its own
    muh_kernels/selftest.py      muh/runtime/selftest.py       │ modules relatively): one source of truth for the ops'
    muh_kernels/llm.py           muh/runtime/llm.py            │ Python side; no pydantic, lark, jinja2 or muh CLI
    muh_kernels/errors.py, …     their imports' closure        ┘

The image copies the package beside vLLM, runs ``--build <folder>`` (the spec's toolchain: nvcc on
NVIDIA, the CoreX SDK's clang++ on the BI-V100; no compiler → a recorded reason, no library) and
``--check``; vLLM's general plugin then imports ``muh_kernels.vllm_ops``.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.templates import render
from muh.diagnostics import Diagnostic, Severity
from muh.runtime.package import OPS_PACKAGE, PROVIDER_MODULE  # noqa: F401 - PROVIDER_MODULE: its users read it here
from muh.runtime.toolchain import Toolchain, cplusplus_range

PKG = "muh.codegen.ops_package"
NAME = OPS_PACKAGE
LIBRARY = "libmuh_ops.so"
SOURCES = ("kernels/common.cu", "kernels/ops.cu")  # relative to the generated folder of the target
RUNTIME = Path(__file__).resolve().parents[2] / "runtime"  # the copy's sources, read as text
ENTRY = ("vllm_provider", "_provider")  # muh/runtime/vllm_provider.py ships as muh_kernels/_provider.py
EXTRA = (
    "selftest",
)  # run at start as `python3 -m muh_kernels.selftest` (issue 37.3), copied with its imports' closure
# third-party modules the image has (vLLM's own dependencies); anything else is refused
IMAGE_MODULES = frozenset({"torch", "vllm"})


@dataclass(frozen=True)
class Recipe:
    """How the image compiles the ops for one hardware (decided here; the package only runs it)."""

    hardware: str
    compiler: str  # nvcc | clang
    cxx: int  # the spec's toolchain { cxx }
    warp_size: int  # the spec's warp size (== the generated warp layer's, checked by build_info.cu)
    arch: str | None
    flags: tuple[str, ...]  # before `-I <include> -o <out> <sources>`; `{sdk}` = the toolchain's root
    link: tuple[str, ...]  # after the sources
    candidates: tuple[str, ...]  # where the image looks for the compiler (after $MUH_CUDA_COMPILER)


def recipe(hw) -> Recipe:
    """The ops library's command for ``hw``: muh.runtime.toolchain's ``shared_library`` of its toolchain."""
    tc = Toolchain.of(hw)
    cmd = tc.shared_library()
    return Recipe(hw.name, tc.compiler, tc.cxx, hw.warp_size, tc.arch, cmd.flags, cmd.link, tc.candidates)


def targets(ctx: BuildContext) -> list[tuple[str, object]]:
    """(path prefix, Hardware) of every folder that gets the package: where the ops are generated,
    except warp-emulation builds (a test device, not a deployment)."""
    return [(t.prefix, t.hardware) for t in ctx.derived.kernels.native()]


def prefix_for(ctx: BuildContext, hardware: str) -> str | None:
    """The folder prefix of ``hardware``'s package, or None when this build has none for it."""
    return next((p for p, hw in targets(ctx) if hw.name == hardware), None)


class RuntimeCopyError(ValueError):
    """A runtime module cannot be shipped (it needs something the image lacks, or reaches outside its copy)."""


def _imports(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(sibling modules imported relatively, other top-level modules imported) anywhere in a runtime module."""
    siblings, other = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            other.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            other.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            siblings.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom):
            raise RuntimeCopyError(f"`from {'.' * node.level}{node.module or ''} import …` reaches outside muh/runtime")
    return siblings, other


def runtime_modules(runtime: Path = RUNTIME) -> dict[str, str]:
    """{module name in the package: source} — the provider and the closure of its imports of sibling
    runtime modules, copied byte for byte: the runtime imports its own modules relatively
    (``from . import llm``, ``from .errors import …``), so they resolve inside the package as they do in
    muh.runtime. Raises RuntimeCopyError for an import the copy would not resolve: muh by name, a module
    outside muh/runtime, anything the image lacks, or the provider under its muh/runtime name."""
    out: dict[str, str] = {}
    todo = [ENTRY[0], *(e for e in EXTRA if runtime == RUNTIME or (runtime / f"{e}.py").is_file())]
    while todo:
        mod = todo.pop()
        path = runtime / f"{mod}.py"
        if not path.is_file():
            raise RuntimeCopyError(f"muh/runtime/{mod}.py does not exist")
        text = path.read_text(encoding="utf-8")
        try:
            siblings, other = _imports(ast.parse(text, str(path)))
        except RuntimeCopyError as e:
            raise RuntimeCopyError(f"muh/runtime/{mod}.py: {e}") from None
        if "muh" in other:
            raise RuntimeCopyError(
                f"muh/runtime/{mod}.py imports muh by name, which the serving image lacks: "
                "import the runtime's own modules relatively (`from . import x`)"
            )
        foreign = sorted(
            m for m in other if m not in sys.stdlib_module_names and m not in IMAGE_MODULES and m != "__future__"
        )
        if foreign:
            raise RuntimeCopyError(f"muh/runtime/{mod}.py imports {', '.join(foreign)}, which the serving image lacks")
        if ENTRY[0] in siblings:
            raise RuntimeCopyError(f"muh/runtime/{mod}.py imports {ENTRY[0]}, which ships as {NAME}.{ENTRY[1]}")
        out[ENTRY[1] if mod == ENTRY[0] else mod] = text
        todo.extend(sorted(d for d in siblings if d not in out and d not in todo))
    return dict(sorted(out.items()))


def runtime_modules_cached(runtime: Path | None = None) -> dict[str, str]:
    """``runtime_modules()``, kept in muh's private cache under the hash of every muh/runtime source
    (parsing them is a tenth of a build); any change of a source is a new key."""
    import hashlib
    import json as _json

    from muh import cache

    runtime = RUNTIME if runtime is None else runtime
    digest = hashlib.sha256()
    for path in sorted(runtime.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    folder = cache.private("ops-package")
    hit = folder / f"runtime-{digest.hexdigest()[:32]}.json" if folder is not None else None
    if hit is not None:
        try:
            data = _json.loads(hit.read_text(encoding="utf-8"))
            if isinstance(data, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
                return data
        except (OSError, ValueError):
            pass
    out = runtime_modules(runtime)
    if hit is not None:
        try:
            from muh.output import replace_file

            replace_file(hit, _json.dumps(out, sort_keys=True))
        except OSError:
            pass
    return out


def emit(ctx: BuildContext) -> list[GeneratedFile]:
    found = targets(ctx)
    if not found:
        return []
    try:
        copies = runtime_modules_cached()
    except (RuntimeCopyError, SyntaxError, OSError) as e:
        ctx.diagnostics.append(
            Diagnostic(
                "E-OPS-PACKAGE",
                f"muh_kernels cannot be packaged: {e}",
                None,
                hint="the ops' Python side must need only the stdlib, torch and vllm",
            )
        )
        return []
    header = ctx.header("#")
    label = ctx.spec_label
    files: list[GeneratedFile] = []
    for prefix, hw in found:
        r = recipe(hw)
        if r.arch is None:
            ctx.diagnostics.append(
                Diagnostic(
                    "W-OPS-ARCH",
                    f"no target architecture for `{hw.name}`: muh_kernels is built for the compiler's default",
                    ctx.spec.span_of(("hardware", hw.name)),
                    hint="set toolchain { arch = … } or compute_capability",
                    severity=Severity.warning,
                )
            )
        tc = Toolchain.of(hw)
        lo, hi = cplusplus_range(tc.cxx)
        common = dict(header=header, spec=label, recipe=r, library=LIBRARY, sources=SOURCES, name=NAME)
        base = f"{prefix}{NAME}"
        files += [
            GeneratedFile(f"{base}/__init__.py", render(PKG, "init.py.j2", **common)),
            GeneratedFile(f"{base}/__main__.py", render(PKG, "main.py.j2", **common)),
            GeneratedFile(f"{base}/vllm_ops.py", render(PKG, "vllm_ops.py.j2", **common)),
            GeneratedFile(
                f"{base}/build_info.cu",
                render(
                    PKG,
                    "build_info.cu.j2",
                    header_cxx=ctx.header("//"),
                    cplusplus_lo=lo,
                    cplusplus_hi=hi,
                    std=tc.std,
                    warp_define=tc.warp_define()[0],
                    warp_flag=tc.warp_flag,
                    **common,
                ),
            ),
        ]
        for mod, text in copies.items():
            src = ENTRY[0] if mod == ENTRY[1] else mod
            files.append(
                GeneratedFile(
                    f"{base}/{mod}.py", f"{header}\n# copied from muh/runtime/{src}.py, byte for byte\n{text}"
                )
            )
    return files
