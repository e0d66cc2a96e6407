"""muh's generated kernels vs CUB vs CUB with muh's hub vs PyTorch, in one run, on the present GPU.

"CUB with muh's hub": CUB's own dispatch and kernels on the policy hubs generated from specs/h200.muh
(generated/h200/include/muh/cub/, docs/parity.md), each call's result checked against CUB's first.

    python3 bench/kernels.py [--gen DIR] [--out-json FILE] [--out-md FILE] [--quick]

Without --gen, the H200 preset's kernels are generated into .muh-cache/bench/h200 first. Times are
medians over repeats; each repeat enqueues `iters` calls behind a GPU spin (torch.cuda._sleep) so
the CPU's launch overhead stays out, and is timed with device events. Inputs rotate over enough
buffers to exceed the L2 (cold-ish data, as in CCCL's benchmarks). Bandwidth = bytes that must
move (reads + writes) / time, against a device-to-device copy measured in the same run.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = [1 << 16, 1 << 20, 1 << 24, 1 << 28]
#: The policy hubs generated from specs/h200.muh: CUB's own kernels on muh's h200 policies (column "CUB with muh's hub").
HUBS = ROOT / "generated" / "h200" / "include"
L2_BYTES = 60 << 20


def build_cub(cache: Path) -> ctypes.CDLL:
    from muh.runtime import build
    from muh.runtime.toolchain import Toolchain

    src = ROOT / "bench" / "cub_harness.cu"
    import hashlib

    h = hashlib.sha256(src.read_bytes())
    for f in sorted(HUBS.rglob("*.cuh")):
        h.update(f.read_bytes())
    key = h.hexdigest()[:16]
    lib = cache / f"cub-{key}" / "libcub_harness.so"
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        flags = Toolchain.lab("sm_90").shared_library().flags  # muh's own library flags (with -lineinfo)
        hubs = ["-I", str(HUBS)]  # CUB with muh's hub: the hubs generated from specs/h200.muh
        subprocess.run([build.nvcc(), *flags, *hubs, "-o", str(lib), str(src)], check=True)
    cub = ctypes.CDLL(str(lib))
    vp, ll = ctypes.c_void_p, ctypes.c_longlong
    cub.cub_reduce.argtypes = [ctypes.c_int, ctypes.c_int, vp, vp, ll, vp]
    cub.cub_scan.argtypes = [ctypes.c_int, ctypes.c_int, vp, vp, ll, vp]
    cub.cub_transform_scale.argtypes = [ctypes.c_int, vp, vp, ll, ctypes.c_float, vp]
    cub.cub_histogram_even.argtypes = [ctypes.c_int, vp, ll, ctypes.c_int, ctypes.c_double, ctypes.c_double, vp, vp]
    cub.hub_reduce.argtypes = cub.cub_reduce.argtypes
    cub.hub_scan.argtypes = cub.cub_scan.argtypes
    cub.hub_transform_scale.argtypes = cub.cub_transform_scale.argtypes
    cub.hub_histogram_even.argtypes = cub.cub_histogram_even.argtypes
    return cub


def timeit(launch, torch, iters: int, repeats: int = 9) -> float:
    """Median seconds per call of launch(i) (i = call number, for buffer rotation)."""
    for i in range(3):
        launch(i)
    torch.cuda.synchronize()
    per = []
    call = 0
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2e6))  # ~1 ms of GPU spin: the queue fills while the GPU waits
        start.record()
        for _ in range(iters):
            launch(call)
            call += 1
        end.record()
        end.synchronize()
        per.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(per)


def latency(launch, torch, reps: int = 40) -> float:
    """Median wall seconds of one synchronised call (host launch cost included: what a CPU-bound
    decode step pays per op). Python/ctypes and sync overheads are in every column alike."""
    import time

    for i in range(5):
        launch(i)
    torch.cuda.synchronize()
    ts = []
    for i in range(reps):
        t0 = time.perf_counter()
        launch(i)
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def variant_lib(cfg, keep: tuple[str, ...], cache: Path):
    """Build only some kernels of ``cfg`` (policy variants for the same-run comparison)."""
    from muh.codegen.kernels import emitter
    from muh.runtime import build
    from muh import families
    from muh.runtime.library import Kernels

    root = cache / "variants" / cfg.digest()[:12]
    emitter.write(cfg, root)
    for f in (root / "kernels").glob("*.cu"):
        if f.stem not in keep:
            f.unlink()
    return Kernels.from_library(build.build_capi(root, arch="sm_90", jobs=2), families.api())


SCAN_VARIANTS = {  # float32 scan policies tried against the spec's (CUB's sm_90: 128x24 fixed<688,1140>)
    "128x24 no_delay": (128, 24, "no_delay", 0, 0),
    "128x24 fixed<350,0>": (128, 24, "fixed", 350, 0),
    "256x16 fixed<350,450>": (256, 16, "fixed", 350, 450),
    "256x24 fixed<688,1140>": (256, 24, "fixed", 688, 1140),
    "384x16 no_delay": (384, 16, "no_delay", 0, 0),
}
TOPK_VARIANTS = {"1024x4": (1024, 4), "512x8": (512, 8), "1024x8": (1024, 8), "256x8": (256, 8)}
HISTOGRAM_VARIANTS = {  # uint8 policies (threads, pixels_per_thread, vec, sub_histograms) tried against the spec's
    "768x12 vec4 1 copy": (768, 12, 4, 1),
    "768x12 vec4 8 copies": (768, 12, 4, 8),
    "768x16 vec16 32 copies": (768, 16, 16, 32),
    "1024x16 vec16 32 copies": (1024, 16, 16, 32),
    "512x32 vec16 32 copies": (512, 32, 16, 32),
    "384x32 vec16 32 copies": (384, 32, 16, 32),
    "256x32 vec16 32 copies": (256, 32, 16, 32),
    "256x64 vec16 32 copies": (256, 64, 16, 32),
}


def build_variants(cache: Path, only: set | None = None) -> dict:
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from bench import presets
    from muh.families import histogram as hist_rec, scan as scan_rec, topk as topk_rec

    base = presets.h200()
    jobs = []
    for name, (t, i, kind, ns, l2w) in (SCAN_VARIANTS.items() if only is None or "scan" in only else ()):
        cfg = replace(base.with_policies("scan", {"float32": scan_rec.Policy(t, i, kind, ns, l2w)}), name=f"h200-scan-{name}")
        jobs.append(("scan", name, cfg, ("common", "scan")))
    for name, (t, i) in (TOPK_VARIANTS.items() if only is None or "topk" in only else ()):
        cfg = replace(base.with_policies("topk", {"float32": topk_rec.Policy(t, i, 11)}), name=f"h200-topk-{name}")
        jobs.append(("topk", name, cfg, ("common", "topk")))
    for name, (t, i, v, c) in (HISTOGRAM_VARIANTS.items() if only is None or "histogram" in only else ()):
        cfg = replace(base.with_policies("histogram", {"uint8": hist_rec.Policy(t, i, v, c)}),
                      name=f"h200-histogram-{name.replace(' ', '-')}")
        jobs.append(("histogram", name, cfg, ("common", "histogram")))
    with ThreadPoolExecutor(max_workers=8) as pool:
        libs = list(pool.map(lambda j: variant_lib(j[2], j[3], cache), jobs))
    out: dict = {}
    for (alg, name, _, _), lib in zip(jobs, libs):
        out.setdefault(alg, {})[name] = lib
    return out


def iters_for(nbytes: int) -> int:
    """Calls per repeat: about 4 ms of work, at least 5, at most 100 (the spin covers their launches)."""
    est = nbytes / 3e12 + 5e-6
    return max(5, min(100, int(4e-3 / est)))


def nbufs(nbytes: int, total_cap: int = 3 << 30) -> int:
    return max(2, min(512, math.ceil(3 * L2_BYTES / nbytes), total_cap // max(nbytes, 1)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", type=Path, default=None)
    ap.add_argument("--out-json", type=Path, default=None)
    ap.add_argument("--out-md", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--backend", default="capi", choices=["capi", "torch"])
    ap.add_argument("--variants", action="store_true", help="also time scan/topk/histogram policy variants")
    ap.add_argument("--only", default="reduce,scan,transform,topk,histogram", help="comma-separated sections to run")
    ap.add_argument("--scan-dtypes", default="float32", help="scan element types (float32,int32,float64,int64)")
    ap.add_argument("--scan-sizes", default="16,20,24,28", help="scan sizes as powers of two")
    ap.add_argument("--scan-exclusive", action="store_true", help="also time the exclusive scan (muh vs CUB)")
    args = ap.parse_args()

    import torch

    from muh.families import calls
    from muh import families
    from muh.runtime import load

    cache = ROOT / ".muh-cache" / "bench"
    cache.mkdir(parents=True, exist_ok=True)
    gen = args.gen
    if gen is None:
        from bench import presets
        from muh.codegen.kernels import emitter

        gen = cache / "h200"
        emitter.write(presets.h200(), gen)
    k = load(gen, backend=args.backend, api=families.api())
    cub = build_cub(cache)
    only = set(args.only.split(","))
    variants = build_variants(cache, only) if args.variants else {}
    reps = 5 if args.quick else 7
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    dev = torch.cuda.get_device_properties(0)
    rows = []

    # ---- device copy: the bandwidth ceiling of this run ----
    n_copy = 1 << 28
    a = torch.randn(n_copy, device="cuda")
    b = torch.empty_like(a)
    t_copy = timeit(lambda i: b.copy_(a), torch, 20, reps)
    copy_bw = 2 * a.numel() * 4 / t_copy
    del a, b
    print(f"device: {dev.name}, {dev.multi_processor_count} SMs; copy {copy_bw / 1e9:.0f} GB/s (1 GiB)", flush=True)

    def record(alg, variant, n, bytes_moved, t_muh, t_cub, t_torch, lat=None, t_copy=None, t_hub=None):
        """t_copy: a device copy of the same bytes in this run (else the 1 GiB copy's rate is the ceiling)."""
        ceil = copy_bw if t_copy is None else bytes_moved / t_copy
        row = {"latency_us": lat,"alg": alg, "variant": variant, "n": n, "muh_us": t_muh * 1e6,
               "cub_us": None if t_cub is None else t_cub * 1e6,
               "torch_us": None if t_torch is None else t_torch * 1e6,
               "cub_hub_us": None if t_hub is None else t_hub * 1e6,
               "cub_vs_cub_hub": None if t_hub is None or t_cub is None else t_cub / t_hub,
               "copy_us": None if t_copy is None else t_copy * 1e6,
               "vs_cub": None if t_cub is None else t_cub / t_muh,
               "vs_torch": None if t_torch is None else t_torch / t_muh,
               "muh_gbs": bytes_moved / t_muh / 1e9, "pct_copy": 100 * bytes_moved / t_muh / ceil,
               "cub_pct_copy": None if t_cub is None else 100 * bytes_moved / t_cub / ceil,
               "torch_pct_copy": None if t_torch is None else 100 * bytes_moved / t_torch / ceil}
        rows.append(row)
        print(json.dumps(row), flush=True)

    # ---- reduce sum float32 ----
    for n in (SIZES if "reduce" in only else []):
        nb = nbufs(4 * n)
        xs = [torch.randint(-8, 9, (n,), device="cuda").float() for _ in range(nb)]
        out = torch.empty((), device="cuda")
        ws = calls.workspace(k, xs[0], "reduce", int(k.raw("muh_reduce_workspace_bytes")()))
        want = xs[0].double().sum().item()
        assert calls.reduce(xs[0], kernels=k).item() == want
        cub.cub_reduce(0, 0, xs[0].data_ptr(), out.data_ptr(), n, stream())
        assert out.item() == want
        it = iters_for(4 * n)
        fn = k.raw("muh_reduce")
        s = stream()
        t_muh = timeit(lambda i: fn(0, 0, xs[i % nb].data_ptr(), n, out.data_ptr(), ws[0].data_ptr(),
                                    ws[0].numel(), s), torch, it, reps)
        t_cub = timeit(lambda i: cub.cub_reduce(0, 0, xs[i % nb].data_ptr(), out.data_ptr(), n, s), torch, it, reps)
        t_torch = timeit(lambda i: torch.sum(xs[i % nb]), torch, it, reps)
        assert cub.hub_reduce(0, 0, xs[0].data_ptr(), out.data_ptr(), n, stream()) == 0 and out.item() == want
        t_hub = timeit(lambda i: cub.hub_reduce(0, 0, xs[i % nb].data_ptr(), out.data_ptr(), n, s), torch, it, reps)
        lat = None
        if n <= 1 << 20:
            lat = [latency(lambda i: fn(0, 0, xs[i % nb].data_ptr(), n, out.data_ptr(), ws[0].data_ptr(),
                                        ws[0].numel(), s), torch) * 1e6,
                   latency(lambda i: cub.cub_reduce(0, 0, xs[i % nb].data_ptr(), out.data_ptr(), n, s), torch) * 1e6,
                   latency(lambda i: torch.sum(xs[i % nb]), torch) * 1e6]
        record("reduce", "sum float32", n, 4 * n, t_muh, t_cub, t_torch, lat, t_hub=t_hub)
        del xs

    # ---- scan sum: inclusive per type and size (+ exclusive), vs CUB, torch.cumsum and a copy ----
    tdt = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}
    for dname in (args.scan_dtypes.split(",") if "scan" in only else []):
        code = calls.DTYPE_CODES[dname]
        size = torch.empty((), dtype=tdt[dname]).element_size()
        for n in [1 << int(e) for e in args.scan_sizes.split(",")]:
            nb = nbufs(2 * size * n)
            xs = [torch.randint(-8, 9, (n,), device="cuda").to(tdt[dname]) for _ in range(nb)]
            ys = [torch.empty_like(xs[0]) for _ in range(nb)]
            want = torch.cumsum(xs[0].to(torch.int64), 0)  # exact: integer-valued inputs
            got = calls.scan(xs[0], kernels=k)
            assert torch.equal(got.to(torch.int64), want), (dname, n)
            cub.cub_scan(0, code, xs[0].data_ptr(), ys[0].data_ptr(), n, stream())
            torch.cuda.synchronize()
            assert torch.equal(ys[0].to(torch.int64), want), ("CUB", dname, n)
            del want, got
            it = iters_for(2 * size * n)
            fn = k.raw("muh_scan")
            ws = calls.workspace(k, xs[0], f"scan{size}", int(k.raw("muh_scan_workspace_bytes")(code, n)))
            s = stream()

            def muh_scan(i, ex=0):
                ws[1] = ws[1] % ((1 << 30) - 1) + 1
                fn(ex, code, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, ws[0].data_ptr(), ws[0].numel(), ws[1], s)
            t_muh = timeit(muh_scan, torch, it, reps)
            t_cub = timeit(lambda i: cub.cub_scan(0, code, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, s),
                           torch, it, reps)
            t_torch = timeit(lambda i: torch.cumsum(xs[i % nb], 0, dtype=tdt[dname], out=ys[i % nb]), torch, it, reps)
            t_copy = timeit(lambda i: ys[i % nb].copy_(xs[i % nb]), torch, it, reps)
            t_hub = None
            if dname == "float32":  # CUB with muh's h200 hub: the same exact answer, then timed
                assert cub.hub_scan(0, code, xs[0].data_ptr(), ys[0].data_ptr(), n, s) == 0
                torch.cuda.synchronize()
                assert torch.equal(ys[0].to(torch.int64), torch.cumsum(xs[0].to(torch.int64), 0)), ("hub", dname, n)
                t_hub = timeit(lambda i: cub.hub_scan(0, code, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, s),
                               torch, it, reps)
            lat = None
            if n <= 1 << 20 and dname == "float32":
                lat = [latency(muh_scan, torch) * 1e6,
                       latency(lambda i: cub.cub_scan(0, code, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, s),
                               torch) * 1e6,
                       latency(lambda i: torch.cumsum(xs[i % nb], 0, out=ys[i % nb]), torch) * 1e6]
            record("scan", f"inclusive sum {dname}", n, 2 * size * n, t_muh, t_cub, t_torch, lat, t_copy, t_hub)
            if args.scan_exclusive and n >= 1 << 24:
                want = torch.cumsum(xs[0].to(torch.int64), 0) - xs[0].to(torch.int64)
                assert torch.equal(calls.scan(xs[0], exclusive=True, kernels=k).to(torch.int64), want), (dname, n)
                del want
                t_mx = timeit(lambda i: muh_scan(i, 1), torch, it, reps)
                t_cx = timeit(lambda i: cub.cub_scan(1, code, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, s),
                              torch, it, reps)
                record("scan", f"exclusive sum {dname}", n, 2 * size * n, t_mx, t_cx, None, None, t_copy)
            for name, kv in (variants.get("scan", {}).items() if dname == "float32" else ()):
                if n < 1 << 28:
                    continue
                fv = kv.raw("muh_scan")
                wv = calls.workspace(kv, xs[0], "scan4", int(kv.raw("muh_scan_workspace_bytes")(0, n)))

                def var_scan(i, fv=fv, wv=wv):
                    wv[1] = wv[1] % ((1 << 30) - 1) + 1
                    fv(0, 0, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, wv[0].data_ptr(), wv[0].numel(), wv[1], s)
                var_scan(0)
                torch.cuda.synchronize()
                assert torch.equal(ys[0], torch.cumsum(xs[0].double(), 0).float()), name
                record("scan-variant", name, n, 8 * n, timeit(var_scan, torch, it, reps), t_cub, t_torch, None, t_copy)
            del xs, ys

    # ---- transform: y = 0.5 * x, float32 ----
    for n in (SIZES if "transform" in only else []):
        nb = nbufs(8 * n)
        xs = [torch.randn(n, device="cuda") for _ in range(nb)]
        ys = [torch.empty_like(xs[0]) for _ in range(nb)]
        assert torch.equal(calls.transform(xs[0], "scale", 0.5, kernels=k), xs[0] * 0.5)
        it = iters_for(8 * n)
        fn = k.raw("muh_transform")
        s = stream()
        t_muh = timeit(lambda i: fn(0, 0, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, 0.5, s), torch, it, reps)
        t_cub = timeit(lambda i: cub.cub_transform_scale(0, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, 0.5, s),
                       torch, it, reps)
        t_torch = timeit(lambda i: torch.mul(xs[i % nb], 0.5, out=ys[i % nb]), torch, it, reps)
        assert cub.hub_transform_scale(0, xs[0].data_ptr(), ys[0].data_ptr(), n, 0.5, s) == 0
        torch.cuda.synchronize()
        assert torch.equal(ys[0], xs[0] * 0.5)
        t_hub = timeit(lambda i: cub.hub_transform_scale(0, xs[i % nb].data_ptr(), ys[i % nb].data_ptr(), n, 0.5, s),
                       torch, it, reps)
        record("transform", "scale float32", n, 8 * n, t_muh, t_cub, t_torch, t_hub=t_hub)
        del xs, ys

    # ---- topk per row (sampling shapes), float32 ----
    for rows_, cols, kk in ([(1, 152064, 50), (2, 152064, 50), (8, 152064, 50), (64, 152064, 50),
                              (64, 152064, 1024), (4096, 256, 8)] if "topk" in only else []):
        n = rows_ * cols
        nb = nbufs(4 * n)
        xs = [torch.randn(rows_, cols, device="cuda") for _ in range(nb)]
        vals = torch.empty((rows_, kk), device="cuda")
        idx = torch.empty((rows_, kk), dtype=torch.int64, device="cuda")
        v, i_ = calls.topk(xs[0], kk, kernels=k)
        ref = torch.topk(xs[0], kk)
        assert torch.equal(v, ref.values)
        fn = k.raw("muh_topk")
        s = stream()
        it = 20
        t_muh = timeit(lambda i: fn(0, xs[i % nb].data_ptr(), rows_, cols, kk, vals.data_ptr(), idx.data_ptr(), s),
                       torch, it, reps)
        t_torch = timeit(lambda i: torch.topk(xs[i % nb], kk), torch, it, reps)
        record("topk", f"{rows_}x{cols} k={kk} float32", n, 4 * n, t_muh, None, t_torch)
        for name, kv in variants.get("topk", {}).items():
            if rows_ != 64 or kk != 50:
                continue
            fv = kv.raw("muh_topk")
            fv(0, xs[0].data_ptr(), rows_, cols, kk, vals.data_ptr(), idx.data_ptr(), s)
            torch.cuda.synchronize()
            assert torch.equal(vals, ref.values), name
            t_v = timeit(lambda i, fv=fv: fv(0, xs[i % nb].data_ptr(), rows_, cols, kk, vals.data_ptr(),
                                               idx.data_ptr(), s), torch, it, reps)
            record("topk-variant", f"{name} {rows_}x{cols} k={kk}", n, 4 * n, t_v, None, t_torch)
        del xs

    # ---- histogram: HistogramEven, 256 bins: float32 uniform in [0, 1), uint8 and int32 over [0, 256);
    #      at 2^28 also all samples equal, and other bin counts ----
    from muh.runtime.dtypes import CODE

    cases = [("float32", 0.0, 1.0, "uniform", 256, SIZES), ("uint8", 0.0, 256.0, "uniform", 256, SIZES),
             ("int32", 0.0, 256.0, "uniform", 256, SIZES), ("uint8", 0.0, 256.0, "one value", 256, SIZES[-1:]),
             ("uint8", 0.0, 256.0, "uniform", 16, SIZES[-1:]), ("uint8", 0.0, 256.0, "uniform", 64, SIZES[-1:]),
             ("float32", 0.0, 1.0, "uniform", 1024, SIZES[-1:]), ("float32", 0.0, 1.0, "uniform", 4096, SIZES[-1:])]
    for dtype, lo, hi, dist, bins, sizes in (cases if "histogram" in only else ()):
        code = CODE[dtype]
        for n in sizes:
            size = torch.tensor([], dtype=getattr(torch, dtype)).element_size()
            nb = nbufs(size * n)
            if dtype == "float32":
                xs = [torch.rand(n, device="cuda") for _ in range(nb)]
            elif dist == "uniform":
                xs = [torch.randint(0, 256, (n,), device="cuda", dtype=getattr(torch, dtype)) for _ in range(nb)]
            else:  # every sample in one bin: the worst case for shared-memory atomics
                xs = [torch.full((n,), 77, device="cuda", dtype=getattr(torch, dtype)) for _ in range(nb)]
            h_muh = torch.empty(bins, dtype=torch.int32, device="cuda")
            h_cub = torch.empty(bins, dtype=torch.int32, device="cuda")
            s = stream()
            calls.histogram_even(xs[0], bins, lo, hi, out=h_muh, kernels=k)
            assert cub.cub_histogram_even(code, xs[0].data_ptr(), n, bins, lo, hi, h_cub.data_ptr(), s) == 0
            assert torch.equal(h_muh, h_cub), f"histogram {dtype} n={n}: muh and CUB disagree"
            want = h_cub.clone()  # CUB's counts of xs[0] (the timed calls below overwrite h_cub)
            fn = k.raw("muh_histogram_even")
            it = iters_for(size * n)
            t_muh = timeit(lambda i: fn(code, xs[i % nb].data_ptr(), n, bins, lo, hi, h_muh.data_ptr(), s),
                           torch, it, reps)
            t_cub = timeit(lambda i: cub.cub_histogram_even(code, xs[i % nb].data_ptr(), n, bins, lo, hi,
                                                            h_cub.data_ptr(), s), torch, it, reps)
            t_torch = timeit(lambda i: torch.histc(xs[i % nb].float(), bins, lo, hi), torch, it, reps)
            h_hub = torch.empty(bins, dtype=torch.int32, device="cuda")
            assert cub.hub_histogram_even(code, xs[0].data_ptr(), n, bins, lo, hi, h_hub.data_ptr(), s) == 0
            assert torch.equal(h_hub, want), f"histogram {dtype} n={n}: CUB with muh's hub differs from CUB"
            t_hub = timeit(lambda i: cub.hub_histogram_even(code, xs[i % nb].data_ptr(), n, bins, lo, hi,
                                                            h_hub.data_ptr(), s), torch, it, reps)
            what = f"even {bins} bins {dtype}" + ("" if dist == "uniform" else f" {dist}")
            record("histogram", what, n, size * n, t_muh, t_cub, t_torch, t_hub=t_hub)
            tried = dtype == "uint8" and bins == 256 and n >= 1 << 24
            for name, kv in (variants.get("histogram", {}).items() if tried else ()):
                fv = kv.raw("muh_histogram_even")
                h_v = torch.empty(bins, dtype=torch.int32, device="cuda")
                calls.histogram_even(xs[0], bins, lo, hi, out=h_v, kernels=kv)
                assert torch.equal(h_v, want), f"histogram variant {name} n={n}: differs from CUB"
                t_v = timeit(lambda i, fv=fv: fv(code, xs[i % nb].data_ptr(), n, bins, lo, hi, h_v.data_ptr(), s),
                             torch, it, reps)
                record("histogram-variant", f"{name} {what}", n, size * n, t_v, t_cub, None)
            del xs

    result = {"device": dev.name, "sms": dev.multi_processor_count, "copy_gbs": copy_bw / 1e9,
              "torch": torch.__version__, "rows": rows}
    md = render_md(result)
    print(md)
    if args.out_json:
        args.out_json.write_text(json.dumps(result, indent=2) + "\n")
    if args.out_md:
        args.out_md.write_text(md)
    return 0


