"""The start self-test (issue 37.3): which muh ops the card itself tests before the server starts, at the
served shapes and dtypes, against which engine function; the plugin then rebinds or provides only the ops
the self-test selected (correct and faster). Decided here, rendered by codegen (the cases file, the start
step, the plugin's gates); ``muh/runtime/selftest.py`` runs it."""

from __future__ import annotations

from muh.derive.model import Resolved
from muh.engines.variant import Variant
from muh.engines.vllm.derive.context import Context
from muh.engines.vllm.derive.effective import Effective
from muh.engines.vllm.derive.flags import Setting, format_value
from muh.engines.vllm.derive.plan import IMAGE_ROOT, PreStep, Provide, Rebind, SelfTest, SelfTestCase
from muh.runtime.package import OPS_PACKAGE

OUT = f"{IMAGE_ROOT}/run/selftest.json"
BUDGET_S = 30
TIMEOUT_S = 40
ENGINE = {  # the engine's own function each op stands in for (torch: its PyTorch path, see `engine_of`)
    "rms_norm": "vllm._custom_ops:rms_norm",
    "fused_add_rms_norm": "vllm._custom_ops:fused_add_rms_norm",
    "silu_and_mul": "vllm._custom_ops:silu_and_mul",
    "topk_softmax": "vllm._custom_ops:topk_softmax",
    "gemma_rms_norm": "torch",  # GemmaRMSNorm.forward_cuda is torch.compile of its forward_native formula
}
DTYPES = {
    "half": "float16",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "float": "float32",
    "float32": "float32",
    "auto": "float16",
}
STEP = "selftest"


def gate(provider: str, ops_module: str) -> str | None:
    """The self-test op of a rebind's / provide's provider (``muh_kernels.vllm_ops:silu_and_mul``), or None
    (a provider that is not one of muh's kernel ops: MoE configs, a sampler)."""
    module, _, attr = provider.partition(":")
    return attr if module == ops_module and attr in ENGINE else None


def engine_of(op: str, variant: Variant) -> str:
    """The stock function, or ``torch`` where the variant lacks the vendor kernel behind it (the model's
    PyTorch fallback is what runs then: the fork's topk_softmax: the team's notes,
    https://github.com/dylanyunlon/project_6, 003:1123-1135, 2533-2534)."""
    vendor = variant.vendor_ops.get(op)
    if vendor is not None and vendor.present is False:
        return "torch"
    return ENGINE[op]


