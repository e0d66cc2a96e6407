"""The ``serve`` block: its settings (checked text, the model path), the engine extensions the spec
declares, and the checks across settings and hardware (parallel sizes, dtype)."""

from __future__ import annotations

import re

from muh.diagnostics import Span
from muh.engines.vllm.derive.context import Context, value_problem
from muh.engines.vllm.derive.effective import Effective
from muh.engines.vllm.derive.flags import Extensions, Setting, format_value
from muh.schema.models import Hardware

NON_NVIDIA_NO_CUSTOM_AR = "custom all-reduce needs NVLink P2P (world sizes 2/4/6/8 on NVIDIA); off elsewhere"


def serve_settings(c: Context) -> tuple[list[Setting], Extensions]:
    serve: list[Setting] = [Setting("model", c.d.model, c.span("model"), c.key_span("model"))]
    for key, value in c.d.serve.items():
        if key == "model":
            c.error(
                "E-DEPLOY-KEY",
                "set the model path with `model = …` in the deploy block, not in serve",
                c.span("serve", key),
            )
            continue
        v = tuple(value) if isinstance(value, list) else value
        for item in v if isinstance(v, tuple) else (v,):
            if isinstance(item, str):
                problem = value_problem(item)
                if problem:
                    c.error(
                        "E-DEPLOY-VALUE",
                        f"`{key}` {problem}",
                        c.span("serve", key),
                        hint="values reach YAML and the engine's argv; keep them one short line",
                    )
        serve.append(Setting(key, v, c.span("serve", key), c.key_span("serve", key)))
    if value_problem(c.d.model):
        c.error("E-DEPLOY-VALUE", f"`model` {value_problem(c.d.model)}", c.span("model"))
    ext_flags: dict[str, Span | None] = {}
    ext_parsers: dict[str, Span | None] = {}
    ext = c.d.engine_extensions
    for f in ext.flags:
        span = c.span("engine_extensions", "flags")
        if not re.fullmatch(r"--[a-z0-9][a-z0-9-]*", f):
            c.error("E-DEPLOY-EXT", f"`{f}` is not a long option (`--name-with-dashes`)", span)
        ext_flags[f] = span
    for p in ext.tool_call_parsers:
        span = c.span("engine_extensions", "tool_call_parsers")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", p):
            c.error("E-DEPLOY-EXT", f"`{p}` is not a parser name", span)
        ext_parsers[p] = span
    return serve, Extensions(ext_flags, ext_parsers)


def cross_checks(c: Context, hw: Hardware, given: dict[str, Setting], eff: Effective) -> None:
    tp, pp = eff.tensor_parallel_size, eff.pipeline_parallel_size
    if tp * pp > hw.gpu_count:
        s = given.get("tensor_parallel_size") or given.get("pipeline_parallel_size")
        c.error(
            "E-DEPLOY-TP",
            f"tensor × pipeline parallel size {tp * pp} exceeds the {hw.gpu_count} device(s) of `{hw.name}`",
            s.span if s else None,
            hint=f"set `gpu_count` in `hardware {hw.name}` or lower tensor_parallel_size",
        )
    dtype = given.get("dtype")
    cc = hw.reported_capability or hw.compute_capability  # what vLLM's check sees at run time
    if dtype is not None and format_value(dtype.value) == "bfloat16" and (cc is None or cc < 80):
        c.error(
            "E-DEPLOY-DTYPE",
            f"bfloat16 needs compute capability ≥ 8.0; `{hw.name}` "
            + (f"has {cc / 10:.1f}" if cc else "declares none"),
            dtype.span,
            hint="use `dtype = half` (vLLM refuses bfloat16 below 8.0)"
            + (
                "; a non-NVIDIA device that reports ≥ 8.0 says so with `reported_capability`"
                if hw.vendor != "nvidia"
                else ""
            ),
        )
    elif (dtype is None or format_value(dtype.value) == "auto") and (cc is None or cc < 80):
        c.warn(
            "W-DEPLOY-DTYPE",
            f"dtype auto picks bfloat16 for bfloat16 checkpoints, which `{hw.name}` cannot run",
            dtype.span if dtype else c.span("serve"),
            hint="set `dtype = half`",
        )