def _size(n: int) -> str:
    return f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else str(n)


def render_md(r: dict) -> str:
    lines = [f"device: {r['device']} ({r['sms']} SMs), torch {r['torch']}; device copy in this run: "
             f"{r['copy_gbs']:.0f} GB/s", "",
             "% copy: against a device copy of the same bytes in this run where the copy µs column has one, "
             "else against the 1 GiB copy's rate", "",
             "| algorithm | case | n | muh µs | CUB µs | CUB with muh's hub µs | torch µs | copy µs | muh vs CUB "
             "| CUB vs CUB with muh's hub | muh vs torch | muh GB/s | muh % copy | CUB % copy | torch % copy |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    f = lambda v, fmt, unit="": "—" if v is None else format(v, fmt) + unit  # noqa: E731
    for x in r["rows"]:
        lines.append(f"| {x['alg']} | {x['variant']} | {_size(x['n'])} | {x['muh_us']:.1f} | {f(x['cub_us'], '.1f')} | "
                     f"{f(x.get('cub_hub_us'), '.1f')} | "
                     f"{f(x.get('torch_us'), '.1f')} | {f(x.get('copy_us'), '.1f')} | {f(x['vs_cub'], '.2f', '×')} | "
                     f"{f(x.get('cub_vs_cub_hub'), '.2f', '×')} | "
                     f"{f(x.get('vs_torch'), '.2f', '×')} | {x['muh_gbs']:.0f} | {x['pct_copy']:.0f}% | "
                     f"{f(x['cub_pct_copy'], '.0f', '%')} | {f(x.get('torch_pct_copy'), '.0f', '%')} |")
    lat = [x for x in r["rows"] if x.get("latency_us")]
    if lat:
        lines += ["", "Synchronised single-call latency (host launch included; µs, median of 40):", "",
                  "| algorithm | n | muh | CUB | torch | muh vs CUB |", "|---|---|---|---|---|---|"]
        for x in lat:
            m, c, t = x["latency_us"]
            lines.append(f"| {x['alg']} | {_size(x['n'])} | {m:.1f} | {c:.1f} | {t:.1f} | {c / m:.2f}× |")
    for alg in ("reduce", "scan", "transform", "histogram"):
        sp = [x["vs_cub"] for x in r["rows"] if x["alg"] == alg and x["vs_cub"]]
        if sp:
            lines.append(f"\n{alg}: geometric mean speedup over CUB {math.exp(sum(map(math.log, sp)) / len(sp)):.2f}×")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
