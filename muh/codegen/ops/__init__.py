"""Emitter `ops`: the LLM serving ops (rms_norm, fused_add_rms_norm, silu_and_mul, softmax, topk_softmax).

Output (beside the kernels emitter's warp layer, compiled into the same ``libmuh_kernels.so``)::

    include/muh/ops/ops.h     C interface (its declarations: muh/runtime/c_api.py; ctypes: muh/runtime/llm.py)
    include/muh/ops/ops.cuh   the kernels and their launchers (static CUDA, templates/ops.cuh)
    kernels/ops.cu            ops.cuh instantiated with the policies, printed with provenance; the C entry points
    kernels/bindings/ops_torch.cpp  the CUDA implementations of torch.ops.muh.* (muh/runtime/operators.py)

``generate(target, header)`` renders the files of one ``OpsTarget`` (tests and the bench use it
with the kernels' presets); ``emit(ctx)`` renders derive's target (``Derived.ops``, computed in
muh/derive/ops.py from the hardware's ``reduce`` / ``transform`` policies) for the hardware the
kernels emitter generates for. Codegen computes no number here.
"""

from __future__ import annotations

from typing import Callable

from muh.codegen.templates import render
from muh.derive.ops import OPS_DTYPES, OpsTarget, from_spec
from muh.runtime import c_api, operators
from muh.runtime import dtypes as DT

PKG = "muh.codegen.ops"
FILES = (
    ("include/muh/ops/ops.h", "ops.h.j2", "//"),
    ("include/muh/ops/ops.cuh", "ops.cuh", "//"),  # static: copied as it is
    ("kernels/ops.cu", "ops.cu.j2", "//"),
    ("kernels/bindings/ops_torch_dtypes.h", "ops_torch_dtypes.h.j2", "//"),
    ("kernels/bindings/ops_torch.cpp", "ops_torch.cpp", "//"),  # static: copied as it is
)

__all__ = ["FILES", "OpsTarget", "emit", "from_spec", "generate", "write"]


class OpsConfigError(ValueError):
    """An ops target the kernels cannot be generated for."""


def generate(target: OpsTarget, header: Callable[[str], str]) -> list[tuple[str, str]]:
    errs = target.errors()
    if not target.policies:
        errs.append("no element type has a policy")
    if errs:
        raise OpsConfigError(f"ops for `{target.name}`: " + "; ".join(errs))
    # The element types in the one order of OPS_DTYPES (a tune unit builds one type's); each with its
    # size buckets by rows × hidden, which the C entry points pick (Policy<T, B>, docs/ops.md).
    policies = [target.policies[d] for d in OPS_DTYPES if d in target.policies]
    variables = dict(
        target=target.name,
        warp_size=target.warp_size,
        cxx=target.cxx,
        policies=policies,
        sized=any(p.buckets for p in policies),
        ops_dtypes=OPS_DTYPES,
        aten={d: DT.TABLE[d].aten for d in OPS_DTYPES},
        structs=c_api.OPS_STRUCTS,
        functions=c_api.OPS_API,
        api={f.name: f for f in c_api.OPS_API},
        operators=list(operators.SCHEMAS),
    )
    return [
        (
            path,
            render(PKG, tmpl, header=header(prefix), **variables)
            if tmpl.endswith(".j2")
            else f"{header(prefix)}\n{_static(tmpl)}",
        )
        for path, tmpl, prefix in FILES
    ]


def _static(name: str) -> str:
    """Static CUDA beside the templates, copied as it is."""
    from importlib.resources import files as res

    return res(PKG).joinpath("templates", name).read_text()


def write(target: OpsTarget, root, header: Callable[[str], str]) -> list[str]:
    """Write the files under ``root`` (tests, bench); returns the paths written."""
    from pathlib import Path

    out = []
    for path, text in generate(target, header):
        f = Path(root) / path
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists() or f.read_text() != text:
            f.write_text(text)
        out.append(str(f))
    return out


def emit(ctx) -> list:
    from muh.codegen.base import GeneratedFile
    from muh.codegen.kernels import targets
    from muh.diagnostics import Diagnostic

    files = []
    for t in targets(ctx):  # the kernels emitter's folders (it reports derive's diagnostics, once)
        hw, cfg = t.hardware, t.config
        target = ctx.derived.ops[hw.name]
        if not t.native:  # an emulation build: same policies, the logical warp of cfg
            target = target.with_warp(cfg.name, cfg.warp_size)
        try:
            for path, text in generate(target, ctx.header):
                files.append(GeneratedFile(f"{t.prefix}{path}", text))
        except OpsConfigError as e:
            ctx.diagnostics.append(Diagnostic("E-OPS", str(e), ctx.spec.span_of(("hardware", hw.name))))
    return files
