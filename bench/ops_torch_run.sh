#!/usr/bin/env bash
# One device call for issue 16: build torch.ops.muh (extension), its GPU tests, the ops' regression
# tests, then the H200 grid.  run(command="cd .dev/ops && bash bench/ops_torch_run.sh", carry=[".dev/ops", ".whl"])
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ../../.whl/*.whl \
  && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
[[ -x tools/ninja ]] && export PATH=$PWD/tools:$PATH
export MUH_CACHE_DIR=/tmp/muh-cache PYTHONUNBUFFERED=1 MAX_JOBS=16
{ nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c "import torch; print('torch', torch.__version__)"; which ninja; } > "$OUT/env.txt" 2>&1
t0=$SECONDS
timeout -s KILL ${TESTS_S:-200} python3 -m pytest tests/gpu/test_torch_ops_gpu.py -q -rfE -p no:cacheprovider \
  --durations=8 ${PYTEST_K:+-k "$PYTEST_K"} > "$OUT/torch_ops.log" 2>&1
echo "torch_ops tests $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -25 "$OUT/torch_ops.log"
timeout -s KILL ${OLD_S:-80} python3 -m pytest tests/gpu/test_ops_gpu.py -q -rfE -p no:cacheprovider -k "h200" \
  > "$OUT/ops_gpu.log" 2>&1
echo "ops_gpu $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; tail -4 "$OUT/ops_gpu.log"
timeout -s KILL ${GRID_S:-150} python3 bench/ops_grid.py --out-md "$OUT/grid.md" --out-json "$OUT/grid.json" \
  > "$OUT/grid.log" 2>&1
echo "grid $((SECONDS-t0)) s" | tee -a "$OUT/times.txt"; cat "$OUT/grid.md" || tail -20 "$OUT/grid.log"
