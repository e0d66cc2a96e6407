"""The LLM ops of two specs timed in one run on the GPU: before and after `muh tune` of their policies.

    python3 bench/results/ops-tune-2026-12-01/ops_tune_ab.py --before specs/h200.muh --after tuned.muh [--out-md F] [--out-json F]

Both specs are built (`muh build`) and their ops compiled into two libraries (ctypes, muh/runtime/llm.py)
loaded side by side; for hidden {2048, 4096, 8192} x tokens {1, 16, 256, 4096, 16384} x {bfloat16, float16}
every cell times, as CUDA graphs replayed (bench/ops_grid.py's graph_time): a device copy of the same bytes,
rms_norm before / after and torch.nn.functional.rms_norm, silu_and_mul (d = hidden) before / after and the
eager `F.silu(x[:, :d]) * x[:, d:]`. Each muh output is checked against a float64 reference first (so a
size bucket's policy is exercised on its own side of the boundary). Ratios are against the copy and the
torch references of the same run; no number is compared across runs.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.ops_grid import EPS, HIDDEN, L2_ROTATE, TOKENS, graph_time  # noqa: E402 - the grid's one definition


def build(spec: str, out: Path) -> Path:
    """`muh build SPEC -o OUT` in a fresh interpreter (the spec's generated folder)."""
    code = "import sys; from muh.cli import main; sys.argv = ['muh'] + sys.argv[1:]; main()"
    r = subprocess.run([sys.executable, "-c", code, "build", spec, "-o", str(out)], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"muh build {spec} failed:\n{r.stdout}{r.stderr}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--out-md")
    ap.add_argument("--out-json")
    ap.add_argument("--tokens")
    ap.add_argument("--hidden")
    args = ap.parse_args(argv)

    import torch
    import torch.nn.functional as F

    from muh.runtime import llm
    from muh.runtime.dtypes import CODE

    tmp = Path(tempfile.mkdtemp(prefix="muh-ab-"))
    gens = [build(s, tmp / name) for s, name in ((args.before, "before"), (args.after, "after"))]
    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    with ThreadPoolExecutor(2) as ex:  # two nvcc processes side by side
        libs = list(ex.map(lambda g: llm.build(g, arch=arch), gens))
    before, after = (llm.load(p) for p in libs)
    tokens = tuple(int(t) for t in args.tokens.split(",")) if args.tokens else TOKENS
    hiddens = tuple(int(h) for h in args.hidden.split(",")) if args.hidden else HIDDEN

    def stream() -> int:
        return torch.cuda.current_stream().cuda_stream

    def rms(lib, out, x, w):
        rc = lib.rms_norm(CODE[dtype], out.data_ptr(), x.data_ptr(), w.data_ptr(), x.shape[0], x.shape[1],
                          x.shape[1], out.shape[1], EPS, stream())
        assert rc == 0, lib.error()

    def silu(lib, out, x):
        d = out.shape[1]
        rc = lib.silu_and_mul(CODE[dtype], out.data_ptr(), x.data_ptr(), x.shape[0], d, 2 * d, d, stream())
        assert rc == 0, lib.error()

    rows, bad = [], []
    for dtype in ("bfloat16", "float16"):
        dt = getattr(torch, dtype)
        for hidden in hiddens:
            w = torch.rand(hidden, device="cuda", dtype=dt) + 0.5
            for t in tokens:
                nbytes = t * hidden * dt.itemsize
                nbuf = max(1, min(64, -(-L2_ROTATE // nbytes)))
                xs = [torch.randn(t, hidden, device="cuda", dtype=dt) for _ in range(nbuf)]
                x2 = [torch.randn(t, 2 * hidden, device="cuda", dtype=dt) for _ in range(max(1, nbuf // 2))]
                out = torch.empty(t, hidden, device="cuda", dtype=dt)
                n2 = len(x2)
                # correctness first: each library against float64, with vLLM's roundings
                x64 = xs[0].double()
                ref = (x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + EPS)).to(dt).double() * w.double()
                g, u = x2[0][:, :hidden].double(), x2[0][:, hidden:].double()
                sref = (g / (1 + torch.exp(-g))).to(dt).double() * u
                for name, lib in (("before", before), ("after", after)):
                    rms(lib, out, xs[0], w)
                    err = ((out.double() - ref).abs() / (ref.abs() + 1)).max().item()
                    silu(lib, out, x2[0])
                    serr = ((out.double() - sref).abs() / (sref.abs() + 1)).max().item()
                    if err > 2e-2 or serr > 2e-2:
                        bad.append(f"{name} {dtype} {t}x{hidden}: rms_norm err {err:.3g}, silu_and_mul err {serr:.3g}")
                cases = {
                    "copy": (lambda i: out.copy_(xs[i]), 2 * nbytes, nbuf),
                    "rms before": (lambda i: rms(before, out, xs[i], w), 2 * nbytes, nbuf),
                    "rms after": (lambda i: rms(after, out, xs[i], w), 2 * nbytes, nbuf),
                    "F.rms_norm": (lambda i: F.rms_norm(xs[i], (hidden,), w, EPS), 2 * nbytes, nbuf),
                    "silu before": (lambda i: silu(before, out, x2[i]), 3 * nbytes, n2),
                    "silu after": (lambda i: silu(after, out, x2[i]), 3 * nbytes, n2),
                    "silu eager": (lambda i: F.silu(x2[i][:, :hidden]) * x2[i][:, hidden:], 3 * nbytes, n2),
                }
                res = {name: graph_time(torch, fn, nb) for name, (fn, _, nb) in cases.items()}
                bw = 2 * nbytes / res["copy"]
                row = {"dtype": dtype, "hidden": hidden, "tokens": t, "elements": t * hidden, "mib": nbytes / 2**20,
                       "us": {k: v * 1e6 for k, v in res.items()},
                       "pct_copy": {k: 100 * cases[k][1] / v / bw for k, v in res.items()}}
                rows.append(row)
                print(json.dumps(row), flush=True)
                del xs, x2, out
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "before": args.before,
              "after": args.after, "grid": rows, "wrong": bad}
    md = render(result)
    if args.out_json:
        Path(args.out_json).write_text(json.dumps(result, indent=1))
    if args.out_md:
        Path(args.out_md).write_text(md)
    print(md)
    return 1 if bad else 0


def render(r) -> str:
    lines = [f"# LLM ops before / after `muh tune` on {r['device']} (torch {r['torch']})", "",
             f"before: `{r['before']}`, after: `{r['after']}`; graph-replayed µs per call, %copy = bytes moved / "
             "time vs a device copy of the same bytes in the same run; targets (issue 16): rms_norm ≥ 90 % of copy "
             "from 8 MiB and never slower than F.rms_norm; silu_and_mul ≥ 90 % of copy from 8 MiB.", "",
             "| dtype | hidden | tokens | MiB | rms before µs | rms after µs | after/before | %copy before → after "
             "| F.rms_norm µs | ×F after | silu before µs | silu after µs | after/before | %copy before → after "
             "| eager µs |", "|" + "---|" * 15]
    for row in r["grid"]:
        u, p = row["us"], row["pct_copy"]
        lines.append(
            f"| {row['dtype']} | {row['hidden']} | {row['tokens']} | {row['mib']:.2f} | {u['rms before']:.2f} | "
            f"{u['rms after']:.2f} | {u['rms before'] / u['rms after']:.3f} | {p['rms before']:.0f} → "
            f"{p['rms after']:.0f} | {u['F.rms_norm']:.2f} | {u['F.rms_norm'] / u['rms after']:.2f} | "
            f"{u['silu before']:.2f} | {u['silu after']:.2f} | {u['silu before'] / u['silu after']:.3f} | "
            f"{p['silu before']:.0f} → {p['silu after']:.0f} | {u['silu eager']:.2f} |")
    lines += ["", "Wrong results: " + ("; ".join(r["wrong"]) if r["wrong"] else "none (every cell, both specs)")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
