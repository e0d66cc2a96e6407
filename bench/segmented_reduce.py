"""segmented_reduce (muh) vs CUB's DeviceSegmentedReduce::Sum / ArgMax vs torch, one run, present GPU.

    python3 bench/segmented_reduce.py [--out-md FILE] [--out-json FILE] [--cases SUBSTR,…] [--ab]
    python3 bench/segmented_reduce.py --prebuild sm_90   # no GPU: build the libraries into --cache first

float32 input, int32 offsets (begin = offsets[:-1], end = offsets[1:]), segment-size distributions:
uniform (1-10, 100-1000, fixed 2^20, fixed 2^24, rows of 151 936 as 64 logits rows), power-law
(Pareto sizes, 1 ... 10^6) and one huge segment (10^8). Bandwidth = bytes that must move (input, both
offset arrays' reads, the output) / time, as % of a device-to-device copy measured in the same run.
torch's formulation: torch.segment_reduce(x, "sum", offsets=...) (sum) and index_add_ over a segment
id per element (the obvious scatter formulation, its ids made outside the timing). Times are medians
of 9 (5 for calls over 5 ms) repeats of as many calls as fit ~10 ms, queued behind a GPU spin
long enough to cover their host cost (device events).

--ab also times muh's sum and argmax with variants of the H200 policies, each its own library, side by side
on the same card (VARIANTS): `whole` (one_block.items = 640: a segment up to 163840 elements, the logits
rows, is reduced whole by one block, CUB's shape, instead of split over the grid past the even share),
`scalar` (vec = 1: 4-byte loads of every tile) and `whole-scalar` (both: the shape before the split plan and
the vector loads, on the one-launch grid of few_kernel's own occupancy). --split is the old name of --ab.
--cases keeps
the distributions whose name holds one of the substrings.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HOST_S = 60e-6  # the most a call costs the host (Python, ctypes, checks): the spin covers every queued call


def timeit(launch, torch, iters: int, repeats: int = 9) -> float:
    """Median seconds per call: each repeat queues ``iters`` calls behind a GPU spin long enough to cover
    their host cost, so the GPU, not the launching CPU, sets the time (device events)."""
    import statistics

    for i in range(3):
        launch(i)
    torch.cuda.synchronize()
    per = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2e9 * HOST_S * (iters + 5)))
        start.record()
        for i in range(iters):
            launch(i)
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(per)


def timed(fn, torch) -> float:
    """timeit with as many calls per repeat as fit ~10 ms (one probe call first):
    CUB's one block per segment takes tens of ms on a single huge segment."""
    import time

    fn(0)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn(0)
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    iters = max(1, min(100, int(0.01 / max(one, 1e-6))))
    return timeit(fn, torch, iters, 9 if one < 0.005 else 5)


def cub_library(cache: Path) -> Path:
    from muh.runtime import build
    from muh.runtime.toolchain import Toolchain

    src = ROOT / "bench" / "segmented_reduce_cub.cu"
    key = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    lib = cache / f"cubseg-{key}" / "libcub_segmented.so"
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        flags = Toolchain.lab("sm_90").shared_library().flags
        subprocess.run([build.nvcc(), *flags, "-o", str(lib), str(src)], check=True)
    return lib


def build_cub(cache: Path) -> ctypes.CDLL:
    cub = ctypes.CDLL(str(cub_library(cache)))
    vp = ctypes.c_void_p
    cub.cub_segmented.argtypes = [ctypes.c_int, vp, vp, ctypes.c_int, vp, vp, ctypes.POINTER(ctypes.c_size_t), vp]
    return cub


# --ab: variant -> (what its columns say, the edits of every H200 segmented_reduce policy)
VARIANTS = {
    "whole": ("whole up to 640 items/thread", {"block_items": 640}),
    "scalar": ("scalar loads", {"vec": 1}),
    "whole-scalar": ("whole + scalar", {"block_items": 640, "vec": 1}),
}


