"""The families' Python API over the generated kernels. Needs torch (imported on first use, not at import).

    from muh.families import calls
    k = calls.load("generated/h200")      # muh.runtime.load with the families' C interface
    calls.reduce(x, "sum", kernels=k)     # or muh.runtime.set_default(k) / MUH_KERNELS_DIR and omit kernels=

Each entry point lives in its family's folder (the record's ``python_ops``: ``reduce``, ``scan``,
``transform``, ``topk``, ``histogram_even``, ``segmented_reduce``); this module exports them all. Every op checks its
tensor (CUDA, contiguous, supported dtype) before any kernel runs and raises TypeError / ValueError naming the
op and the fix; kernel-side failures raise MuhRuntimeError.
"""

from __future__ import annotations

from muh.families import registry, tensors
from muh.runtime import library
from muh.runtime.dtypes import CODE as DTYPE_CODES  # noqa: F401 - callers read the codes here

# The family records own the types (muh/families/<name>/; api.h prints the same).
SUPPORTED = {r.name: r.dtypes for r in registry.records()}
workspace = tensors.workspace


def signatures() -> dict:
    """{function: (restype, argtypes)} of the generated C interface (every family's)."""
    return library.signatures(registry.api())


def load(gen_dir, backend: str = "torch", arch: str | None = None, verbose: bool = False):
    """``muh.runtime.load`` with the families' C interface (what a ``capi`` library's calls need)."""
    return library.load(gen_dir, backend, arch, verbose, api=registry.api())


def __getattr__(name: str):
    """The Python entry points the family records add (``reduce``, ``histogram_even``, …)."""
    for rec in registry.records():
        if name in rec.python_ops:
            return rec.python_ops[name]
    raise AttributeError(name)
