"""One topk call on a prebuilt library, checked against torch's stable sort: prints OK / BAD / FAULT.
    python3 bench/results/topk-small-2026-12-06/repro.py LIB DTYPE ROWS COLS K DATA(normal|ties|equal) [SEED]"""
import sys
import torch
from muh import families
from muh.families import calls
from muh.runtime.library import Kernels

lib, dtype, rows, cols, k, data = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), sys.argv[6]
seed = int(sys.argv[7]) if len(sys.argv) > 7 else 1
kern = Kernels.from_library(lib, families.api())
g = torch.Generator(device="cuda"); g.manual_seed(seed)
for data in data.split(","):
  x = torch.randn(rows, cols, device="cuda", generator=g, dtype=torch.float64).to(getattr(torch, dtype))
  if data == "ties":
    x = (x * 2).round().clamp(-3, 3)
  elif data == "equal":
    x = x[:, :1].expand(rows, cols).contiguous()
  tag = f"{lib.split('/')[-2]} {dtype} {rows}x{cols} k={k} {data}"
  try:
    v, i = calls.topk(x, k, kernels=kern)
    torch.cuda.synchronize()
    ref = torch.sort(x, dim=1, descending=True, stable=True)
    ok = torch.equal(v, ref.values[:, :k]) and torch.equal(i, ref.indices[:, :k])
    bad = (i != ref.indices[:, :k]).any(1).nonzero().flatten()[:5].tolist()
    print(("OK " if ok else f"BAD rows {bad} ") + tag, flush=True)
  except Exception as e:  # noqa: BLE001
    print(f"FAULT {tag}: {str(e).splitlines()[0]}", flush=True)
    break