def config(variant: str | None = None):
    """The H200 spec's segmented_reduce kernels alone (what `muh build specs/h200.muh` emits for it); with
    ``variant`` (VARIANTS), each type's policy edited so."""
    from bench import presets

    cfg = presets.h200()
    cfg = replace(cfg, policies={"segmented_reduce": cfg.of("segmented_reduce")})
    if variant:
        edits = dict(VARIANTS[variant][1])
        if "block_items" in edits:
            edits["block_items_from"] = f"bench --ab {variant}"
        pols = {d: replace(p, **edits) for d, p in cfg.of("segmented_reduce").items()}
        cfg = replace(cfg.with_policies("segmented_reduce", pols), name=f"h200-{variant}")
    return cfg


def muh_library(cache: Path, arch: str, variant: str | None = None) -> Path:
    from muh.codegen.kernels import emitter
    from muh.runtime import build

    gen = cache / (f"segred-h200-{variant}" if variant else "segred-h200")
    emitter.write(config(variant), gen)
    return build.build_capi(gen, arch=arch)


def load_muh(cache: Path, variant: str | None = None):
    import torch

    from muh import families
    from muh.runtime.library import Kernels

    major, minor = torch.cuda.get_device_capability()
    return Kernels.from_library(muh_library(cache, f"sm_{major}{minor}", variant), families.api())


