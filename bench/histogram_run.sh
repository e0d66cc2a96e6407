#!/usr/bin/env bash
# One device call for the histogram family: its GPU tests (H200 native + BI-V100 policy with warp 64
# emulated) and its bench lines against CUB 3.0.1 DeviceHistogram::HistogramEven, same run.
#   run(command="cd .dev/truth && bash bench/histogram_run.sh", carry=[".dev/truth", ".whl"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
WHL=${WHL:-../../.whl}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $WHL/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"
t0=$SECONDS
# the bench's kernels: the H200 spec's histogram only (other families compile empty), and CUB's harness
python3 - > "$OUT/build.log" 2>&1 <<'PY' &
import sys; from dataclasses import replace; from pathlib import Path
sys.path.insert(0, "bench")
from muh.codegen.kernels import emitter, presets
import kernels as kb
c = presets.h200(); emitter.write(replace(c, policies={"histogram": c.histogram}), "/tmp/genh")
from muh.runtime import build; build.build_capi("/tmp/genh", arch="sm_90")
kb.build_cub(Path(".muh-cache/bench"))
PY
build=$!
timeout -s KILL 150 python3 -m pytest tests/gpu/test_histogram_gpu.py -rfE -p no:cacheprovider -v \
  -o console_output_style=classic > "$OUT/pytest.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -cE " PASSED" "$OUT/pytest.log"
grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -5 "$OUT/pytest.log"
wait $build; tail -3 "$OUT/build.log"
timeout -s KILL 90 python3 bench/kernels.py --only histogram --gen /tmp/genh --out-json "$OUT/histogram.json" \
  --out-md "$OUT/histogram.md" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/histogram.md"; tail -3 "$OUT/bench.log"
