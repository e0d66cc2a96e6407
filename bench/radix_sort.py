"""Radix sort benchmark: muh's Onesweep kernels vs cub::DeviceRadixSort (the toolkit's CUB) and torch.sort, one
process, one GPU, the same inputs, timed with CUDA events (median of repeats, bench/kernels.py's timeit).

    python3 bench/radix_sort.py --gen GEN_DIR [--out-md F] [--out-json F] [--max-log2 28] [--quick]

GEN_DIR: generated kernels with radix_sort (muh build, or tests/gpu's radix-only config). Rows: unsigned 32- and
64-bit keys, keys only and with 4-byte values, uniform bits and low-entropy bits (each key the AND of three random
words: 0.54 bits of entropy per bit, as CUB's benchmarks reduce entropy), 2^16 … 2^28 keys; and the segmented
case of sampling, 64 rows × 151936 float32 logits sorted descending per row, vs torch.sort(dim=-1).

"% copy" is the sort's memory traffic over its time, against a device-to-device copy of the same buffer measured in
the same run: traffic = n × (key + value bytes) × (1 read for the histogram + 2 per digit pass), the least an LSD
sort with 8-bit digits moves (CUB's Onesweep the same). Every muh result is checked against CUB's before timing.
"""
from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_cub(cache: Path):
    from muh.runtime import build
    from muh.runtime.toolchain import Toolchain

    src = ROOT / "bench" / "cub_radix.cu"
    key = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    lib = cache / f"cub-radix-{key}" / "libcub_radix.so"
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        flags = Toolchain.lab("sm_90").shared_library().flags
        subprocess.run([build.nvcc(), *flags, "-o", str(lib), str(src)], check=True)
    cub = ctypes.CDLL(str(lib))
    vp = ctypes.c_void_p
    cub.cub_radix_sort.argtypes = [ctypes.c_int, vp, vp, vp, vp, ctypes.c_longlong, vp]
    return cub


def timeit(launch, torch, target_s: float = 0.15, repeats: int = 7) -> float:
    """Median seconds per call of launch() (CUDA events around a batch sized to about target_s)."""
    launch()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    launch()
    e.record()
    e.synchronize()
    one = max(s.elapsed_time(e) / 1e3, 1e-6)
    iters = max(1, min(200, int(target_s / repeats / one)))
    per = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            launch()
        e.record()
        e.synchronize()
        per.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(per)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen", required=True)
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    ap.add_argument("--max-log2", type=int, default=28)
    ap.add_argument("--cache", default="/tmp/muh-cache/bench")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="uniform keys at 2^20, 2^24, 2^28 only (32-bit keys and pairs, 64-bit keys) and the 64-row sort: a "
        "short device call",
    )
    a = ap.parse_args()

    import torch

    from muh.families import calls
    from muh.runtime import dtypes as DT

    k = calls.load(a.gen, backend="capi")
    cub = build_cub(Path(a.cache))
    dev = torch.cuda.get_device_name()
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    rows = []
    g = torch.Generator(device="cuda").manual_seed(1)

    def keys(n, kb, low):
        w = lambda: torch.randint(-(1 << 62), 1 << 62, (n,), generator=g, device="cuda", dtype=torch.int64)  # noqa
        x = w() & w() & w() if low else w()
        return x if kb == 8 else x.to(torch.int32)  # int32 bits (the cast keeps the low 32 bits)

    for kb in (4, 8):
        name = {4: "uint32", 8: "uint64"}[kb]
        code = DT.CODE[name]
        for low in (False,) if a.quick else (False, True):
            for lg in range(20 if a.quick else 16, a.max_log2 + 1, 4):
                n = 1 << lg
                xs = keys(n, kb, low)  # signed storage of the unsigned bits
                for pairs in (False, True):
                    if pairs and kb == 8 and (lg > 24 or a.quick):
                        continue
                    vs = torch.arange(n, device="cuda", dtype=torch.int32) if pairs else None
                    out, alt = torch.empty_like(xs), torch.empty_like(xs)
                    vout = torch.empty_like(vs) if pairs else None
                    valt = torch.empty_like(vs) if pairs else None
                    ws = torch.zeros(int(k.raw("muh_radix_sort_workspace")(code, n)), dtype=torch.uint8, device="cuda")
                    cub_out = torch.empty_like(xs)
                    cub_vout = torch.empty_like(vs) if pairs else None
                    vp = lambda t: 0 if t is None else t.data_ptr()  # noqa: E731

                    def muh():
                        k.call("muh_radix_sort", code, 4 if pairs else 0, xs.data_ptr(), out.data_ptr(), alt.data_ptr(),
                               vp(vs), vp(vout), vp(valt), n, 0, 8 * kb, 0, ws.data_ptr(), ws.numel(), 0, stream())

                    def cubf():
                        rc = cub.cub_radix_sort(kb, xs.data_ptr(), cub_out.data_ptr(), vp(vs), vp(cub_vout), n,
                                                stream())
                        assert rc == 0, rc

                    muh()
                    cubf()
                    torch.cuda.synchronize()
                    ok = bool((out == cub_out).all()) and (not pairs or bool((vout == cub_vout).all()))
                    t_muh = timeit(muh, torch)
                    t_cub = timeit(cubf, torch)
                    # torch sorts signed keys: the same bytes and passes (order differs, cost does not)
                    t_torch = timeit(lambda: torch.sort(xs, stable=True), torch) if not pairs else None
                    t_copy = timeit(lambda: alt.copy_(xs), torch)
                    vb = 4 if pairs else 0
                    passes = 8 * kb // 8
                    traffic = n * (kb + vb) * (1 + 2 * passes)
                    copy_bw = 2 * n * kb / t_copy
                    rows.append({"key": name, "pairs": pairs, "dist": "low-entropy" if low else "uniform", "n": n,
                                 "same_as_cub": ok, "muh_s": t_muh, "cub_s": t_cub, "torch_s": t_torch,
                                 "copy_s": t_copy, "muh_pct_copy": 100 * traffic / t_muh / copy_bw,
                                 "cub_pct_copy": 100 * traffic / t_cub / copy_bw})
                    r = rows[-1]
                    print(f"{name} {'pairs' if pairs else 'keys '} {r['dist']:11} 2^{lg}: muh {t_muh * 1e6:9.1f} us "
                          f"cub {t_cub * 1e6:9.1f} us ({t_cub / t_muh:.2f}x) "
                          + (f"torch {t_torch * 1e6:9.1f} us " if t_torch else "")
                          + f"{n / t_muh / 1e9:.2f} GKeys/s {r['muh_pct_copy']:.0f}% copy (cub {r['cub_pct_copy']:.0f}%)"
                          f"{'' if ok else '  MISMATCH vs CUB'}", flush=True)
                    del out, alt, vout, valt, ws, cub_out, cub_vout
                del xs
                torch.cuda.empty_cache()

    # segmented rows: sampling's 64 x 151936 logits, descending per row
    seg = []
    for rows_, cols in ((64, 151936),) if a.quick else ((64, 151936), (8, 151936), (1, 151936)):
        x = torch.randn(rows_, cols, device="cuda", generator=g)
        gv, gi = calls.sort_rows(x, descending=True, kernels=k)
        wv, wi = torch.sort(x, dim=-1, descending=True, stable=True)
        ok = bool((gv == wv).all()) and bool((gi == wi).all())
        t_muh = timeit(lambda: calls.sort_rows(x, descending=True, kernels=k), torch)
        t_torch = timeit(lambda: torch.sort(x, dim=-1, descending=True), torch)
        t_torch_stable = timeit(lambda: torch.sort(x, dim=-1, descending=True, stable=True), torch)
        seg.append({"rows": rows_, "cols": cols, "same_as_torch": ok, "muh_s": t_muh, "torch_s": t_torch,
                    "torch_stable_s": t_torch_stable})
        print(f"rows {rows_} x {cols} float32 desc: muh {t_muh * 1e6:.1f} us torch {t_torch * 1e6:.1f} us "
              f"({t_torch / t_muh:.2f}x) torch stable {t_torch_stable * 1e6:.1f} us ({t_torch_stable / t_muh:.2f}x)"
              f"{'' if ok else '  MISMATCH vs torch'}", flush=True)

    res = {"device": dev, "torch": torch.__version__, "rows": rows, "segmented": seg}
    if a.out_json:
        Path(a.out_json).write_text(json.dumps(res, indent=1))
    if a.out_md:
        Path(a.out_md).write_text(render_md(res))
    return 0


