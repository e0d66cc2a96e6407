#!/usr/bin/env bash
# Device call after the 2026-12-01 evening merges (buckets, templates/.cuh + clang-format, staged scan,
# EngineX gemma adapter, histogram by value, hf client): every GPU test on the merged tree (the GemmaRMSNorm
# adapter's first GPU run; topk after its dedup; ops from ops.cuh), then the kernels benchmark.
#   run(command="bash bench/results/final-wave-2026-12-01-evening/final_wave_run3.sh", carry=[".whl"], timeout_s=580)
set -u
OUT=${OUT:-/tmp/final3-out}; mkdir -p "$OUT"; R=/tmp/r; mkdir -p $R
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1 MUH_CACHE_DIR=/tmp/muh-cache MAX_JOBS=16
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
export PATH=/tmp/site/bin:$PATH
t0=$SECONDS
timeout -s KILL ${TESTS_S:-330} python3 -m pytest -q -p no:cacheprovider -rfE tests/gpu > $R/gpu-tests.log 2>&1
echo "rc=$?" >> $R/gpu-tests.log
echo "tests $((SECONDS - t0)) s: $(tail -3 $R/gpu-tests.log | tr '\n' ' ')"
grep -E "^(FAILED|ERROR)" $R/gpu-tests.log | head -20
timeout -s KILL ${BENCH_S:-180} python3 bench/kernels.py --quick --out-json $R/kernels.json --out-md $R/kernels.md > $R/kernels.log 2>&1
echo "kernels bench $((SECONDS - t0)) s (rc $?)"; grep -E "^\| (reduce|scan|transform|topk|histogram)" $R/kernels.md | head -40
cp $R/kernels.md $R/gpu-tests.log $OUT/ 2>/dev/null
tar czf $OUT/results.tar.gz -C $R .
