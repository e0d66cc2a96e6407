#!/usr/bin/env bash
# One device call for issue 16: build torch.ops.muh (extension), opcheck / torch.compile / CUDA-graph
# tests, the served-model ops, the ops' regression tests, then the H200 grid.
#   run(command="cd .dev/ops && bash bench/results/ops-grid-2026-12-01/ops_torch_run.sh", carry=[".dev/ops", ".whl"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
[[ -x tools/ninja ]] && export PATH=$PWD/tools:$PATH
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
{ nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c "import torch; print('torch', torch.__version__)"
  python3 -c "import transformers; print('transformers', transformers.__version__)"; which ninja; } > "$OUT/env.txt" 2>&1
t0=$SECONDS
T=tests/gpu/test_torch_ops_gpu.py
timeout -s KILL ${CORE_S:-150} python3 -m pytest $T -v -rfE -p no:cacheprovider --durations=5 \
  -k "opcheck or compile or graph" > "$OUT/torch_ops_core.log" 2>&1
echo "core $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -E "PASSED|FAILED|ERROR" "$OUT/torch_ops_core.log" | sed 's/ *\[.*//' | head -30; tail -3 "$OUT/torch_ops_core.log"
timeout -s KILL ${TESTS_S:-90} python3 -m pytest $T -q -rfE -p no:cacheprovider -k "not (opcheck or compile or graph)" \
  > "$OUT/torch_ops.log" 2>&1
echo "ops tests $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; grep -v "^  File" "$OUT/torch_ops.log" | tail -12
timeout -s KILL ${OLD_S:-45} python3 -m pytest tests/gpu/test_ops_gpu.py -q -rfE -p no:cacheprovider -k "h200" \
  > "$OUT/ops_gpu.log" 2>&1
echo "ops_gpu $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -2 "$OUT/ops_gpu.log"
timeout -s KILL ${GRID_S:-60} python3 bench/ops_grid.py --out-md "$OUT/grid.md" --out-json "$OUT/grid.json" \
  > "$OUT/grid.log" 2>&1
echo "grid $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/grid.md" || tail -20 "$OUT/grid.log"
timeout -s KILL 60 python3 bench/results/final-wave-2026-12-01/ops_throw_repro.py > "$OUT/throw_repro.log" 2>&1; tail -5 "$OUT/throw_repro.log"
timeout -s KILL ${KERN_S:-60} python3 -m pytest tests/gpu/test_kernels_gpu.py -q -rfE -p no:cacheprovider \
  -k "bfloat16 and h200" > "$OUT/kernels_bf16.log" 2>&1
echo "kernels bf16 $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/kernels_bf16.log"
