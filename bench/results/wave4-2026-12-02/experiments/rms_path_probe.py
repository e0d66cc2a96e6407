"""Experiment (issue 16): the same plain rms_norm at hidden 2048 measures 82-86 % of copy in the grid
(bench/ops_grid.py, torch.ops.muh.rms_norm in a CUDA graph) but 94-99 % in bench/results/wave4-2026-12-02/experiments/rms_rows.cu
(the C entry muh_op_rms_norm in a CUDA graph). This times, in one process and one graph method
(ops_grid.graph_time), the torch operator and the C entry of the very library the operator calls, on
the same tensors, next to the copy; run it under ncu to see the launches each path makes.

    python3 bench/results/wave4-2026-12-02/experiments/rms_path_probe.py
    ncu --kernel-name regex:rms_norm --launch-count 4 --section LaunchStats python3 bench/results/wave4-2026-12-02/experiments/rms_path_probe.py --once
"""
from __future__ import annotations

import ctypes
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

EPS = 1e-6


def main() -> None:
    import torch

    import presets
    from ops_grid import L2_ROTATE, graph_time

    from muh.runtime import operators
    from muh.runtime.dtypes import CODE

    once = "--once" in sys.argv
    gen = Path(tempfile.mkdtemp(prefix="muh-probe-"))
    presets.write_ops("h200", gen)
    loaded = operators.load(gen)
    lib = ctypes.CDLL(loaded.library)
    f = lib.muh_op_rms_norm
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong, ctypes.c_int,
                  ctypes.c_longlong, ctypes.c_longlong, ctypes.c_float, ctypes.c_void_p]
    print(f"backend {loaded.backend}, library {loaded.library}", flush=True)
    m = torch.ops.muh
    hidden = 2048
    for dtype in ("bfloat16", "float16"):
        dt = getattr(torch, dtype)
        code = CODE[dtype]
        w = torch.rand(hidden, device="cuda", dtype=dt) + 0.5
        for t in (4096, 16384):
            nbytes = t * hidden * dt.itemsize
            nbuf = max(1, min(64, -(-L2_ROTATE // nbytes)))
            xs = [torch.randn(t, hidden, device="cuda", dtype=dt) for _ in range(nbuf)]
            out = torch.empty(t, hidden, device="cuda", dtype=dt)

            def capi(i):
                rc = f(code, out.data_ptr(), xs[i].data_ptr(), w.data_ptr(), t, hidden, hidden, hidden, EPS,
                       torch.cuda.current_stream().cuda_stream)
                assert rc == 0, rc

            cases = {"copy": lambda i: out.copy_(xs[i]),
                     "torch.ops.muh.rms_norm": lambda i: m.rms_norm(out, xs[i], w, EPS),
                     "C muh_op_rms_norm (same lib)": capi}
            if once:
                for name, fn in cases.items():
                    if name != "copy":
                        fn(0)
                torch.cuda.synchronize()
                continue
            ref = torch.empty_like(out)
            m.rms_norm(ref, xs[0], w, EPS)
            capi(0)
            torch.cuda.synchronize()
            same = bool(torch.equal(ref, out))
            res = {k: graph_time(torch, fn, nbuf) for k, fn in cases.items()}
            print(f"{dtype} {t} x {hidden} ({nbytes / 2**20:.0f} MiB, {nbuf} buffers; outputs equal: {same})")
            for k, v in res.items():
                print(f"  {k:30s} {v * 1e6:8.2f} us  {100 * res['copy'] / v:5.1f} % of copy", flush=True)


if __name__ == "__main__":
    main()
