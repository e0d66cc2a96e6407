#!/usr/bin/env bash
# Session 4 of 2026-12-06, device call 13: bench/kernels.py's race with the column "CUB with muh's hub" (issue 41).
# run(command="bash .dev/call13.sh", carry=[".dev/radix2", ".dev/call13.sh"])
OUT=${OUT:-/tmp/out}
mkdir -p $OUT/k
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/k/device.txt"
timeout -s KILL 420 python3 bench/kernels.py --quick --out-md "$OUT/k/kernels.md" --out-json "$OUT/k/kernels.json" > "$OUT/k/kernels.log" 2>&1
echo "kernels rc=$?"; tail -40 "$OUT/k/kernels.log"
cd "$OUT" && tar -cJf k.tar.xz k && rm -rf k