def cases(
    c: Context, variant: Variant, ops: list[str], given: dict[str, Setting], eff: Effective
) -> list[SelfTestCase]:
    """Each op at the decode batch (max_num_seqs) and at the prefill chunk (max_num_batched_tokens), in the
    served dtype; an op whose shape the spec does not give gets no case (it is never selected) and a warning.
    ``eff``: the values the server runs with (the plan's one reading of the serve block)."""
    ms, moe = c.d.model_shape, c.d.moe
    tp = max(1, eff.tensor_parallel_size)
    tokens = sorted({eff.max_num_seqs, eff.max_num_batched_tokens or 0} - {0})
    dtype = DTYPES.get(format_value(given["dtype"].value) if "dtype" in given else "auto", "float16")
    out: list[SelfTestCase] = []
    for op in ops:
        shapes: list[tuple[tuple[int, ...], str]] = []
        hidden = ms.hidden_size if ms is not None else None
        if op in ("rms_norm", "fused_add_rms_norm", "gemma_rms_norm") and hidden:
            shapes += [((t, hidden), f"{t} tokens × hidden_size {hidden}") for t in tokens]
        if op == "gemma_rms_norm" and ms is not None and ms.head_dim and ms.num_attention_heads:
            heads = max(1, ms.num_attention_heads // tp)
            shapes += [
                ((t, heads, ms.head_dim), f"q norm: {t} tokens × {heads} heads per shard × head_dim {ms.head_dim}")
                for t in tokens
            ]
        if op == "silu_and_mul" and moe is not None:
            inter = moe.intermediate_size // tp
            shapes += [((t, 2 * inter), f"{t} tokens × 2 × moe intermediate {inter} per shard") for t in tokens]
        if op == "topk_softmax" and moe is not None and moe.top_k:
            shapes += [
                ((t, moe.experts, moe.top_k), f"{t} tokens × {moe.experts} experts, top {moe.top_k}") for t in tokens
            ]
        if not shapes:
            c.warn(
                "W-DEPLOY-SELFTEST",
                f"the start self-test has no served shape for `{op}`: muh's op will never be rebound",
                c.span("model_shape") if op != "silu_and_mul" and op != "topk_softmax" else c.span("moe"),
                hint="give model_shape { hidden_size, num_attention_heads, head_dim } and moe { experts, "
                "intermediate_size, top_k } as in the model's config.json",
            )
        engine = engine_of(op, variant)
        out += [SelfTestCase(op=op, shape=shape, dtype=dtype, engine=engine, why=why) for shape, why in shapes]
    return out


def plan_selftest(
    c: Context,
    variant: Variant,
    rebinds: list[Rebind],
    provides: list[Provide],
    given: dict[str, Setting],
    eff: Effective,
    ops_module: str,
) -> tuple[list[Rebind], list[Provide], SelfTest | None, dict[str, Resolved]]:
    """The gates on muh's kernel ops, the self-test that opens them (None when no op is gated) and its cases per op
    with their rule (``selftest.*``)."""
    rebinds = [r.model_copy(update={"selftest": gate(r.provider, ops_module)}) for r in rebinds]
    provides = [p.model_copy(update={"selftest": gate(p.provider, ops_module)}) for p in provides]
    ops = sorted({x.selftest for x in [*rebinds, *provides] if x.selftest})
    if not ops:
        return rebinds, provides, None, {}
    if ops_module.split(".")[0] != OPS_PACKAGE:
        c.warn(
            "W-DEPLOY-SELFTEST",
            f"`ops_module = {ops_module}`: the start self-test runs muh_kernels' ops, not "
            "this module's, and its verdict gates this module's ops by name",
            c.span("tune", "ops_module"),
            hint="keep the default ops_module in an image, or say knowingly that the verdict of muh's kernels applies",
        )
    if c.d.run.form != "bash":
        c.warn(
            "W-DEPLOY-SELFTEST",
            "`form = argv` runs only the server: the start self-test cannot run, so no muh op is rebound",
            c.span("run", "form"),
            hint="use `form = bash`",
        )
    st = SelfTest(out=OUT, cases=tuple(cases(c, variant, ops, given, eff)), budget_s=BUDGET_S, timeout_s=TIMEOUT_S)
    recorded = {}
    for op in ops:
        mine = [x for x in st.cases if x.op == op]
        recorded[f"selftest.{op}"] = Resolved(
            value="; ".join(f"{'x'.join(map(str, x.shape))} {x.dtype} vs {x.engine}" for x in mine)
            or "no case: never rebound",
            origin="derived",
            rule="rebound or provided only when the start self-test on the card finds it correct (float64 reference) "
            f"and faster than the engine's function at every case (median of the timed calls); {OUT}",
            inputs={"cases": "; ".join(x.why for x in mine) or "none", "budget_s": BUDGET_S},
        )
    return rebinds, provides, st, recorded


def selftest_step(st: SelfTest) -> PreStep:
    """The start step (data; the run file renders it like any pre-step): its own process, bounded, tolerated."""
    return PreStep(
        name=STEP,
        argv=("python3", "-m", f"{OPS_PACKAGE}.selftest", "--out", st.out),
        on_failure="[muh] self-test did not finish: no muh op is rebound (the engine's own ops serve)",
        timeout_s=st.timeout_s,
        stderr_to_stdout=True,
    )
