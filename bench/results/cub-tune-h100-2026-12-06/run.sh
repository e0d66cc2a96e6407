#!/usr/bin/env bash
# Session 3 of 2026-12-06, device call 3: `muh tune --implementation cub` on select_if and segmented_sort (issue 41.4,
# prebuilt units), CUB's entries on muh's hubs (tests/gpu/test_cub_hubs_gpu.py, prebuilt programs) and the race;
# then an A/B of radix sort's warp match (the ballot loop as generated, CUB's asm form, MATCH.ANY).
# run(command="bash .dev/call3.sh", carry=[".dev/c3", ".dev/radix2", ".dev/call3.sh"])
set -o pipefail
OUT=${OUT:-/tmp/out}; R=$OUT/r; mkdir -p "$R/cubtune" "$R/cubhub" "$R/radix"
top=$PWD/.dev root=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$top"/c3/cubtune/.whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PATH=/tmp/site/bin:$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/device.txt"
t0=$SECONDS
# 1. CUB's kernels tuned by muh
cd "$top/c3/cubtune" && tar -xJf units.tar.xz || exit 4
export PYTHONPATH=/tmp/site:$PWD MUH_CACHE_DIR=$PWD/.muh-cache
cp h200_cub.muh "$R/cubtune/h200_cub.muh"
read -r -a args < bench/cub_tune/tune_args
for fam in select_if segmented_sort; do
  timeout -s KILL 100 python3 -m muh.cli tune "$R/cubtune/h200_cub.muh" "$fam" --implementation cub "${args[@]}" \
    --db .muh-cache/tune.sqlite --apply > "$R/cubtune/$fam.log" 2>&1
  echo "tune $fam rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -14 "$R/cubtune/$fam.log"
done
cp .muh-cache/tune.sqlite "$R/cubtune/tune.sqlite"
diff -u h200_cub.muh "$R/cubtune/h200_cub.muh" > "$R/cubtune/apply.diff"; echo "apply.diff: $(wc -l < "$R/cubtune/apply.diff") lines"
# 2. CUB's entries on muh's hubs, and the race
cd "$top" && tar -xJf c3/cubhub.tar.xz || exit 5
cd "$root" && export PYTHONPATH=/tmp/site:$root:$root/tests/gpu:$root/tests
MUH_CUB_HUB_GEN=$top/cubhub timeout -s KILL 150 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_cub_hubs_gpu.py > "$R/cubhub/pytest.log" 2>&1
echo "cub hubs tests rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -3 "$R/cubhub/pytest.log"; grep -E "^(FAILED|ERROR)" "$R/cubhub/pytest.log" | head
(cd "$top/cubhub" && timeout 60 ./race) > "$R/cubhub/race.jsonl" 2>&1; echo "race rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; tail -c 1500 "$R/cubhub/race.jsonl"
# 3. radix sort's warp match, A/B/C (same libraries otherwise)
cd "$top/radix2" && export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
for g in h200 h200-cubasm h200-match; do
  timeout -s KILL 50 python3 bench/radix_sort.py --gen .gen/$g --quick --out-md "$R/radix/$g.md" --cache "$PWD/.muh-cache/bench" > "$R/radix/$g.log" 2>&1
  echo "radix $g rc=$? $((SECONDS-t0)) s" | tee -a "$R/times.txt"; grep -E "uint32 keys .*2\^28|uint32 pairs .*2\^28|rows 64" "$R/radix/$g.log"
done
tar -cJf "$OUT/r.tar.xz" -C "$OUT" r && rm -rf "$R"
