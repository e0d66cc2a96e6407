#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 8: sort_rows on muh_radix_sort_rows (one sort of all rows): its GPU test and
# its benchmark rows against torch.sort.
# run(command="bash .dev/call8.sh", carry=[".dev/radix2", ".dev/call8.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
timeout -s KILL 60 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -q -p no:cacheprovider -k "argsort_and_rows or double_buffer or pairs" > "$OUT/pytest.log" 2>&1
echo "tests rc=$?"; tail -2 "$OUT/pytest.log"; grep -E "^E  " "$OUT/pytest.log" | head -5
timeout -s KILL 60 python3 - <<'PY' 2>&1 | tee "$OUT/rows.txt"
import sys, torch
sys.path.insert(0, "bench")
from radix_sort import timeit
from muh.families import calls
k = calls.load(".gen/h200", backend="capi")
g = torch.Generator(device="cuda").manual_seed(5)
for rows, cols in ((64, 151936), (8, 151936), (1, 151936), (256, 32000)):
    x = torch.randn(rows, cols, device="cuda", generator=g)
    gv, gi = calls.sort_rows(x, descending=True, kernels=k)
    wv, wi = torch.sort(x, dim=-1, descending=True, stable=True)
    ok = bool((gv == wv).all()) and bool((gi == wi).all())
    t_muh = timeit(lambda: calls.sort_rows(x, descending=True, kernels=k), torch)
    t_torch = timeit(lambda: torch.sort(x, dim=-1, descending=True), torch)
    print(f"rows {rows} x {cols} float32 desc: muh {t_muh*1e6:.1f} us torch {t_torch*1e6:.1f} us ({t_torch/t_muh:.2f}x) {'same as torch' if ok else 'MISMATCH'}", flush=True)
PY
