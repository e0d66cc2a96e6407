"""clang-format over generated C++: one style (muh/codegen/.clang-format), one pinned clang-format.

The formatter is the `clang-format` wheel (a dependency of muh, pinned: the same input gives the
same bytes on every machine). Results are cached per file content (muh's cache folder), so a build
whose C++ did not change runs no formatter at all; a cold build formats all its C++ files in one
clang-format process.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from muh.diagnostics import Diagnostic, MuhError

VERSION = "23.1.5"  # the pinned clang-format (pyproject.toml's dependency says the same)
SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc")
STYLE = Path(__file__).with_name(".clang-format")
FIX = f"install the pinned formatter: pip install 'clang-format=={VERSION}' (a dependency of muh)"


def is_cxx(path: str) -> bool:
    return path.endswith(SUFFIXES)


@lru_cache(maxsize=1)
def executable() -> str:
    """The wheel's clang-format binary (found without importing its package's metadata: fast)."""
    import importlib.util

    spec = importlib.util.find_spec("clang_format")
    if spec is None or not spec.submodule_search_locations:
        raise MuhError([Diagnostic("E-FORMAT", f"clang-format is not installed; {FIX}")])
    exe = Path(list(spec.submodule_search_locations)[0]) / "data" / "bin" / "clang-format"
    if not exe.is_file():
        raise MuhError([Diagnostic("E-FORMAT", f"clang-format's binary is missing ({exe}); {FIX}")])
    return str(exe)


@lru_cache(maxsize=1)
def _identity() -> bytes:
    """What the output depends on besides the input: the style and the binary (size, mtime)."""
    st = os.stat(executable())
    return STYLE.read_bytes() + f"\0{VERSION}\0{st.st_size}\0{st.st_mtime_ns}\0".encode()


def _check_version() -> None:
    out = subprocess.run([executable(), "--version"], capture_output=True, text=True).stdout
    if f"version {VERSION}" not in out:
        raise MuhError(
            [
                Diagnostic(
                    "E-FORMAT",
                    f"clang-format {out.strip() or '?'} is installed, muh's output is formatted by {VERSION}; {FIX}",
                )
            ]
        )


def _cache_dir() -> Path | None:
    from muh import cache

    return cache.private("clang-format")


def format_many(sources: dict[str, str]) -> dict[str, str]:
    """{path: C++ text} formatted (the path's suffix picks the language); cached per content."""
    if not sources:
        return {}
    folder = _cache_dir()
    ident = _identity()
    keys = {
        p: hashlib.sha256(ident + Path(p).suffix.encode() + b"\0" + t.encode()).hexdigest() for p, t in sources.items()
    }
    out: dict[str, str] = {}
    todo = []
    for p, t in sources.items():
        hit = folder / keys[p] if folder is not None else None
        if hit is not None and hit.is_file():
            out[p] = hit.read_text(encoding="utf-8")
        else:
            todo.append(p)
    if todo:
        _check_version()
        with tempfile.TemporaryDirectory(prefix="muh-format-") as tmp:
            names = {p: os.path.join(tmp, f"{i}{Path(p).suffix}") for i, p in enumerate(todo)}
            for p, name in names.items():
                Path(name).write_text(sources[p], encoding="utf-8")
            _run(list(names.values()))
            for p, name in names.items():
                out[p] = Path(name).read_text(encoding="utf-8")
                if folder is not None:
                    _store(folder / keys[p], out[p])
    return out


def _run(paths: list[str]) -> None:
    """clang-format -i over ``paths``: one process per core, each over its share of the files."""
    n = max(1, min(os.cpu_count() or 1, len(paths) // 8 or 1))
    procs = [
        subprocess.Popen(
            [executable(), "-i", f"--style=file:{STYLE}", *paths[i::n]],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    errs = [p.communicate()[1] for p in procs]
    bad = [e.strip() for p, e in zip(procs, errs) if p.returncode]
    if bad:
        raise MuhError([Diagnostic("E-FORMAT", f"clang-format failed: {bad[0][:500]}")])


def _store(target: Path, text: str) -> None:
    """Write a cache entry atomically (a half-written entry would be read as a formatted file)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
