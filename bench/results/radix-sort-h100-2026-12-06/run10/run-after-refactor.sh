#!/usr/bin/env bash
# Session 4 of 2026-12-06, device call 15: sort_rows after its two C calls share their arguments (01e51dc, Python
# only): the rows and argsort tests, natively and emulated at warp 64.
# run(command="bash .dev/call15.sh", carry=[".dev/radix2", ".dev/call15.sh"])
cd .dev/radix2 || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null || exit 3
export PYTHONUNBUFFERED=1 PATH=$PATH:/usr/local/cuda/bin MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests
nvidia-smi --query-gpu=name --format=csv,noheader
timeout -s KILL 90 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE -n 4 -q -p no:cacheprovider -k "rows or refusals" 2>&1 | tail -3
