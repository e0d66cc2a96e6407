#!/usr/bin/env bash
# segmented_reduce (issue 40) on a device machine: its GPU tests (H200 kernels natively, the BI-V100's at warp
# 64 emulated, a tiny policy through every class) and bench/segmented_reduce.py, logs under $OUT.
#   bash bench/segmented_reduce_device.sh prebuild   # CPU, beforehand: every library into .muh-cache/ (sm_90)
#   bash bench/segmented_reduce_device.sh quick      # GPU, ~60 s: the one-launch path's tests, CUB's fixed
#                                                    # sizes (H200 kernels), 3 benchmark rows with --ab
#   bash bench/segmented_reduce_device.sh [full]     # GPU: every test, every benchmark row
# From a copy of the repository (tracked files, .whl/ with muh's dependency wheels, muh-cache.tar.xz):
#   run(command="cd .dev/segred && bash bench/segmented_reduce_device.sh quick", carry=[".dev/segred"])
# Libraries prebuilt elsewhere travel in .muh-cache/ (MUH_CACHE_DIR: the same sources hash alike), packed by
# prebuild into muh-cache.tar.xz (a tenth of the size: the carried tree has 64 MiB) and unpacked here.
set -o pipefail
MODE=${1:-full}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
if [ "$MODE" = prebuild ]; then
  PYTHONPATH=$PWD:$PWD/tests/gpu:$PWD/tests python3 - <<'EOF' || exit 2
import tempfile
from pathlib import Path

import test_segmented_reduce_gpu as t
from muh.codegen.kernels import emitter
from muh.runtime import build

root = Path(tempfile.mkdtemp(prefix="segred-prebuild-"))
for name, cfg in t.configs().items():  # the GPU tests' fixture: the same configs, the same sources
    emitter.write(cfg, root / name)
    print(name, build.build_capi(root / name, arch="sm_90"))
EOF
  PYTHONPATH=$PWD python3 bench/segmented_reduce.py --cache .muh-cache/bench --prebuild sm_90 || exit 2
  find .muh-cache -name '*.o' -delete  # a build's objects: the library alone is looked up
  tar -cJf muh-cache.tar.xz .muh-cache && ls -la muh-cache.tar.xz
  exit 0
fi
if [ -f muh-cache.tar.xz ] && [ ! -d .muh-cache ]; then tar -xJf muh-cache.tar.xz || exit 4; fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests || exit 3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"; cat "$OUT/env.txt"
t0=$SECONDS
if [ "$MODE" = quick ]; then
  select=(-k "few or tickets or logits or alignment or (fixed_size and not tiny and not bi100)")
  tests_s=${TESTS_S:-40} bench_s=${BENCH_S:-40} bench=(--cases "uniform 1-10,logits,2^24" --ab)
else
  select=() tests_s=${TESTS_S:-200} bench_s=${BENCH_S:-240} bench=(--ab)
fi
timeout -s KILL "$tests_s" python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py "${select[@]}" -x -q -rfE \
  -p no:cacheprovider -o console_output_style=classic --durations=5 > "$OUT/pytest.log" 2>&1
echo "tests rc=$? $((SECONDS - t0)) s"; grep -E "passed|failed|error" "$OUT/pytest.log" | tail -3
grep -E "FAILED|Error|assert" "$OUT/pytest.log" | head -8
timeout -s KILL "$bench_s" python3 bench/segmented_reduce.py --cache .muh-cache/bench "${bench[@]}" \
  --out-md "$OUT/segmented_reduce.md" --out-json "$OUT/segmented_reduce.json" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s"; tail -14 "$OUT/bench.log"
