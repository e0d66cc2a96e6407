#!/usr/bin/env bash
# Session 4 of 2026-12-06, device call 12 (one call: device starts were scarce): radix sort — every GPU test and the
# rows against torch.sort after muh_argsort_rows; segmented reduce — every GPU test and the full table with --ab
# after the one-launch plan change.
# run(command="bash .dev/call12.sh", carry=[".dev/radix2", ".dev/segred", ".dev/call12.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}
mkdir -p $OUT/r $OUT/s
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null || exit 3
cp -r .whl ../segred/.whl
(
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$OUT/r/device.txt"
t0=$SECONDS
timeout -s KILL 70 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider > "$OUT/r/pytest.log" 2>&1
echo "radix tests rc=$? $((SECONDS-t0)) s"; tail -2 "$OUT/r/pytest.log"; grep -E "^(FAILED|ERROR)" "$OUT/r/pytest.log" | head
timeout -s KILL 50 python3 - <<'PY' 2>&1 | tee "$OUT/r/rows.txt"
import sys, torch
sys.path.insert(0, "bench")
from radix_sort import timeit
from muh.families import calls
k = calls.load(".gen/h200", backend="capi")
g = torch.Generator(device="cuda").manual_seed(5)
for rows, cols, dt in ((64, 151936, torch.float32), (8, 151936, torch.float32), (1, 151936, torch.float32),
                       (256, 32000, torch.float32), (64, 151936, torch.bfloat16)):
    x = torch.randn(rows, cols, device="cuda", generator=g).to(dt)
    gv, gi = calls.sort_rows(x, descending=True, kernels=k)
    wv, wi = torch.sort(x, dim=-1, descending=True, stable=True)
    ok = bool((gv == wv).all()) and bool((gi == wi).all()) and gi.dtype == torch.int64
    t_muh = timeit(lambda: calls.sort_rows(x, descending=True, kernels=k), torch)
    t_torch = timeit(lambda: torch.sort(x, dim=-1, descending=True), torch)
    t_copy = timeit(lambda: gi.copy_(wi), torch)
    print(f"rows {rows} x {cols} {str(dt)[6:]} desc: muh {t_muh*1e6:.1f} us torch {t_torch*1e6:.1f} us "
          f"({t_torch/t_muh:.2f}x) {'same as torch' if ok else 'MISMATCH'}; int64 copy of the indices {t_copy*1e6:.1f} us", flush=True)
PY
echo "rows $((SECONDS-t0)) s"
)
cd ../segred || exit 5
OUT=$OUT/s TESTS_S=120 BENCH_S=200 bash bench/segmented_reduce_device.sh full
cd "$OUT" && tar -cJf rs.tar.xz r s && rm -rf r s
