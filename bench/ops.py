"""muh's LLM serving ops vs PyTorch eager and PyTorch's fused ops, in one run, on the present GPU.

    python3 bench/ops.py [--dtype float16] [--out-md FILE] [--out-json FILE] [--quick]

The H200 preset's kernels and ops are generated into a temporary folder and built (one nvcc call).
Two times per case, both medians:

* ``gpu``: device time per call — `iters` calls enqueued behind a GPU spin (torch.cuda._sleep), so
  the CPU's dispatch cost stays out, timed with CUDA events; inputs rotate over enough buffers to
  exceed the L2 (60 MiB) where memory allows, so large shapes read HBM.
* ``call``: wall time per call of a tight eager loop ending in one synchronize — what a decode step
  pays when the op is launch-bound (Python + dispatch + launch).

Bandwidth = bytes that must move (each input read once, each output written once) / gpu time, as a
fraction of a device-to-device copy of the same byte count measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOKENS = (1, 16, 256, 4096)
HIDDEN = (2048, 4096, 8192)
L2_BYTES = 60 << 20
EPS = 1e-6


def gpu_time(torch, fn, nbuf: int, iters: int = 50, repeats: int = 7) -> float:
    """Median device seconds per call of fn(i)."""
    for i in range(3):
        fn(i % nbuf)
    torch.cuda.synchronize()
    per = []
    k = 0
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(1e7))  # ~5 ms: longer than enqueueing `iters` eager calls
        s.record()
        for _ in range(iters):
            fn(k % nbuf)
            k += 1
        e.record()
        e.synchronize()
        per.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(per)


def call_time(torch, fn, nbuf: int, iters: int = 200, repeats: int = 5) -> float:
    """Median wall seconds per call of an eager loop (dispatch + launch + kernel)."""
    for i in range(3):
        fn(i % nbuf)
    torch.cuda.synchronize()
    per = []
    k = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(k % nbuf)
            k += 1
        torch.cuda.synchronize()
        per.append((time.perf_counter() - t0) / iters)
    return statistics.median(per)


def n_buffers(bytes_per_call: int, cap_bytes: int = 4 << 30) -> int:
    want = max(1, math.ceil(2 * L2_BYTES / max(1, bytes_per_call)))
    return max(1, min(want, 16, cap_bytes // max(1, bytes_per_call)))


class Case:
    def __init__(self, op, tokens, hidden, bytes_moved):
        self.op, self.tokens, self.hidden, self.bytes = op, tokens, hidden, bytes_moved
        self.gpu, self.call = {}, {}


def measure(torch, case, variants: dict, nbuf: int, quick: bool):
    it = 20 if quick else 50
    calls = 200 if case.tokens <= 16 else (50 if case.tokens <= 256 else 10)
    for name, fn in variants.items():
        case.gpu[name] = gpu_time(torch, fn, nbuf, iters=it, repeats=5 if quick else 7)
        case.call[name] = call_time(torch, fn, nbuf, iters=calls // 4 if quick else calls, repeats=3 if quick else 5)


def copy_variant(torch, nbytes: int, nbuf: int):
    n = max(1, nbytes // 2 // 2)  # half the bytes read, half written, 2-byte elements
    src = [torch.randn(n, device="cuda", dtype=torch.float16) for _ in range(nbuf)]
    dst = [torch.empty_like(s) for s in src]
    return lambda i: dst[i].copy_(src[i])


def rms_cases(torch, F, llm, dt, quick):
    out = []
    for t in TOKENS:
        for h in HIDDEN:
            esz = torch.tensor([], dtype=dt).element_size()
            nbytes = 2 * t * h * esz + h * esz
            nbuf = n_buffers(nbytes)
            xs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            outs = [torch.empty_like(x) for x in xs]
            w = torch.rand(h, device="cuda", dtype=dt) + 0.5

            def eager(i):  # vLLM 0.6.3 RMSNorm.forward_native
                x = xs[i].to(torch.float32)
                var = x.pow(2).mean(dim=-1, keepdim=True)
                x = x * torch.rsqrt(var + EPS)
                return x.to(dt) * w

            c = Case("rms_norm", t, h, nbytes)
            measure(torch, c, {
                "muh": lambda i: llm.rms_norm(outs[i], xs[i], w, EPS),
                "eager": eager,
                "F.rms_norm": lambda i: F.rms_norm(xs[i], (h,), w, EPS),
                "copy": copy_variant(torch, nbytes, nbuf),
            }, nbuf, quick)
            out.append(c)
            del xs, outs
    return out


def fused_cases(torch, F, llm, dt, quick):
    out = []
    for t in TOKENS:
        for h in HIDDEN:
            esz = torch.tensor([], dtype=dt).element_size()
            nbytes = 4 * t * h * esz + h * esz
            nbuf = n_buffers(nbytes)
            xs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            rs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            w = torch.rand(h, device="cuda", dtype=dt) + 0.5

            def eager(i):  # vLLM 0.6.3 RMSNorm.forward_native with a residual
                x = xs[i].to(torch.float32) + rs[i].to(torch.float32)
                res = x.to(dt)
                var = x.pow(2).mean(dim=-1, keepdim=True)
                x = x * torch.rsqrt(var + EPS)
                return x.to(dt) * w, res

            def fused_torch(i):  # PyTorch's best: one add, one fused rms_norm
                res = xs[i] + rs[i]
                return F.rms_norm(res, (h,), w, EPS), res

            c = Case("fused_add_rms_norm", t, h, nbytes)
            measure(torch, c, {
                "muh": lambda i: llm.fused_add_rms_norm(xs[i], rs[i], w, EPS),
                "eager": eager,
                "F.rms_norm": fused_torch,
                "copy": copy_variant(torch, nbytes, nbuf),
            }, nbuf, quick)
            out.append(c)
            del xs, rs
    return out


def silu_cases(torch, F, llm, dt, quick):
    out = []
    for t in TOKENS:
        for h in HIDDEN:
            esz = torch.tensor([], dtype=dt).element_size()
            nbytes = 3 * t * h * esz
            nbuf = n_buffers(nbytes)
            xs = [torch.randn(t, 2 * h, device="cuda", dtype=dt) for _ in range(nbuf)]
            outs = [torch.empty(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            c = Case("silu_and_mul", t, h, nbytes)
            measure(torch, c, {
                "muh": lambda i: llm.silu_and_mul(outs[i], xs[i]),
                "eager": lambda i: F.silu(xs[i][..., :h]) * xs[i][..., h:],
                "copy": copy_variant(torch, nbytes, nbuf),
            }, nbuf, quick)
            out.append(c)
            del xs, outs
    return out


def softmax_cases(torch, F, llm, dt, quick):
    out = []
    for t in TOKENS:
        for h in HIDDEN:
            esz = torch.tensor([], dtype=dt).element_size()
            nbytes = 2 * t * h * esz
            nbuf = n_buffers(nbytes)
            xs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            outs = [torch.empty_like(x) for x in xs]
            c = Case("softmax", t, h, nbytes)
            measure(torch, c, {
                "muh": lambda i: llm.softmax(outs[i], xs[i]),
                "eager": lambda i: torch.softmax(xs[i], dim=-1),
                "copy": copy_variant(torch, nbytes, nbuf),
            }, nbuf, quick)
            out.append(c)
            del xs, outs
    return out


def topk_cases(torch, F, llm, dt, quick):
    out = []
    for experts in (256, 64):
        for t in TOKENS:
            k = 8
            nbytes = t * experts * 4 + t * k * 12
            nbuf = n_buffers(nbytes)
            gs = [torch.randn(t, experts, device="cuda", dtype=torch.float32) for _ in range(nbuf)]
            w = torch.empty(t, k, device="cuda", dtype=torch.float32)
            ids = torch.empty(t, k, device="cuda", dtype=torch.int32)
            src = torch.empty(t, k, device="cuda", dtype=torch.int32)

            def vllm_path(i):  # what vLLM 0.6.3's fused_topk does around topk_softmax, in eager PyTorch
                return torch.topk(torch.softmax(gs[i], dim=-1), k, dim=-1)

            c = Case(f"topk_softmax E={experts} k=8", t, experts, nbytes)
            measure(torch, c, {
                "muh": lambda i: llm.topk_softmax(w, ids, src, gs[i]),
                "eager": vllm_path,
            }, nbuf, quick)
            out.append(c)
    return out


def fmt_us(s):
    return f"{s * 1e6:.1f}"


def table(cases, copy_bw) -> list[str]:
    lines = ["| op | tokens × hidden | muh gpu µs | eager gpu µs | F gpu µs | muh call µs | eager call µs | F call µs "
             "| eager/muh (gpu, call) | F/muh (gpu, call) | GB/s | % of copy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cases:
        g, cl = c.gpu, c.call
        f_g = fmt_us(g["F.rms_norm"]) if "F.rms_norm" in g else "—"
        f_c = fmt_us(cl["F.rms_norm"]) if "F.rms_norm" in cl else "—"
        ratio_e = f"{g['eager'] / g['muh']:.2f}×, {cl['eager'] / cl['muh']:.2f}×"
        ratio_f = (f"{g['F.rms_norm'] / g['muh']:.2f}×, {cl['F.rms_norm'] / cl['muh']:.2f}×" if "F.rms_norm" in g else "—")
        bw = c.bytes / g["muh"] / 1e9
        pct = f"{100 * g['copy'] / g['muh']:.0f}%" if "copy" in g else "—"
        lines.append(f"| {c.op} | {c.tokens} × {c.hidden} | {fmt_us(g['muh'])} | {fmt_us(g['eager'])} | {f_g} | "
                     f"{fmt_us(cl['muh'])} | {fmt_us(cl['eager'])} | {f_c} | {ratio_e} | {ratio_f} | {bw:.0f} | {pct} |")
    return lines


def build_only() -> int:
    from concurrent.futures import ThreadPoolExecutor

    import torch

    from bench.presets import write_ops as write_preset
    from muh.runtime import llm

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    jobs = {"h200": ("h200", None, "c++17"), "bi100-emu64": ("bi100", 64, "c++14")}  # as tests/gpu/test_ops_gpu.py

    def one(item):
        name, (preset, emulate, std) = item
        tree = Path(tempfile.mkdtemp(prefix=f"muh-ops-{name}-"))
        write_preset(preset, tree, emulate)
        t0 = time.time()
        so = llm.build(tree, arch=arch, std=std)
        return f"{name}: {so} ({time.time() - t0:.1f}s)"

    with ThreadPoolExecutor(len(jobs)) as pool:
        for line in pool.map(one, sorted(jobs.items())):
            print(line, flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ops", default="rms_norm,fused_add_rms_norm,silu_and_mul,topk_softmax,softmax")
    ap.add_argument("--build-only", action="store_true",
                    help="build (into the cache) the H200 and the BI-V100-emulated libraries the GPU tests use, in parallel")
    args = ap.parse_args(argv)
    if args.build_only:
        return build_only()

    import torch
    import torch.nn.functional as F

    from bench.presets import write_ops as write_preset
    from muh.runtime import llm

    dt = getattr(torch, args.dtype)
    tree = Path(tempfile.mkdtemp(prefix="muh-ops-bench-"))
    write_preset("h200", tree)
    major, minor = torch.cuda.get_device_capability()
    t0 = time.time()
    lib = llm.load(llm.build(tree, arch=f"sm_{major}{minor}", std="c++17"))
    print(f"built {lib.origin} in {time.time() - t0:.1f}s (warp {lib.warp})", flush=True)
    torch.manual_seed(0)

    # device copy ceiling, 1 GiB read + write
    n = 1 << 28
    a, b = torch.empty(n, device="cuda", dtype=torch.float32), torch.empty(n, device="cuda", dtype=torch.float32)
    copy_s = gpu_time(torch, lambda i: b.copy_(a), 1, iters=10, repeats=5)
    copy_bw = 2 * 4 * n / copy_s
    del a, b
    print(f"device copy 1 GiB: {copy_s * 1e3:.3f} ms = {copy_bw / 1e9:.0f} GB/s", flush=True)

    runners = {"rms_norm": rms_cases, "fused_add_rms_norm": fused_cases, "silu_and_mul": silu_cases,
               "topk_softmax": topk_cases, "softmax": softmax_cases}
    cases = []
    for op in args.ops.split(","):
        t0 = time.time()
        cases += runners[op](torch, F, llm, dt, args.quick)
        print(f"{op}: {time.time() - t0:.1f}s", flush=True)
        torch.cuda.empty_cache()

    dev = torch.cuda.get_device_name()
    head = [f"Device: {dev}; torch {torch.__version__}; dtype {args.dtype} (topk_softmax: float32 logits); "
            f"device copy {copy_bw / 1e9:.0f} GB/s (1 GiB)."]
    lines = head + [""] + table(cases, copy_bw)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out_md:
        Path(args.out_md).write_text(text)
    if args.out_json:
        Path(args.out_json).write_text(json.dumps({
            "device": dev, "torch": torch.__version__, "dtype": args.dtype, "copy_GBps": copy_bw / 1e9,
            "cases": [{"op": c.op, "tokens": c.tokens, "hidden": c.hidden, "bytes": c.bytes,
                       "gpu_s": c.gpu, "call_s": c.call} for c in cases]}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
