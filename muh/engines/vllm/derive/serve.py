"""The ``serve`` block: its settings (checked text, the model path), the engine extensions the spec
declares, and the checks across settings and hardware (parallel sizes, dtype)."""

from __future__ import annotations

import re

from muh.diagnostics import Span
from muh.engines.vllm.derive.context import Context, int_of, value_problem
from muh.engines.vllm.derive.effective import Effective
from muh.engines.vllm.derive.flags import Extensions, Setting, format_value, truthy
from muh.schema.models import Hardware

NON_NVIDIA_NO_CUSTOM_AR = "custom all-reduce needs NVLink P2P (world sizes 2/4/6/8 on NVIDIA); off elsewhere"

WHEEL_CHECKS = {  # what vLLM 0.6.3.post1 refuses at start-up, or ignores: where (wheel file:line) and the literal there
    "batched_below_model_len": (
        "vllm/config.py",
        1039,
        "if (self.max_num_batched_tokens < self.max_model_len",
        "SchedulerConfig._verify_args raises ValueError",
    ),
    "batched_below_seqs": (
        "vllm/config.py",
        1049,
        "if self.max_num_batched_tokens < self.max_num_seqs:",
        "SchedulerConfig._verify_args raises ValueError",
    ),
    "chunked_by_itself": (
        "vllm/engine/arg_utils.py",
        940,
        "use_long_context = max_model_len > 32768",
        "chunked prefill turns itself on above 32768 when not set",
    ),
    "port": (
        "vllm/entrypoints/openai/api_server.py",
        544,
        'sock.bind(("", args.port))',
        "the socket refuses a port above 65535 (OverflowError); 0 binds a random one",
    ),
    "moe_top_k": (
        "vllm/model_executor/layers/fused_moe/fused_moe.py",
        443,
        "topk_weights, topk_ids = torch.topk(tmp_scores,",
        "top-k over the experts' scores: torch.topk refuses k above the expert count",
    ),
    "capture_eager": (
        "vllm/worker/worker.py",
        286,
        "if not self.model_config.enforce_eager:",
        "CUDA graphs (up to max_seq_len_to_capture) are captured only without enforce_eager",
    ),
}
"""Each check's citation is read back from the wheel by tests/codegen/test_vllm_flags.py."""


def cite(key: str) -> str:
    f, line, _, what = WHEEL_CHECKS[key]
    return f"{f}:{line}: {what}"


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


def start_up_checks(c: Context, given: dict[str, Setting], eff: Effective) -> None:
    """What vLLM 0.6.3 refuses at start-up is an error at its spec line; a flag another flag makes inert is a warning.
    The values are the ones the server runs with (``eff``: the spec's, else the wheel's defaults and rules)."""
    model_len, seqs, chunked = eff.max_model_len, eff.max_num_seqs, eff.chunked_prefill
    batched_s = given.get("max_num_batched_tokens")
    if batched_s is not None:
        batched = int_of(batched_s, 0)
        if model_len and batched < model_len and not chunked:
            c.error(
                "E-VLLM-CONFIG",
                f"max_num_batched_tokens {batched} < max_model_len {model_len} without chunked prefill: "
                f"vLLM refuses to start ({cite('batched_below_model_len')})",
                batched_s.span,
                hint="set `enable_chunked_prefill = true`, raise max_num_batched_tokens or lower max_model_len",
            )
        if batched < seqs:
            c.error(
                "E-VLLM-CONFIG",
                f"max_num_batched_tokens {batched} < max_num_seqs {seqs}: vLLM refuses to start "
                f"({cite('batched_below_seqs')})",
                batched_s.span,
                hint="max_num_batched_tokens must be at least max_num_seqs (default 256)",
            )
    port = given.get("port")
    if port is not None and not 1 <= int_of(port, -1) <= 65535:
        c.error(
            "E-VLLM-CONFIG",
            f"port {format_value(port.value)} is outside 1–65535 ({cite('port')})",
            port.span,
            hint="the platform calls the server on a fixed port: write one in 1–65535 (vLLM's default: 8000)",
        )
    moe = c.d.moe
    if moe is not None and moe.top_k is not None and moe.top_k > moe.experts:
        c.error(
            "E-VLLM-CONFIG",
            f"moe top_k {moe.top_k} is above the {moe.experts} experts: the router cannot pick them "
            f"({cite('moe_top_k')})",
            c.span("moe", "top_k"),
            hint="top_k is num_experts_per_tok of config.json",
        )
    capture = given.get("max_seq_len_to_capture")
    if capture is not None and truthy(given.get("enforce_eager")):
        c.warn(
            "W-DEPLOY-NOOP",
            f"`max_seq_len_to_capture` does nothing with `enforce_eager = true`: {cite('capture_eager')}",
            capture.key_span or capture.span,
            hint="drop it, or turn enforce_eager off (CUDA graphs never ran on this engine)",
        )
