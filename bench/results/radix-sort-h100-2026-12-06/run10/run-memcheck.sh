#!/usr/bin/env bash
# Session 4 of 2026-12-06, device call 14: compute-sanitizer memcheck of the new paths — muh_argsort_rows (made
# columns, int64 last pass; beside and after-the-keys layouts, one-pass keys) and segmented reduce's one-launch plan
# (split rows, kVec loads, unaligned starts).
# run(command="bash .dev/call14.sh", carry=[".dev/radix2", ".dev/segred", ".dev/call14.sh"])
OUT=${OUT:-/tmp/out}
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer)
( export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD
timeout -s KILL 150 $CS --tool memcheck --error-exitcode 9 python3 - <<'PY'
import torch
from muh.families import calls
k = calls.load(".gen/h200", backend="capi")
g = torch.Generator(device="cuda").manual_seed(3)
for rows, cols, dt in ((3, 1000, torch.float32), (5, 4099, torch.int16), (3, 9001, torch.float64), (4, 3000, torch.int8),
                       (2, 1, torch.float32), (7, 50001, torch.float32)):
    x = (torch.randn(rows, cols, device="cuda", generator=g, dtype=torch.float64) * 100).to(dt)
    v, i = calls.sort_rows(x, descending=True, kernels=k)
    wv, wi = torch.sort(x, dim=-1, descending=True, stable=True)
    assert bool((v == wv).all()) and bool((i == wi).all()), (rows, cols, dt)
print("radix memcheck cases ok")
PY
echo "radix memcheck rc=$?" )
cd ../segred || exit 5
[ -d .muh-cache ] || tar -xJf muh-cache.tar.xz
export MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
timeout -s KILL 240 $CS --tool memcheck --error-exitcode 9 python3 -m pytest tests/gpu/test_segmented_reduce_gpu.py -x -q -p no:cacheprovider -k "logits or few" 2>&1 | tail -15
echo "segred memcheck rc=${PIPESTATUS[0]}"
