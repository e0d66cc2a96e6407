"""muh.runtime: build, load and call the generated kernels from PyTorch.

Importing this package imports neither torch nor the compiler stages (pydantic, lark): the
runtime runs on machines that only have the generated files, torch and nvcc.

    from muh.runtime import load
    from muh.families import calls
    k = load("generated/h200")            # builds (cached by content hash) and loads
    calls.reduce(x, "sum", kernels=k)     # or set_default(k) / MUH_KERNELS_DIR and omit kernels=
"""

from __future__ import annotations

from .errors import MuhRuntimeError

__all__ = ["MuhRuntimeError", "load", "set_default", "default"]


def __getattr__(name):
    if name in ("load", "set_default", "default"):
        from . import library

        return getattr(library, name)
    raise AttributeError(name)
