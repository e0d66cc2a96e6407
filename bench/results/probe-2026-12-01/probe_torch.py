"""torch's view of the GPU beside the probe's: device properties and a 1 GiB device copy (same run).

    python3 bench/results/probe-2026-12-01/probe_torch.py OUT.json
"""
from __future__ import annotations

import json
import statistics
import sys

import torch

FIELDS = ("name", "major", "minor", "multi_processor_count", "warp_size", "total_memory", "L2_cache_size",
          "shared_memory_per_block", "shared_memory_per_block_optin", "shared_memory_per_multiprocessor",
          "max_threads_per_multi_processor", "regs_per_multiprocessor")


def main(out: str) -> None:
    p = torch.cuda.get_device_properties(0)
    props = {f: getattr(p, f, None) for f in FIELDS}
    n = (1 << 30) // 4  # 1 GiB of float32, as in the lab's anchors (bench/results/lab-2026-11-30)
    x = torch.ones(n, device="cuda")
    y = torch.empty_like(x)
    for _ in range(3):
        y.copy_(x)
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        y.copy_(x)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    ms = statistics.median(times)
    doc = {"torch": torch.__version__, "cuda": torch.version.cuda, "properties": props,
           "copy_1GiB_ms": ms, "copy_1GiB_gbps": 2 * (1 << 30) / (ms * 1e-3) / 1e9, "device_name": torch.cuda.get_device_name(0)}
    with open(out, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
    print(json.dumps(doc, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
