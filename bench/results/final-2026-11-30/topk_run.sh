#!/usr/bin/env bash
# topk on the lab H200, one device call (split long rows over several blocks; old kernel as a variant):
#   run(command="bash bench/results/final-2026-11-30/topk_run.sh", carry=[".whl"], timeout_s=250)
# 1. builds (in parallel): every GPU-test library (gpu_helpers.prebuild) + the topk-only bench libraries
#    (spec policy with split = the new default, the same policy with split=False = the committed kernel,
#    and two smaller slices),
# 2. the topk GPU tests (H200 native + BI-V100 under 64/16/128-lane emulation),
# 3. old vs new vs torch.topk on the sampling shapes, same process, same buffers (bench/kernels.py timing).
# Results under $OUT: build.log, pytest.log, topk_bench.log, topk.json, times.txt.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"
t0=$SECONDS
cat > /tmp/topk_libs.py <<'EOF'
import sys
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, "bench")
import kernels as kb
from muh.codegen.kernels import presets


def configs():
    base = presets.h200()
    pol = base.topk["float32"]
    mk = lambda name, p: replace(base, topk={"float32": p}, name=f"h200-topk-{name}")
    return {
        "new (spec 512x4, split, slice 8192)": mk("new", pol),
        "old (spec 512x4, one block per row)": mk("old", replace(pol, split=False)),
        "new 512x2 (slice 4096)": mk("s4096", replace(pol, items=2)),
        "new 256x2 (slice 2048)": mk("s2048", replace(pol, threads=256, items=2)),
    }


def libs(cache=Path(".muh-cache/bench")):
    from concurrent.futures import ThreadPoolExecutor
    cfgs = configs()
    with ThreadPoolExecutor(max_workers=len(cfgs)) as pool:
        return dict(zip(cfgs, pool.map(lambda c: kb.variant_lib(c, ("common", "topk"), cache), cfgs.values())))


if __name__ == "__main__":
    libs()
EOF
timeout -s KILL 105 python3 -c "from gpu_helpers import prebuild; prebuild('/tmp/gen', jobs=12)" > "$OUT/build.log" 2>&1 &
timeout -s KILL 105 python3 /tmp/topk_libs.py >> "$OUT/build.log" 2>&1 &
wait; echo "build $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"
timeout -s KILL ${TESTS_S:-65} python3 -m pytest tests/gpu/test_kernels_gpu.py -k "topk" -m gpu -rfE -n 4 \
  -p no:cacheprovider -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
echo "tests $((SECONDS-t0)) s (rc $?)" | tee -a "$OUT/times.txt"
grep -cE " PASSED" "$OUT/pytest.log"; grep -E "FAILED|ERROR|Error" "$OUT/pytest.log" | head -20; tail -4 "$OUT/pytest.log"
timeout -s KILL ${BENCH_S:-60} python3 - > "$OUT/topk_bench.log" 2>&1 <<'EOF'
import json, os, sys
sys.path.insert(0, "/tmp"); sys.path.insert(0, "bench")
import torch
import kernels as kb
import topk_libs
libs = topk_libs.libs()
stream = torch.cuda.current_stream().cuda_stream
dev = torch.cuda.get_device_properties(0)
print(f"device: {dev.name}, {dev.multi_processor_count} SMs; torch {torch.__version__}", flush=True)
rows_out = []
for rows, cols, kk in [(1, 152064, 50), (2, 152064, 50), (8, 152064, 50), (64, 152064, 50), (64, 152064, 1024),
                       (1, 152064, 1024), (4096, 256, 8)]:
    n = rows * cols
    nb = kb.nbufs(4 * n)
    xs = [torch.randn(rows, cols, device="cuda") for _ in range(nb)]
    vals = torch.empty((rows, kk), device="cuda")
    idx = torch.empty((rows, kk), dtype=torch.int64, device="cuda")
    ref = torch.sort(xs[0], dim=1, descending=True, stable=True)
    it, reps = 20, 7
    rec = {"shape": f"{rows}x{cols} k={kk}",
           "torch_us": kb.timeit(lambda i: torch.topk(xs[i % nb], kk), torch, it, reps) * 1e6}
    if rows <= 8:
        rec["torch_lat_us"] = kb.latency(lambda i: torch.topk(xs[i % nb], kk), torch) * 1e6
    for name, k in libs.items():
        fn = k.raw("muh_topk")
        call = lambda i, fn=fn: fn(0, xs[i % nb].data_ptr(), rows, cols, kk, vals.data_ptr(), idx.data_ptr(), stream)
        call(0); torch.cuda.synchronize()
        ok = torch.equal(vals, ref.values[:, :kk]) and torch.equal(idx, ref.indices[:, :kk])
        t = kb.timeit(call, torch, it, reps)
        rec[name] = {"us": t * 1e6, "vs_torch": rec["torch_us"] / (t * 1e6), "exact": ok}
        if rows <= 8:
            rec[name]["lat_us"] = kb.latency(call, torch) * 1e6
    rows_out.append(rec)
    print(json.dumps(rec), flush=True)
    del xs
json.dump({"device": dev.name, "sms": dev.multi_processor_count, "torch": torch.__version__, "rows": rows_out},
          open(os.path.join(os.environ.get("OUT", "/tmp/out"), "topk.json"), "w"), indent=2)
EOF
echo "bench $((SECONDS-t0)) s (rc $?)" | tee -a "$OUT/times.txt"; tail -30 "$OUT/topk_bench.log"
