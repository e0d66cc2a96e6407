"""Where radix sort's time goes: one muh sort and one CUB sort of the same 2^N unsigned 32-bit keys, each run
after a warm-up, for Nsight Compute to time kernel by kernel (bench/radix_sort.py gives the totals).

    ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread,\
        launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active --csv \
        python3 bench/radix_profile.py --gen GEN_DIR [--log2 28] [--pairs] > profile.csv
    python3 bench/radix_profile.py --summary profile.csv      # per kernel: µs, GB/s moved, registers, grid

The warm-up calls are profiled too (ncu sees every launch); the summary keeps the second call of each side,
found by the NVTX-free rule "a side's kernels between its two torch.cuda.synchronize() marks": the script
launches a tiny marker kernel (torch.zeros) before each timed call.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MARK = 777  # elements of the marker allocation: a fill kernel with this grid is the separator


def run(gen: str, log2: int, pairs: bool, cache: str) -> None:
    import torch
    from radix_sort import build_cub

    from muh.families import calls
    from muh.runtime import dtypes as DT

    k = calls.load(gen, backend="capi")
    cub = build_cub(Path(cache))
    n = 1 << log2
    g = torch.Generator(device="cuda").manual_seed(3)
    xs = torch.randint(-(1 << 31), 1 << 31, (n,), generator=g, device="cuda", dtype=torch.int64).to(torch.int32)
    vs = torch.arange(n, device="cuda", dtype=torch.int32) if pairs else None
    out, alt = torch.empty_like(xs), torch.empty_like(xs)
    vout = torch.empty_like(vs) if pairs else None
    valt = torch.empty_like(vs) if pairs else None
    vp = lambda t: 0 if t is None else t.data_ptr()  # noqa: E731
    code = DT.CODE["uint32"]
    ws = torch.zeros(int(k.raw("muh_radix_sort_workspace")(code, n)), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    for side in ("muh", "cub"):
        for _ in range(2):
            torch.full((MARK,), float(side == "muh"), device="cuda")  # separator launch
            if side == "muh":
                k.call(
                    "muh_radix_sort",
                    code,
                    4 if pairs else 0,
                    xs.data_ptr(),
                    out.data_ptr(),
                    alt.data_ptr(),
                    vp(vs),
                    vp(vout),
                    vp(valt),
                    n,
                    0,
                    32,
                    0,
                    ws.data_ptr(),
                    ws.numel(),
                    0,
                    stream,
                )
            else:
                assert cub.cub_radix_sort(4, xs.data_ptr(), alt.data_ptr(), vp(vs), vp(valt), n, stream) == 0
            torch.cuda.synchronize()
    print("done", n, "pairs" if pairs else "keys", file=sys.stderr)


def summary(path: str) -> str:
    text = Path(path).read_text()
    start = text.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    launches: dict[str, dict] = {}
    for r in rows:
        launches.setdefault(
            r["ID"], {"name": r["Kernel Name"], "grid": r.get("Grid Size", ""), "block": r.get("Block Size", "")}
        )[r["Metric Name"]] = (r["Metric Unit"], r["Metric Value"])
    seq = [launches[i] for i in sorted(launches, key=int)]
    # groups between separators (fill kernels whose grid covers MARK elements: the first launch of each group)
    groups, cur = [], None
    for x in seq:
        if "fill" in x["name"].lower() or "FillFunctor" in x["name"]:
            cur = []
            groups.append(cur)
        elif cur is not None:
            cur.append(x)
    keep = {"muh": groups[1] if len(groups) > 1 else [], "cub": groups[3] if len(groups) > 3 else []}

    def num(x, metric, scale=1.0):
        unit, val = x.get(metric, ("", "nan"))
        v = float(val.replace(",", ""))
        return v * {
            "ns": 1e-3,
            "us": 1.0,
            "ms": 1e3,
            "nsecond": 1e-3,
            "usecond": 1.0,
            "msecond": 1e3,
            "byte": 1e-9,
            "Kbyte": 1e-6,
            "Mbyte": 1e-3,
            "Gbyte": 1.0,
        }.get(unit, scale)

    out = [
        "| side | kernel | grid × block | regs | µs | GB moved | GB/s | warps active % |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for side, ks in keep.items():
        total = 0.0
        for x in ks:
            us = num(x, "gpu__time_duration.sum")
            gb = num(x, "dram__bytes.sum")
            total += us
            short = x["name"].split("(")[0].split("<")[0][-48:]
            regs = x.get("launch__registers_per_thread", ("", "?"))[1]
            act = x.get("sm__warps_active.avg.pct_of_peak_sustained_active", ("", "?"))[1]
            out.append(
                f"| {side} | {short} | {x['grid']} × {x['block']} | {regs} | {us:.1f} | {gb:.3f} | "
                f"{gb / us * 1e6:.0f} | {act} |"
            )
        out.append(f"| {side} | **total** | | | **{total:.1f}** | | | |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gen")
    ap.add_argument("--log2", type=int, default=28)
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--cache", default="/tmp/muh-cache/bench")
    ap.add_argument("--summary")
    a = ap.parse_args()
    if a.summary:
        print(summary(a.summary))
        return 0
    run(a.gen, a.log2, a.pairs, a.cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
