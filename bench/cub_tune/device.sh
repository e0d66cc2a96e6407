#!/usr/bin/env bash
# The GPU half of `muh tune --implementation cub` (issue 41.4): CUB's own select_if and segmented_sort kernels
# searched on candidate policy hubs, correctness-gated, confirmed with an A/A twin, written back with --apply.
# Prepared on the CPU machine (no GPU there): python3 bench/cub_tune/prebuild.py /work/main/.dev/cubtune
# (this tree, the device spec h200_cub.muh and every unit prebuilt in .muh-cache/tune-units), then
#   run(command="cd .dev/cubtune && bash bench/cub_tune/device.sh", carry=[".dev/cubtune", ".whl"], timeout_s=120)
# .whl: muh's Python dependencies as wheels for the device's Python, as the earlier device calls carried them:
# what `muh tune … --implementation cub` imports here (python3 -X importtime): lark, interegular, regex, pydantic,
# pydantic_core, annotated_types, typing_inspection, typing_extensions, jinja2, markupsafe, pyyaml, typer, click,
# shellingham, rich, markdown_it_py, mdurl, pygments, annotated_doc; and clang-format==23.1.5 (the generated C++
# is formatted by it: the hubs must be byte-identical to the prebuilt units' or they compile again).
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
shopt -s nullglob
wheels=(.whl/*.whl ../../.whl/*.whl)  # carried at the checkout's root, or beside this tree
if (( ${#wheels[@]} )); then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "${wheels[@]}" \
    && export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH || exit 3
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export MUH_CACHE_DIR=$PWD/.muh-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
cp h200_cub.muh "$OUT/h200_cub.muh"  # --apply writes here (the same file name: the database keys the spec by it)
units=(.muh-cache/tune-units/unit-*[!s])
echo "prebuilt units: ${#units[@]}"
read -r -a args < bench/cub_tune/tune_args
for fam in select_if segmented_sort; do
  t0=$SECONDS
  timeout -s KILL 80 python3 -m muh.cli tune "$OUT/h200_cub.muh" "$fam" --implementation cub "${args[@]}" \
    --db .muh-cache/tune.sqlite --apply > "$OUT/$fam.log" 2>&1
  echo "$fam rc=$? $((SECONDS - t0)) s"; tail -30 "$OUT/$fam.log"
done
cp .muh-cache/tune.sqlite "$OUT/tune.sqlite"
diff -u h200_cub.muh "$OUT/h200_cub.muh" > "$OUT/apply.diff"; echo "apply.diff: $(wc -l < "$OUT/apply.diff") lines"
