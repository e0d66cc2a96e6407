"""A/B of two builds of the generated ops (rms_norm, fused_add_rms_norm) in one run, on the present GPU.

    python3 bench/results/lab-2026-11-30/rms_ab.py GEN_DIR OLD_OPS_CU [--dtype float16] [--tokens 4096] [--out-md FILE]

A = GEN_DIR's headers and common.cu with OLD_OPS_CU; B = GEN_DIR as generated. Both are built by
the same nvcc call shape as muh.runtime.llm.build. Per case: device time per call (median,
bench/ops.py's gpu_time: calls queued behind a GPU spin, CUDA events, buffers rotated beyond the
L2), A and B measured twice each in the order A B B A, `F.rms_norm` and a device copy of the same
byte count in the same run. B's outputs are checked bit-for-bit against A's first.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("gen_dir")
    ap.add_argument("old_ops")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--hidden", default="2048,4096,8192")
    ap.add_argument("--out-md")
    ap.add_argument("--build-only", action="store_true", help="build (cache) both libraries and stop")
    args = ap.parse_args(argv)

    import torch
    import torch.nn.functional as F

    import ops as ob  # bench/ops.py
    from muh.runtime import llm

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    gen = Path(args.gen_dir)
    old = Path(tempfile.gettempdir()) / "muh-ab-old"  # fixed path: the content-hash cache hits on a rerun
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(gen / "include", old / "include")
    (old / "kernels").mkdir()
    shutil.copy(gen / "kernels" / "common.cu", old / "kernels" / "common.cu")
    shutil.copy(args.old_ops, old / "kernels" / "ops.cu")
    libs = {"A (old)": llm.load(llm.build(old, arch=arch)),
            "B (new)": llm.load(llm.build(gen, arch=arch))}
    if args.build_only:
        return 0
    dt = getattr(torch, args.dtype)
    esz = torch.tensor([], dtype=dt).element_size()
    eps = 1e-6
    rows = []
    for op in ("rms_norm", "fused_add_rms_norm"):
        for h in (int(x) for x in args.hidden.split(",")):
            t = args.tokens
            nbytes = (2 * t * h + h) * esz if op == "rms_norm" else (4 * t * h + h) * esz
            nbuf = ob.n_buffers(nbytes)
            xs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            rs = [torch.randn(t, h, device="cuda", dtype=dt) for _ in range(nbuf)]
            outs = [torch.empty_like(x) for x in xs]
            w = torch.rand(h, device="cuda", dtype=dt) + 0.5

            def run(lib, i):
                llm._lib = lib
                if op == "rms_norm":
                    llm.rms_norm(outs[i], xs[i], w, eps)
                else:
                    llm.fused_add_rms_norm(xs[i], rs[i], w, eps)

            # bit-for-bit: the same function (fresh copies for the in-place op)
            got = {}
            for name, lib in libs.items():
                llm._lib = lib
                x0, r0 = xs[0].clone(), rs[0].clone()
                if op == "rms_norm":
                    o = torch.full_like(x0, float("nan"))
                    llm.rms_norm(o, x0, w, eps)
                    got[name] = (o,)
                else:
                    llm.fused_add_rms_norm(x0, r0, w, eps)
                    got[name] = (x0, r0)
            same = all(torch.equal(a, b) for a, b in zip(*got.values()))
            times = {name: [] for name in libs}
            for name in ("A (old)", "B (new)", "B (new)", "A (old)"):
                lib = libs[name]
                times[name].append(ob.gpu_time(torch, lambda i, lib=lib: run(lib, i), nbuf))
            ref = ob.gpu_time(torch, lambda i: F.rms_norm(xs[i], (h,), w, eps), nbuf) if op == "rms_norm" else \
                ob.gpu_time(torch, lambda i: F.rms_norm(xs[i] + rs[i], (h,), w, eps), nbuf)
            copy = ob.gpu_time(torch, ob.copy_variant(torch, nbytes, nbuf), nbuf)
            a, b = min(times["A (old)"]), min(times["B (new)"])
            rows.append((op, t, h, same, times["A (old)"], times["B (new)"], ref, copy, a, b))
            del xs, rs, outs
            torch.cuda.empty_cache()
    lines = [f"Device: {torch.cuda.get_device_name()}; torch {torch.__version__}; dtype {args.dtype}; "
             f"A = {args.old_ops}, B = {gen}/kernels/ops.cu",
             "",
             "| op | tokens × hidden | B ≡ A bitwise | A µs (1st, 2nd) | B µs (1st, 2nd) | F µs | copy µs | "
             "A % of copy | B % of copy | A/B |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for op, t, h, same, ta, tb, ref, copy, a, b in rows:
        lines.append(f"| {op} | {t} × {h} | {'yes' if same else 'NO'} | {ta[0]*1e6:.1f}, {ta[1]*1e6:.1f} | "
                     f"{tb[0]*1e6:.1f}, {tb[1]*1e6:.1f} | {ref*1e6:.1f} | {copy*1e6:.1f} | {100*copy/a:.0f}% | "
                     f"{100*copy/b:.0f}% | {a/b:.2f}× |")
    text = "\n".join(lines)
    print(text)
    if args.out_md:
        Path(args.out_md).write_text(text + "\n")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
