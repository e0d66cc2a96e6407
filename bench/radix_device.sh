#!/usr/bin/env bash
# One call on the lab GPU for the radix sort: build (radix-only configs: the H200's natively, the BI-V100's
# emulated at warp 64), the GPU tests, the benchmark. run(command="bash bench/radix_device.sh [tests|bench|all]")
# with the wheels muh needs (lark, pydantic) under .whl/. Results and logs under $OUT.
set -o pipefail
mode=${1:-all}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"
t0=$SECONDS
python3 - > "$OUT/build.log" 2>&1 <<'PY'
import sys, torch
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, "tests/gpu")
from test_radix_sort_gpu import configs
from muh.codegen.kernels import emitter
from muh.runtime import build
arch = "sm_%d%d" % torch.cuda.get_device_capability()
cf = configs()
for n, c in cf.items():
    emitter.write(c, f"/tmp/gen/{n}")
with ThreadPoolExecutor(2) as p:
    print(list(p.map(lambda n: build.build_capi(f"/tmp/gen/{n}", arch=arch), cf)))
PY
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -5 "$OUT/build.log"
if [[ $mode != bench ]]; then
timeout -s KILL ${TESTS_S:-200} python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -p no:cacheprovider \
  --durations=8 -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
echo "tests $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -cE " PASSED" "$OUT/pytest.log"
grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -40; grep -E "^E  " "$OUT/pytest.log" | head -30; tail -12 "$OUT/pytest.log"
fi
[[ $mode == tests ]] && exit 0
timeout -s KILL ${BENCH_S:-200} python3 bench/radix_sort.py --gen /tmp/gen/h200 --out-json "$OUT/radix.json" \
  --out-md "$OUT/radix.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/bench.log" | tail -40
