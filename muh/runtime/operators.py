"""muh's LLM ops as PyTorch operators: ``torch.ops.muh.<op>``.

    from muh.runtime import operators
    operators.load("generated/h200")          # or a built libmuh_ops.so; MUH_OPS_LIB / MUH_KERNELS_DIR
    y = torch.ops.muh.gemma_rms_norm(x, w, 1e-6)

``SCHEMAS`` is the one table of the operators (names, argument types, mutation annotations ``(a!)``);
it is registered from here for both backends, with a fake (meta) implementation per operator, so
``torch.compile(fullgraph=True)``, ``torch.library.opcheck`` and CUDA-graph capture see real operators.
None is differentiable (inference kernels: there is no backward kernel), and each says so as
``torch.library`` asks — no "autograd kernel was not registered" warning, no silent wrong gradient:
the extension registers PyTorch's ``autogradNotImplementedFallback`` for each (C++, nothing on the call
path); the ctypes fallback, in Python, an autograd formula that raises :class:`NotDifferentiable` on
backward for a functional operator (``register_autograd``) and, for one that writes its ``(a!)``
arguments, an Autograd kernel that marks them so their backward raises the same
(``register_autograd`` takes no mutating operator):

* **extension** (the default): ``kernels/bindings/ops_torch.cpp`` (generated beside the kernels),
  compiled by ``torch.utils.cpp_extension`` against PyTorch's headers and linked to
  ``libmuh_ops.so``, which the spec's toolchain builds (``llm.build``): the CUDA implementations
  are C++ (no Python on the call path);
* **ctypes** fallback, only where the extension cannot build (no PyTorch headers, no host compiler):
  the same schemas implemented in Python over ``llm``'s library; the reason is logged once
  (logger ``muh.ops``) and kept in ``Loaded.reason``.

No torch at import time.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import MuhBuildError, MuhRuntimeError, NotDifferentiable

LOG = logging.getLogger("muh.ops")
NAMESPACE = "muh"

# op -> schema (PyTorch's function-schema language); `Tensor(a!)`: written in place.
SCHEMAS = {
    "rms_norm": "(Tensor(a!) out, Tensor input, Tensor weight, float epsilon) -> ()",
    "fused_add_rms_norm": "(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float epsilon, "
    "float residual_alpha=1.0) -> ()",
    "gemma_rms_norm": "(Tensor input, Tensor weight, float epsilon) -> Tensor",
    "gemma_fused_add_rms_norm": "(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float epsilon, "
    "float residual_alpha=1.0) -> ()",
    "gated_rms_norm": "(Tensor input, Tensor gate, Tensor weight, float epsilon) -> Tensor",
    "silu_and_mul": "(Tensor(a!) out, Tensor x) -> ()",
    "shared_expert_combine": "(Tensor routed, Tensor shared, Tensor gate) -> Tensor",
    "topk_softmax": "(Tensor(a!) topk_weights, Tensor(b!) topk_ids, Tensor(c!) token_expert_indicies, "
    "Tensor gating_output) -> ()",
    "moe_topk_softmax": "(Tensor gating_output, int topk, bool renormalize=False, ScalarType? id_dtype=None) "
    "-> (Tensor, Tensor)",
    "softmax": "(Tensor(a!) out, Tensor x) -> ()",
}
BINDING = "kernels/bindings/ops_torch.cpp"


@dataclass(frozen=True)
class Loaded:
    backend: str  # "extension" | "ctypes"
    library: str  # libmuh_ops.so
    reason: str = ""  # why ctypes (empty for the extension)


_state: dict = {}  # "lib": torch.library.Library, "loaded": Loaded


def fake_api(torch) -> str:
    """How this torch registers a fake (meta) implementation, feature-detected (torch 2.1 … 2.11+):
    ``register_fake`` (torch ≥ 2.4), ``impl_abstract`` (2.2, 2.3; deprecated later), else a kernel
    for the ``Meta`` dispatch key (2.1: meta tensors, and FakeTensor falls back to meta kernels)."""
    for name in ("register_fake", "impl_abstract"):
        if callable(getattr(torch.library, name, None)):
            return name
    return "Meta"


def _define(torch) -> None:
    """Register the schemas and the fake implementations (once per process). Uses only what torch 2.1
    has (``torch.library.Library``: ``define``, ``impl``) plus the fake API ``fake_api`` finds."""
    if "lib" in _state:
        return
    lib = torch.library.Library(NAMESPACE, "DEF")
    for name, schema in SCHEMAS.items():
        lib.define(name + schema)
    api = fake_api(torch)
    for name, fn in _fakes(torch).items():
        if api == "Meta":
            lib.impl(name, fn, "Meta")
        else:
            getattr(torch.library, api)(f"{NAMESPACE}::{name}", fn, lib=lib)
    _state["lib"] = lib


def not_differentiable(name: str) -> NotDifferentiable:
    return NotDifferentiable(
        f"torch.ops.{NAMESPACE}.{name} is not differentiable (muh's ops are inference kernels "
        "with no backward): run it under torch.no_grad() / torch.inference_mode(), or use a "
        "differentiable PyTorch equivalent where gradients are needed"
    )


def mutated(schema: str) -> list[int]:
    """The positions of the arguments ``schema`` writes in place (``Tensor(a!)``)."""
    args = schema.rpartition(" -> ")[0].strip()[1:-1]
    return [i for i, arg in enumerate(args.split(", ")) if "!)" in arg]


def register_autograd(torch, lib) -> None:
    """The ctypes backend's autograd registration: raise on backward (see the module's docstring); the
    extension registers its own in C++."""

    class Refuse(torch.autograd.Function):
        """Marks the tensors an operator wrote as its outputs; their backward raises."""

        @staticmethod
        def forward(ctx, name, count, *tensors):
            ctx.name = name
            written = tensors[:count]
            ctx.mark_dirty(*written)
            return written if count != 1 else written[0]

        @staticmethod
        def backward(ctx, *grads):
            raise not_differentiable(ctx.name)

    def refuse_formula(name):
        def backward(ctx, *grads):
            raise not_differentiable(name)

        return backward

    def mutating_kernel(name, op, positions):
        def kernel(*args, **kwargs):
            with torch._C._AutoDispatchBelowAutograd():
                op(*args, **kwargs)
            tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
            if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
                written = tuple(args[i] for i in positions if i < len(args))
                inputs = tuple(t for t in tensors if t.requires_grad and all(t is not w for w in written))
                if written:
                    Refuse.apply(name, len(written), *written, *inputs)

        return kernel

    formula = getattr(torch.library, "register_autograd", None)  # torch >= 2.4
    for name, schema in SCHEMAS.items():
        op = getattr(getattr(torch.ops, NAMESPACE), name).default
        positions = mutated(schema)
        if positions:
            lib.impl(name, mutating_kernel(name, op, positions), "Autograd")
        elif formula is not None:
            formula(f"{NAMESPACE}::{name}", refuse_formula(name), lib=lib)
        else:  # torch 2.1 - 2.3: the same formula as an autograd.Function
            lib.impl(name, _functional_kernel(torch, name, op), "Autograd")


def _functional_kernel(torch, name, op):
    class Refuse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            with torch._C._AutoDispatchBelowAutograd():
                return op(*args)

        @staticmethod
        def backward(ctx, *grads):
            raise not_differentiable(name)

    return lambda *args: Refuse.apply(*args)


def _fakes(torch) -> dict:
    def nothing(*args, **kwargs):
        return None

    def like(input, *args, **kwargs):  # noqa: A002 - the schema's name
        return input.new_empty(input.shape)

    def route(gating_output, topk, renormalize=False, id_dtype=None):
        experts = gating_output.shape[-1]
        rows = gating_output.numel() // experts if experts else 0
        return (
            gating_output.new_empty((rows, topk), dtype=torch.float32),
            gating_output.new_empty((rows, topk), dtype=id_dtype or torch.int32),
        )

    return {
        "rms_norm": nothing,
        "fused_add_rms_norm": nothing,
        "gemma_rms_norm": like,
        "gemma_fused_add_rms_norm": nothing,
        "gated_rms_norm": like,
        "silu_and_mul": nothing,
        "shared_expert_combine": like,
        "topk_softmax": nothing,
        "moe_topk_softmax": route,
        "softmax": nothing,
    }


def build_extension(gen_dir, library: str, verbose: bool = False) -> str:
    """Compile the generated binding against PyTorch, linked to ``library``; returns the .so path.
    The C++ standard is PyTorch's own (cpp_extension's default): a different one than the headers were
    released for is an ABI mismatch (an H200 run with -std=c++17 on torch 2.11 crashed on a throw)."""
    from torch.utils.cpp_extension import load

    from . import build as B
    from .toolchain import TORCH_BINDING_CFLAGS

    gen = Path(gen_dir)
    src = gen / BINDING
    if not src.is_file():
        raise MuhBuildError(f"{src} is missing: regenerate with `muh build` (emitter `ops`)")
    key = B.content_hash(gen, "ops-torch", library)[:16]
    name = f"muh_ops_torch_{key}"
    build_dir = B.cache_root() / name
    build_dir.mkdir(parents=True, exist_ok=True)
    libdir = str(Path(library).parent)
    try:
        load(
            name=name,
            sources=[str(src)],
            extra_include_paths=[str(gen / "include")],
            extra_cflags=list(TORCH_BINDING_CFLAGS),
            extra_ldflags=[library, f"-Wl,-rpath,{libdir}"],
            build_directory=str(build_dir),
            is_python_module=False,
            verbose=verbose,
        )
    except Exception as e:  # noqa: BLE001 - the compiler's message is the useful part
        raise MuhBuildError(f"building the PyTorch operators from {src} failed: {e}") from e
    return str(build_dir / f"{name}.so")


def load(source=None, *, arch: str | None = None, std: str | None = None, backend: str = "auto") -> Loaded:
    """Register ``torch.ops.muh.*`` from ``source`` (a generated folder, or a built ``libmuh_ops.so``
    for the ctypes backend; None: ``MUH_KERNELS_DIR`` / ``MUH_OPS_LIB``). ``backend``: ``auto``
    (the extension; ctypes with a logged reason when it cannot build), ``extension``, ``ctypes``."""
    import torch

    from . import llm

    if "loaded" in _state:
        return _state["loaded"]
    if backend not in ("auto", "extension", "ctypes"):
        raise MuhRuntimeError(f"muh ops: unknown backend `{backend}` (auto, extension or ctypes)")
    source = source or os.environ.get("MUH_KERNELS_DIR") or os.environ.get("MUH_OPS_LIB")
    if not source:
        raise MuhRuntimeError(
            "muh ops: no kernels: operators.load(<generated dir or libmuh_ops.so>) or set MUH_KERNELS_DIR / MUH_OPS_LIB"
        )
    _define(torch)
    lib = llm.load(source, arch=arch, std=std)
    reason = ""
    if backend != "ctypes":
        if not os.path.isdir(str(source)):
            reason = f"{source} is a built library, not a generated folder: the binding source is not there"
        else:
            try:
                build_extension(source, lib.origin)
                loaded = Loaded("extension", lib.origin)
                _state["loaded"] = loaded
                return loaded
            except (MuhBuildError, ImportError, OSError) as e:
                reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if backend == "extension":
            raise MuhBuildError(f"muh ops: the PyTorch extension is unavailable: {reason}")
        LOG.warning("muh ops: serving torch.ops.muh.* through ctypes: %s", reason)
    from . import operators_ctypes

    operators_ctypes.register(_state["lib"])
    register_autograd(torch, _state["lib"])
    loaded = Loaded("ctypes", lib.origin, reason or "backend=ctypes was asked for")
    _state["loaded"] = loaded
    return loaded


def loaded() -> Loaded | None:
    return _state.get("loaded")
