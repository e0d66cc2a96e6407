"""Compile generated kernels: a plain shared library (C interface, for ctypes) or a PyTorch extension.

Both are cached under ``MUH_CACHE_DIR`` (default ``~/.cache/muh``) by a hash of every generated
source and header plus the flags, so a rebuild happens exactly when the generated code changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .errors import MuhBuildError
from .toolchain import TORCH_KERNELS_CFLAGS, Toolchain, find_nvcc

LIB_NAME = "libmuh_kernels.so"


def cache_root() -> Path:
    return Path(os.environ.get("MUH_CACHE_DIR") or Path.home() / ".cache" / "muh")


def sources(gen_dir: Path) -> list[Path]:
    gen_dir = Path(gen_dir)
    return sorted((gen_dir / "kernels").glob("*.cu"))


def content_hash(gen_dir: Path, *flags: str) -> str:
    gen_dir = Path(gen_dir)
    h = hashlib.sha256()
    files = sorted(p for sub in ("include", "kernels") for p in (gen_dir / sub).rglob("*") if p.is_file())
    for p in files:
        h.update(p.relative_to(gen_dir).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    h.update("\0".join(flags).encode())
    return h.hexdigest()


def nvcc() -> str:
    exe = find_nvcc()
    if exe is None:
        raise MuhBuildError("nvcc not found: install the CUDA toolkit, put nvcc on PATH or set $MUH_NVCC to its path")
    return exe


def nvcc_flags(arch: str, std: str = "c++17") -> list[str]:
    """nvcc's flags for one object of a shared library for ``arch`` (muh.runtime.toolchain: ``objects``)."""
    return list(Toolchain.lab(arch, std).objects())


def _run(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise MuhBuildError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")


def build_capi(
    gen_dir,
    arch: str = "sm_90",
    std: str = "c++17",
    cache: Path | None = None,
    jobs: int | None = None,
    extra: tuple[str, ...] = (),
) -> Path:
    """Build ``libmuh_kernels.so`` (C interface) for ``arch``; returns its path (cached)."""
    gen_dir = Path(gen_dir)
    flags = nvcc_flags(arch, std) + list(extra)
    key = content_hash(gen_dir, *flags)
    out_dir = Path(cache or cache_root()) / f"capi-{key[:16]}"
    lib = out_dir / LIB_NAME
    if lib.exists():
        return lib
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=out_dir.parent))
    try:
        srcs = sources(gen_dir)
        objs = [tmp / (s.stem + ".o") for s in srcs]
        inc = ["-I", str(gen_dir / "include")]
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
            list(pool.map(lambda so: _run([nvcc(), *flags, *inc, "-c", str(so[0]), "-o", str(so[1])]), zip(srcs, objs)))
        _run([nvcc(), *Toolchain.lab(arch, std).link(), "-o", str(tmp / LIB_NAME), *map(str, objs)])
        try:
            tmp.rename(out_dir)
        except OSError:  # built concurrently by someone else
            pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return lib


def build_torch_extension(gen_dir, cache: Path | None = None, verbose: bool = False):
    """Build and import the generated PyTorch extension (torch.utils.cpp_extension.load)."""
    from torch.utils.cpp_extension import load

    gen_dir = Path(gen_dir)
    cflags = list(TORCH_KERNELS_CFLAGS)
    key = content_hash(gen_dir, "torch", *cflags)
    name = f"muh_kernels_{key[:16]}"
    build_dir = Path(cache or cache_root()) / name
    build_dir.mkdir(parents=True, exist_ok=True)
    srcs = [str(s) for s in sources(gen_dir)] + [str(gen_dir / "kernels" / "bindings" / "torch_ops.cpp")]
    try:
        return load(
            name=name,
            sources=srcs,
            extra_include_paths=[str(gen_dir / "include")],
            extra_cflags=cflags,
            extra_cuda_cflags=cflags,
            build_directory=str(build_dir),
            verbose=verbose,
        )
    except Exception as e:  # noqa: BLE001 - the compiler's message is the useful part
        raise MuhBuildError(f"building the PyTorch extension from {gen_dir} failed: {e}") from e
