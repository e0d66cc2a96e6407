#!/usr/bin/env bash
# Session 5 of 2026-12-06, device call 1: CUB 3.5's kernels on muh's 3.5 selectors (prebuilt programs,
# bench/cub_selectors.py gen + build.sh on the CPU machine), through tests/gpu/test_cub_selectors_gpu.py and the raw
# JSON; if the card is an H200, the `muh tune --implementation cub` demonstration of session 3 (.dev/c3/cubtune).
# run(command="bash .dev/call16.sh", carry=[".dev/c3", ".dev/sel35", ".dev/call16.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R/sel35" "$R/cubtune"
top=$PWD/.dev root=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$top"/c3/cubtune/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/device.txt"
t0=$SECONDS
# 1. the 3.5 selectors' programs: raw JSON, then the pytest verdict on the same binaries
(cd "$top/sel35" && timeout 200 bash run.sh) > "$R/sel35/run.jsonl" 2>&1; echo "sel35 run rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
grep -v '"same as CUB"' "$R/sel35/run.jsonl" | head -40
cd "$root" && PYTHONPATH=/tmp/site:$root:$root/tests/gpu:$root/tests MUH_CUB_SEL_GEN=$top/sel35 timeout -s KILL 300 \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_cub_selectors_gpu.py > "$R/sel35/pytest.log" 2>&1
echo "sel35 pytest rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -5 "$R/sel35/pytest.log"
# 2. muh tune --implementation cub, only on the issue's card
if grep -q H200 "$R/device.txt"; then
  cd "$top/c3/cubtune" && tar -xJf units.tar.xz || exit 4
  export PYTHONPATH=/tmp/site:$PWD MUH_CACHE_DIR=$PWD/.muh-cache
  cp h200_cub.muh "$R/cubtune/h200_cub.muh"
  read -r -a args < bench/cub_tune/tune_args
  for fam in select_if segmented_sort; do
    timeout -s KILL 150 python3 -m muh.cli tune "$R/cubtune/h200_cub.muh" "$fam" --implementation cub "${args[@]}" \
      --db .muh-cache/tune.sqlite --apply > "$R/cubtune/$fam.log" 2>&1
    echo "tune $fam rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -14 "$R/cubtune/$fam.log"
  done
  cp .muh-cache/tune.sqlite "$R/cubtune/tune.sqlite"
  diff -u h200_cub.muh "$R/cubtune/h200_cub.muh" > "$R/cubtune/apply.diff"; echo "apply.diff: $(wc -l < "$R/cubtune/apply.diff") lines"
else
  echo "not an H200: the tune demonstration stays session 3's (H100)" | tee -a "$R/times.txt"
fi
tar -cJf "$OUT/r.tar.xz" -C "$OUT" r && rm -rf "$R"