def distributions(torch, g):
    """name -> segment sizes (int64 CPU tensor)."""
    out = {}
    out["uniform 1-10 (10^6 segments)"] = torch.randint(1, 11, (1_000_000,), generator=g)
    out["uniform 100-1000 (10^5)"] = torch.randint(100, 1001, (100_000,), generator=g)
    out["rows 64 x 151936 (logits)"] = torch.full((64,), 151_936)
    out["fixed 2^20 (64 segments)"] = torch.full((64,), 1 << 20)
    out["fixed 2^24 (4 segments)"] = torch.full((4,), 1 << 24)
    pareto = (torch.rand(200_000, generator=g) ** (-1 / 1.1)).clamp(max=1e6).long()  # alpha 1.1 from 1
    out[f"power-law 1-10^6 (2*10^5, {int(pareto.sum()) / 1e6:.0f}M items)"] = pareto
    out["single 10^8"] = torch.tensor([100_000_000])
    return out


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    ap.add_argument("--cache", default=str(ROOT / ".muh-cache" / "bench"))
    ap.add_argument("--cases", help="comma-separated substrings: only the distributions whose name holds one")
    ap.add_argument("--ab", "--split", action="store_true", dest="ab",
                    help="also time muh's sum and argmax with each of VARIANTS (whole rows, scalar loads, both)")
    ap.add_argument("--prebuild", metavar="ARCH", help="build the libraries for ARCH (no GPU needed) and exit")
    args = ap.parse_args()
    cache = Path(args.cache)
    if args.prebuild:
        for variant in (None, *VARIANTS):
            print(muh_library(cache, args.prebuild, variant))
        print(cub_library(cache))
        return
    from muh.families import calls

    kern, cub = load_muh(cache), build_cub(cache)
    kern_ab = {v: load_muh(cache, v) for v in VARIANTS} if args.ab else {}
    wanted = [c for c in (args.cases or "").split(",") if c]
    dev = torch.cuda.get_device_properties(0)
    g = torch.Generator().manual_seed(1)
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    t_copy = timeit(lambda i: b.copy_(a), torch, 20)
    copy_bw = 2 * a.numel() * 4 / t_copy
    del a, b
    print(f"device: {dev.name}, {dev.multi_processor_count} SMs; copy {copy_bw / 1e9:.0f} GB/s (1 GiB)", flush=True)
    stream = lambda: ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)  # noqa: E731
    rows = []
    for name, sizes in distributions(torch, g).items():
        if wanted and not any(c in name for c in wanted):
            continue
        n, segs = int(sizes.sum()), sizes.numel()
        x = torch.randn(n, device="cuda")
        offs = torch.zeros(segs + 1, dtype=torch.int64)
        offs[1:] = torch.cumsum(sizes, 0)
        offs32 = offs.to(torch.int32).cuda()
        offs64 = offs.cuda()
        begin, end = offs32[:-1], offs32[1:]
        moved_sum = n * 4 + 2 * segs * 4 + segs * 4
        moved_arg = n * 4 + 2 * segs * 4 + segs * 12  # values + int64 offsets (CUB: 8-byte pairs)
        # correctness against each other (sums within float rounding, argmax exactly)
        mine = calls.segmented_reduce(x, begin, end, "sum", kernels=kern)
        out = torch.empty(segs, device="cuda")
        kv = torch.empty(segs * 2, dtype=torch.int32, device="cuda")  # KeyValuePair<int, float>
        tb = ctypes.c_size_t(0)
        cub.cub_segmented(0, x.data_ptr(), offs32.data_ptr(), segs, out.data_ptr(), None, ctypes.byref(tb), stream())
        tb1 = ctypes.c_size_t(0)
        cub.cub_segmented(1, x.data_ptr(), offs32.data_ptr(), segs, kv.data_ptr(), None, ctypes.byref(tb1), stream())
        temp = torch.empty(max(tb.value, tb1.value, 1), dtype=torch.uint8, device="cuda")
        cub_sum = lambda i: cub.cub_segmented(0, x.data_ptr(), offs32.data_ptr(), segs, out.data_ptr(),  # noqa: E731
                                              temp.data_ptr(), ctypes.byref(tb), stream())
        cub_arg = lambda i: cub.cub_segmented(1, x.data_ptr(), offs32.data_ptr(), segs, kv.data_ptr(),  # noqa: E731
                                              temp.data_ptr(), ctypes.byref(tb1), stream())
        cub_sum(0)
        cub_arg(0)
        vals, idx = calls.segmented_reduce(x, begin, end, "argmax", kernels=kern)
        torch.cuda.synchronize()
        err = float(((mine - out).abs() / (1 + out.abs())).max())
        kvk = kv.view(segs, 2)[:, 0].long()
        arg_ok = bool(torch.equal(kvk, idx))
        t_mine = timed(lambda i: calls.segmented_reduce(x, begin, end, "sum", kernels=kern), torch)
        t_arg = timed(lambda i: calls.segmented_reduce(x, begin, end, "argmax", kernels=kern), torch)
        ab = {}
        for v, kv_ in kern_ab.items():
            v_sum = calls.segmented_reduce(x, begin, end, "sum", kernels=kv_)
            _, v_idx = calls.segmented_reduce(x, begin, end, "argmax", kernels=kv_)
            torch.cuda.synchronize()
            err = max(err, float(((v_sum - out).abs() / (1 + out.abs())).max()))
            arg_ok = arg_ok and bool(torch.equal(kvk, v_idx))
            ab[v] = (timed(lambda i, k=kv_: calls.segmented_reduce(x, begin, end, "sum", kernels=k), torch),
                     timed(lambda i, k=kv_: calls.segmented_reduce(x, begin, end, "argmax", kernels=k), torch))
        t_cub = timed(cub_sum, torch)
        t_cub_arg = timed(cub_arg, torch)
        try:
            t_seg = timed(lambda i: torch.segment_reduce(x, "sum", offsets=offs64, axis=0), torch)
        except RuntimeError as e:  # a torch build without it for this shape: the other formulation stands
            print(f"torch.segment_reduce: {e}", flush=True)
            t_seg = float("inf")
        ids = torch.repeat_interleave(torch.arange(segs, device="cuda"), sizes.cuda())
        acc = torch.zeros(segs, device="cuda")
        t_add = timed(lambda i: acc.zero_().index_add_(0, ids, x), torch)
        del ids
        r = {"case": name, "items": n, "segments": segs, "muh_sum_us": t_mine * 1e6, "cub_sum_us": t_cub * 1e6,
             "torch_segment_reduce_us": t_seg * 1e6, "torch_index_add_us": t_add * 1e6,
             "muh_argmax_us": t_arg * 1e6, "cub_argmax_us": t_cub_arg * 1e6,
             "muh_sum_pct_copy": 100 * moved_sum / t_mine / copy_bw,
             "muh_argmax_pct_copy": 100 * moved_arg / t_arg / copy_bw,
             "sum_vs_cub": t_cub / t_mine, "argmax_vs_cub": t_cub_arg / t_arg,
             "sum_vs_torch": min(t_seg, t_add) / t_mine, "max_rel_err_vs_cub": err, "argmax_equal_cub": arg_ok}
        for v, (t_s, t_a) in ab.items():
            r.update({f"muh_sum_{v}_us": t_s * 1e6, f"sum_{v}_vs_cub": t_cub / t_s,
                      f"muh_argmax_{v}_us": t_a * 1e6, f"argmax_{v}_vs_cub": t_cub_arg / t_a})
        rows.append(r)
        print(f"{name}: sum {t_mine * 1e6:.1f} us ({r['muh_sum_pct_copy']:.0f} % copy) CUB {t_cub * 1e6:.1f} "
              f"({r['sum_vs_cub']:.2f}x) torch {min(t_seg, t_add) * 1e6:.1f}; argmax {t_arg * 1e6:.1f} "
              f"({r['muh_argmax_pct_copy']:.0f} %) CUB {t_cub_arg * 1e6:.1f} ({r['argmax_vs_cub']:.2f}x); "
              + "".join(f"{v} sum {t_s * 1e6:.1f} ({t_cub / t_s:.2f}x) argmax {t_a * 1e6:.1f} "
                        f"({t_cub_arg / t_a:.2f}x); " for v, (t_s, t_a) in ab.items())
              + f"err {err:.1e} argmax==CUB {arg_ok}", flush=True)
        del x
    result = {"device": dev.name, "sms": dev.multi_processor_count, "copy_gbs": copy_bw / 1e9, "rows": rows}
    md = [f"# segmented_reduce vs CUB vs torch — {dev.name} (copy {copy_bw / 1e9:.0f} GB/s)", "",
          "float32, int32 offsets; times in µs (median); % = bytes moved / time / copy bandwidth; "
          "×CUB = CUB's time / muh's; torch = the faster of segment_reduce and index_add_.", "",
          "| segments | muh sum | % copy | CUB Sum | ×CUB | torch | ×torch | muh argmax | % copy | CUB ArgMax | ×CUB |"
          " argmax = CUB |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for v in kern_ab:
        md[-2] += f" sum, {VARIANTS[v][0]} | ×CUB | argmax, {VARIANTS[v][0]} | ×CUB |"
        md[-1] += "---|---|---|---|"
    for r in rows:
        md.append(f"| {r['case']} | {r['muh_sum_us']:.1f} | {r['muh_sum_pct_copy']:.0f} % | {r['cub_sum_us']:.1f} | "
                  f"{r['sum_vs_cub']:.2f}× | {min(r['torch_segment_reduce_us'], r['torch_index_add_us']):.1f} | "
                  f"{r['sum_vs_torch']:.2f}× | {r['muh_argmax_us']:.1f} | {r['muh_argmax_pct_copy']:.0f} % | "
                  f"{r['cub_argmax_us']:.1f} | {r['argmax_vs_cub']:.2f}× | {'yes' if r['argmax_equal_cub'] else 'NO'} |"
                  + "".join(f" {r[f'muh_sum_{v}_us']:.1f} | {r[f'sum_{v}_vs_cub']:.2f}× | "
                            f"{r[f'muh_argmax_{v}_us']:.1f} | {r[f'argmax_{v}_vs_cub']:.2f}× |" for v in kern_ab))
    text = "\n".join(md) + "\n"
    print(text)
    if args.out_md:
        Path(args.out_md).write_text(text)
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
