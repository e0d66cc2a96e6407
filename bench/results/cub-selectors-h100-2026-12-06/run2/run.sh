#!/usr/bin/env bash
# Session 5 of 2026-12-06, device call 2: CUB 3.5's kernels on muh's 3.5 selectors for all 24 families (prebuilt:
# bench/cub_selectors.py gen + build.sh on the CPU machine; tests/gpu/test_cub_selectors_gpu.py on them), then
# segmented_reduce's GPU tests and benchmark after h200.muh's vec 8 -> 4 (bench/segmented_reduce_device.sh full),
# and on an H200 only, `muh tune --implementation cub` (session 3's prebuilt demonstration, .dev/c3/cubtune).
# run(command="bash .dev/call18.sh", carry=[".dev/sel35", ".dev/segred", ".dev/c3", ".dev/call18.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R/sel35" "$R/segred" "$R/cubtune"
top=$PWD/.dev root=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$top"/c3/cubtune/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/device.txt"
t0=$SECONDS
(cd "$top/sel35" && timeout 200 bash run.sh) > "$R/sel35/run.jsonl" 2>&1; echo "sel35 run rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
grep -v '"same as CUB"' "$R/sel35/run.jsonl" | head -40
cd "$root" && PYTHONPATH=/tmp/site:$root:$root/tests/gpu:$root/tests MUH_CUB_SEL_GEN=$top/sel35 timeout -s KILL 300 \
  python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_cub_selectors_gpu.py > "$R/sel35/pytest.log" 2>&1
echo "sel35 pytest rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -5 "$R/sel35/pytest.log"
cp -r "$top/c3/cubtune/.whl" "$top/segred/.whl"
(cd "$top/segred" && OUT=$R/segred TESTS_S=240 BENCH_S=120 bash bench/segmented_reduce_device.sh full)
echo "segred rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"
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
