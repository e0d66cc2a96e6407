"""A loaded set of generated kernels behind one call interface (ctypes library or torch extension)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

# The C interface the family records declare (muh/families/) is the caller's to pass (``api``: CFuncs of
# muh/runtime/c_api.py, typed by its ``signatures``); the runtime imports no family record.
from .c_api import signatures
from .errors import MuhRuntimeError


class Kernels:
    """Generated kernels of one spec; ``call`` raises MuhRuntimeError with the kernel's message."""

    def __init__(self, fns, origin: str):
        self._fns = fns
        self.origin = origin
        self.workspaces: dict = {}  # (device, name) -> [tensor, epoch]

    @classmethod
    def from_library(cls, path, api) -> "Kernels":
        """The C library at ``path``, its functions typed by the C interface ``api``."""
        lib = ctypes.CDLL(str(path))
        for name, (res, args) in signatures(api).items():
            f = getattr(lib, name, None)  # a partial build (bench variants) lacks some
            if f is not None:
                f.restype, f.argtypes = res, args
        return cls(lib, str(path))

    def raw(self, name: str):
        return getattr(self._fns, name)

    def last_error(self) -> str:
        msg = self.raw("muh_last_error")()
        return msg.decode() if isinstance(msg, bytes) else str(msg)

    @property
    def spec_name(self) -> str:
        s = self.raw("muh_spec_name")()
        return s.decode() if isinstance(s, bytes) else str(s)

    @property
    def warp_size(self) -> int:
        return int(self.raw("muh_warp_size")())

    @property
    def physical_warp_size(self) -> int:
        return int(self.raw("muh_physical_warp_size")())

    def call(self, name: str, *args) -> None:
        rc = self.raw(name)(*args)
        if rc:
            raise MuhRuntimeError(self.last_error())


_DEFAULT: Kernels | None = None


def load(gen_dir, backend: str = "torch", arch: str | None = None, verbose: bool = False, api=None) -> Kernels:
    """Build (cached) and load the kernels generated under ``gen_dir``.

    backend ``torch``: a PyTorch extension (torch.utils.cpp_extension.load); ``capi``: a plain
    shared library through ctypes (no PyTorch headers, fast to build; ``arch`` defaults to the
    current device's), typed by the C interface ``api`` (``muh.families.api()``; a callable is called
    when needed). ``muh.families.calls.load`` passes it.
    """
    from . import build

    gen_dir = Path(gen_dir)
    if not (gen_dir / "kernels").is_dir():
        raise MuhRuntimeError(f"{gen_dir} holds no generated kernels (expected {gen_dir}/kernels/*.cu)")
    if backend == "torch":
        return Kernels(build.build_torch_extension(gen_dir, verbose=verbose), f"torch:{gen_dir}")
    if backend == "capi":
        if api is None:
            raise MuhRuntimeError(
                "the capi backend needs the C interface of the kernels: pass api= "
                "(muh.families.api()), or load through muh.families.calls.load"
            )
        if arch is None:
            import torch

            major, minor = torch.cuda.get_device_capability()
            arch = f"sm_{major}{minor}"
        return Kernels.from_library(build.build_capi(gen_dir, arch=arch), api() if callable(api) else api)
    raise MuhRuntimeError(f"unknown backend `{backend}` (torch or capi)")


def set_default(k: Kernels | None) -> None:
    global _DEFAULT
    _DEFAULT = k


def default(api=None) -> Kernels:
    """The kernels set by ``set_default``, else loaded from ``MUH_KERNELS_DIR`` (backend ``MUH_BACKEND``,
    default torch; a capi library typed by ``api``)."""
    global _DEFAULT
    if _DEFAULT is None:
        d = os.environ.get("MUH_KERNELS_DIR")
        if not d:
            raise MuhRuntimeError(
                "no kernels loaded: call muh.runtime.load(<generated dir>) and pass kernels=, "
                "call muh.runtime.set_default(...), or set MUH_KERNELS_DIR"
            )
        _DEFAULT = load(d, backend=os.environ.get("MUH_BACKEND", "torch"), api=api)
    return _DEFAULT
