"""A decode step of a transformers Qwen3-Next-style model, stock vs served by torch.ops.muh (muh.runtime.hf),
eager and CUDA-graph-replayed, in one run (issue 16, must-have 2's real client).

    python3 bench/hf_decode.py [--family qwen3_next] [--size decode] [--batch 1] [--out-md F] [--out-json F]

The model is random (no weights are fetched): ``--size decode`` keeps the served model's per-layer
shapes (Qwen3.6-35B-A3B / Qwen3-Next: hidden 2048, head_dim 256, 16 q / 2 kv heads, Gated-DeltaNet
16 k / 32 v heads of 128, 256 experts top-8 of 512, a shared expert of 512) on 4 layers (3
Gated-DeltaNet + 1 full attention, the model's 3:1 pattern) and a 16384-token vocabulary; ``--size
tiny`` is the tests' model. A step is ``model(next_token, past_key_values=cache)`` after a
16-token prefill; eager: wall time per step of a loop ending in one synchronisation; graph: the
step captured once into a ``torch.cuda.CUDAGraph`` and replayed (device time per replay). Variants:
stock, muh (``patch_model``), muh + fused residual (``patch_model(fuse_residual=True)``), switched
by ``unpatch_model`` / ``patch_model`` on one model; eager rounds interleave the variants (order
rotated each round), after a GPU warm-up that lifts the clocks; ratios are against stock in the
same run. Kernel launches per step come from the profiler.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAMILIES = ("qwen3_next", "qwen3_5_moe", "qwen3_moe")
PROMPT = 16


def config(family: str, size: str):
    """A random-weights config of ``family`` at ``size`` (``tiny``: the tests'; ``decode``: the bench's)."""
    import transformers as T

    if size == "tiny":
        common = dict(vocab_size=512, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=128, moe_intermediate_size=128, num_experts=16,
                      num_experts_per_tok=4, max_position_embeddings=512)
        linear = dict(linear_key_head_dim=64, linear_value_head_dim=64, linear_num_key_heads=2,
                      linear_num_value_heads=4, shared_expert_intermediate_size=128)
        dense = dict(intermediate_size=384, mlp_only_layers=[1])
    elif size == "decode":
        common = dict(vocab_size=16384, hidden_size=2048, num_hidden_layers=4, num_attention_heads=16,
                      num_key_value_heads=2, head_dim=256, moe_intermediate_size=512, num_experts=256,
                      num_experts_per_tok=8, max_position_embeddings=4096)
        linear = dict(linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                      linear_num_value_heads=32, shared_expert_intermediate_size=512)
        dense = dict(intermediate_size=5632, mlp_only_layers=[])
    else:
        raise SystemExit(f"hf_decode: unknown --size {size!r} (tiny, decode)")
    if family == "qwen3_next":
        return T.Qwen3NextConfig(**common, **linear, **dense)
    if family == "qwen3_5_moe":
        return T.Qwen3_5MoeTextConfig(**common, **linear)
    if family == "qwen3_moe":
        return T.Qwen3MoeConfig(**common, **dense)
    raise SystemExit(f"hf_decode: unknown --family {family!r} ({', '.join(FAMILIES)})")


def model(family: str, size: str, dtype, device: str = "cuda", seed: int = 0):
    """The causal-LM of ``family`` with random weights; norm weights random too (the stock init makes
    GemmaRMSNorm's zeros, which would leave (1 + w) untested)."""
    import torch
    import transformers as T

    cls = {"qwen3_next": T.Qwen3NextForCausalLM, "qwen3_5_moe": T.Qwen3_5MoeForCausalLM,
           "qwen3_moe": T.Qwen3MoeForCausalLM}[family]
    torch.manual_seed(seed)
    with torch.device(device):
        m = cls(config(family, size))
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.normal_(0.0, 0.1, generator=None)
    return m.to(dtype).eval()


def _step_fn(m, cache, tok):
    def step():
        return m(input_ids=tok, past_key_values=cache, use_cache=True).logits
    return step


def _fresh(m, batch: int, seed: int):
    """A prefilled cache and the next token (same for every variant: same seed)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    vocab = m.config.vocab_size
    ids = torch.randint(0, vocab, (batch, PROMPT), generator=g).cuda()
    with torch.no_grad():
        out = m(input_ids=ids, use_cache=True)
    tok = out.logits[:, -1:].argmax(-1)
    return out.past_key_values, tok


def burn(torch, seconds: float) -> None:
    """Keep the GPU busy for a while (bf16 matrix products), so its clocks are up when a host-bound
    eager loop starts: an idle H200 sits at 345 MHz and a decode step barely wakes it."""
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()


def eager_ms(torch, step, n: int) -> float:
    """Wall ms per step of n eager steps ending in one synchronisation (after 2 warm-up steps)."""
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e3


def graph_ms(torch, step, n: int):
    """(ms per replay, error text or '')."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(s):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        g.replay()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - the bench reports why a variant cannot be captured
        torch.cuda.synchronize()
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    per = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            g.replay()
        b.record()
        b.synchronize()
        per.append(a.elapsed_time(b) / n)
    del g
    return statistics.median(per), ""


def launches(torch, step) -> int:
    from torch.profiler import ProfilerActivity, profile

    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type.name == "CUDA" and "Memcpy" not in e.name
               and "Memset" not in e.name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="qwen3_next", choices=FAMILIES)
    ap.add_argument("--size", default="decode", choices=("tiny", "decode"))
    ap.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    args = ap.parse_args(argv)

    import torch
    import transformers

    from bench import presets
    from muh.runtime import hf, operators

    gen = Path(tempfile.mkdtemp(prefix="muh-hf-"))
    presets.write_ops("h200", gen)
    loaded = operators.load(gen)
    m = model(args.family, args.size, getattr(torch, args.dtype))
    impl = getattr(m.config, "_experts_implementation", None)
    variants = ("stock", "muh", "muh+fused")
    reports = {}

    def apply(variant: str) -> None:
        hf.unpatch_model(m)
        if variant != "stock":
            reports[variant] = str(hf.patch_model(m, fuse_residual=variant == "muh+fused"))

    eager = {v: [] for v in variants}
    with torch.no_grad():
        burn(torch, 2.0)
        apply("stock")
        cache, tok = _fresh(m, args.batch, 1)
        eager_ms(torch, _step_fn(m, cache, tok), 10)  # lazy initialisations (cuBLAS, grouped_mm)
        for r in range(args.rounds):  # interleaved, the order rotated each round
            for v in variants[r % 3:] + variants[:r % 3]:
                apply(v)
                cache, tok = _fresh(m, args.batch, 1)
                burn(torch, 0.2)
                eager[v].append(eager_ms(torch, _step_fn(m, cache, tok), args.steps))
        rows = {}
        for v in variants:
            apply(v)
            cache, tok = _fresh(m, args.batch, 1)
            k = launches(torch, _step_fn(m, cache, tok))
            cache, tok = _fresh(m, args.batch, 1)
            gms, err = graph_ms(torch, _step_fn(m, cache, tok), args.steps)
            rows[v] = {"eager_ms": statistics.median(eager[v]), "eager_rounds_ms": eager[v], "graph_ms": gms,
                       "graph_error": err, "kernels": k}
            print(v, json.dumps(rows[v]), flush=True)
    report = reports["muh+fused"]
    res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "transformers": transformers.__version__, "backend": loaded.backend, "family": args.family,
           "size": args.size, "dtype": args.dtype, "batch": args.batch, "experts_implementation": impl,
           "patched": report, "rows": rows}
    md = render(res)
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(res, indent=1))
    if args.out_md:
        Path(args.out_md).write_text(md)
    print(md)
    return 0


def render(r) -> str:
    st = r["rows"]["stock"]
    lines = [f"## Decode step: {r['family']} ({r['size']} config), {r['dtype']}, batch {r['batch']}, on {r['device']}",
             "", f"torch {r['torch']}, transformers {r['transformers']}, torch.ops.muh backend {r['backend']}, "
             f"experts implementation `{r['experts_implementation']}`; {r['patched']}.", "",
             "Eager: median over interleaved rounds (each round: every variant, order rotated) of the wall ms "
             "per step; graph: device ms per replay of one captured step.", "",
             "| variant | eager ms/step | × stock | eager rounds | graph ms/replay | × stock | kernels/step |",
             "|---|---|---|---|---|---|---|"]
    for name, row in r["rows"].items():
        g = row["graph_ms"]
        gx = f"{st['graph_ms'] / g:.2f}" if g and st["graph_ms"] else "—"
        gs = f"{g:.3f}" if g else f"not captured: {row['graph_error']}"
        rounds = " ".join(f"{x:.2f}" for x in row["eager_rounds_ms"])
        lines.append(f"| {name} | {row['eager_ms']:.3f} | {st['eager_ms'] / row['eager_ms']:.2f} | {rounds} | {gs} | "
                     f"{gx} | {row['kernels']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
