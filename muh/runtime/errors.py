"""Errors the runtime raises (plain Python: no torch needed)."""

from __future__ import annotations


class MuhRuntimeError(RuntimeError):
    """A kernel refused its input or failed; the message comes from the generated C interface."""


class MuhBuildError(RuntimeError):
    """The generated kernels did not compile; the message holds the compiler's output."""


class NotDifferentiable(RuntimeError):
    """Backward through one of muh's operators, which are inference kernels: the message says what to do."""
