"""topk before / after, one process, alternating: two generated kernel folders (their topk kernels
alone are built), every case of bench/kernels.py's topk table plus the small-row shapes, against
torch.topk measured in the same run.

    python3 bench/topk_small_ab.py --before DIR --after DIR [--rounds 2] [--out-json F] [--out-md F]

Each case is checked first (both sides' values equal torch.topk's, their indices point at their
values), then timed round by round: before, after, torch (bench/kernels.py's method: medians of
repeats, calls queued behind a GPU spin, CUDA events, inputs rotating over >= 3x the L2). The table
gives each side's medians per round, after / before and both against torch.topk.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kernels import nbufs, timeit  # noqa: E402  (the same method as the kernel table)

# (rows, row length, k, dtype): bench/kernels.py's topk table (float32), then the MoE router's shape in
# the half types, other expert counts, and the router at decode batch sizes
CASES = [(1, 152064, 50, "float32"), (2, 152064, 50, "float32"), (8, 152064, 50, "float32"),
         (64, 152064, 50, "float32"), (64, 152064, 1024, "float32"), (4096, 256, 8, "float32"),
         (4096, 256, 8, "float16"), (4096, 256, 8, "bfloat16"),
         (4096, 128, 8, "float32"), (4096, 512, 8, "float32"), (4096, 1024, 8, "float32"),
         (1, 256, 8, "float32"), (64, 256, 8, "float32")]


def topk_folder(gen: Path, cache: Path) -> Path:
    """A copy of a generated folder with its topk kernels alone (and the common unit)."""
    root = cache / f"topk-{gen.resolve().as_posix().strip('/').replace('/', '_')}"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(gen / "include", root / "include")
    (root / "kernels").mkdir(parents=True)
    for name in ("common.cu", "topk.cu"):
        shutil.copy(gen / "kernels" / name, root / "kernels" / name)
    return root


def topk_lib(gen: Path, cache: Path, arch: str):
    """The topk kernels of a generated folder, built alone for ``arch`` (content-hash cache)."""
    from muh import families
    from muh.runtime import build
    from muh.runtime.library import Kernels

    return Kernels.from_library(build.build_capi(topk_folder(gen, cache), arch=arch), families.api())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out-json", type=Path, default=None)
    ap.add_argument("--out-md", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from muh.families import calls
    from muh.runtime.dtypes import CODE

    cache = ROOT / ".muh-cache" / "bench"
    cache.mkdir(parents=True, exist_ok=True)
    major, minor = torch.cuda.get_device_capability()
    libs = {side: topk_lib(gen, cache, f"sm_{major}{minor}") for side, gen in (("before", args.before),
                                                                            ("after", args.after))}
    dev = torch.cuda.get_device_properties(0)
    print(f"device: {dev.name}, {dev.multi_processor_count} SMs, torch {torch.__version__}", flush=True)
    rows_out = []
    for rows, cols, k, dtype in CASES:
        tdt = getattr(torch, dtype)
        size = torch.empty((), dtype=tdt).element_size()
        n = rows * cols
        nb = nbufs(size * n)
        xs = [torch.randn(rows, cols, device="cuda", dtype=torch.float32).to(tdt) for _ in range(nb)]
        vals = torch.empty((rows, k), device="cuda", dtype=tdt)
        idx = torch.empty((rows, k), dtype=torch.int64, device="cuda")
        want = torch.topk(xs[0], k).values
        for side, lib in libs.items():
            v, i = calls.topk(xs[0], k, kernels=lib)
            assert torch.equal(v, want), f"{side}: values of {rows}x{cols} k={k} {dtype}"
            assert torch.equal(xs[0].gather(1, i), v), f"{side}: indices of {rows}x{cols} k={k} {dtype}"
        s = torch.cuda.current_stream().cuda_stream
        code = CODE[dtype]
        it = 20
        t = {"before": [], "after": [], "torch": []}
        for _ in range(args.rounds):
            for side in ("before", "after"):
                fn = libs[side].raw("muh_topk")
                t[side].append(1e6 * timeit(lambda j, fn=fn: fn(code, xs[j % nb].data_ptr(), rows, cols, k,
                                                                vals.data_ptr(), idx.data_ptr(), s),
                                            torch, it, args.repeats))
            t["torch"].append(1e6 * timeit(lambda j: torch.topk(xs[j % nb], k), torch, it, args.repeats))
        med = {side: sorted(v)[len(v) // 2] if len(v) % 2 else sum(sorted(v)[len(v) // 2 - 1:len(v) // 2 + 1]) / 2
               for side, v in t.items()}
        row = {"case": f"{rows}x{cols} k={k} {dtype}", "rows": rows, "cols": cols, "k": k, "dtype": dtype,
               "before_us": t["before"], "after_us": t["after"], "torch_us": t["torch"],
               "after_over_before": med["after"] / med["before"],
               "after_vs_torch": med["torch"] / med["after"], "before_vs_torch": med["torch"] / med["before"]}
        rows_out.append(row)
        print(json.dumps(row), flush=True)
        del xs

    fmt = lambda v: ", ".join(f"{x:.1f}" for x in v)  # noqa: E731
    lines = [f"device: {dev.name} ({dev.multi_processor_count} SMs), torch {torch.__version__}", "",
             "| case | torch.topk µs | before µs (rounds) | after µs (rounds) | after / before | before vs torch | after vs torch |",
             "|---|---|---|---|---|---|---|"]
    for r in rows_out:
        lines.append(f"| {r['case']} | {fmt(r['torch_us'])} | {fmt(r['before_us'])} | {fmt(r['after_us'])} | "
                     f"{r['after_over_before']:.3f} | {r['before_vs_torch']:.2f}× | {r['after_vs_torch']:.2f}× |")
    table = "\n".join(lines)
    print(table)
    if args.out_json:
        args.out_json.write_text(json.dumps(rows_out, indent=1) + "\n")
    if args.out_md:
        args.out_md.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