def render_md(r: dict) -> str:
    out = [f"Device: {r['device']} (torch {r['torch']}). Times: median of 7 CUDA-event batches; ratios = other / muh "
           "(> 1: muh faster). % copy: traffic n·(key+value)·(1 + 2·passes) per time over a d2d copy's bandwidth, "
           "same run.", "",
           "| keys | values | data | n | muh µs | GKeys/s | % copy | CUB µs | CUB/muh | CUB % copy | torch µs | "
           "torch/muh | = CUB |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in r["rows"]:
        ts = x["torch_s"]
        t_us = "—" if ts is None else f"{ts * 1e6:.1f}"
        t_ratio = "—" if ts is None else f"{ts / x['muh_s']:.2f}"
        out.append(f"| {x['key']} | {'uint32' if x['pairs'] else '—'} | {x['dist']} | 2^{x['n'].bit_length() - 1} | "
                   f"{x['muh_s'] * 1e6:.1f} | {x['n'] / x['muh_s'] / 1e9:.2f} | {x['muh_pct_copy']:.0f} | "
                   f"{x['cub_s'] * 1e6:.1f} | {x['cub_s'] / x['muh_s']:.2f} | {x['cub_pct_copy']:.0f} | "
                   f"{t_us} | {t_ratio} | {'yes' if x['same_as_cub'] else 'NO'} |")
    out += ["", "| rows × cols (float32, descending per row) | muh µs | torch.sort µs | torch/muh | torch stable µs | "
            "stable/muh | = torch |", "|---|---|---|---|---|---|---|"]
    for x in r["segmented"]:
        out.append(f"| {x['rows']} × {x['cols']} | {x['muh_s'] * 1e6:.1f} | {x['torch_s'] * 1e6:.1f} | "
                   f"{x['torch_s'] / x['muh_s']:.2f} | {x['torch_stable_s'] * 1e6:.1f} | "
                   f"{x['torch_stable_s'] / x['muh_s']:.2f} | {'yes' if x['same_as_torch'] else 'NO'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
