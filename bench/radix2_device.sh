#!/usr/bin/env bash
# Branch radix2's one device call (about 45 s of GPU): the radix sort GPU tests (every path the static-gap fixes
# touched: keys-only and pairs, full and partial tiles, every key size, natively and emulated at warp 64) and the
# short benchmark (2^20..2^28 uniform keys vs CUB's SortKeys/SortPairs and a copy of the same bytes, the 64-row
# sort vs torch.sort). Everything is compiled beforehand on a CPU machine:
#
#   bash bench/radix2_device.sh prepare [DEST]   # DEST default /work/main/.dev/radix2: the branch's files (git
#                                                # archive of HEAD), .gen/h200, the wheels, every library built
#                                                # into DEST/.muh-cache (MUH_CACHE_DIR; same sources, same hash)
# then, from the repository root the device call copies (DEST under it as .dev/radix2):
#   run(command="bash .dev/radix2/bench/radix2_device.sh", carry=[".dev/radix2"], timeout_s=240)
# Results under $OUT: env.txt, times.txt, pytest.log, bench.log, radix.md.
set -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ ${1:-} == prepare ]]; then
  dest=${2:-/work/main/.dev/radix2}
  rm -rf "$dest" && mkdir -p "$dest" || exit 2
  git -C "$here" archive HEAD | tar -x -C "$dest" --exclude=generated || exit 2
  for w in /work/main/.dev/families/.whl "$here/.whl"; do [[ -d $w ]] && { mkdir -p "$dest/.whl"; cp "$w"/*.whl "$dest/.whl/"; }; done
  cd "$dest" || exit 2
  export MUH_CACHE_DIR=$dest/.muh-cache/lib PATH=$PATH:/usr/local/cuda/bin
  python3 - <<'PY' || exit 3
import sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
sys.path[:0] = [".", "tests/gpu"]
from test_radix_sort_gpu import configs
from muh.codegen.kernels import emitter
from muh.runtime import build
sys.path.insert(0, "bench")
from radix_sort import build_cub
cf = configs()
for name, cfg in cf.items():
    emitter.write(cfg, f".gen/{name}")
t0 = time.time()
with ThreadPoolExecutor(2) as pool:
    libs = list(pool.map(lambda n: build.build_capi(f".gen/{n}", arch="sm_90"), cf))
build_cub(Path(".muh-cache/bench"))
print("built", *libs, f"{time.time() - t0:.0f} s", sep="\n  ")
PY
  du -sh "$dest"
  exit 0
fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$here" || exit 4
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu:$PWD/tests MUH_CACHE_DIR=$PWD/.muh-cache/lib PYTHONUNBUFFERED=1
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/env.txt"; cat "$OUT/env.txt"
t0=$SECONDS
par=(); python3 -c "import xdist" 2>/dev/null && par=(-n 4)  # pytest-xdist where the machine has it
timeout -s KILL 60 python3 -m pytest tests/gpu/test_radix_sort_gpu.py -m gpu -rfE "${par[@]}" -q -p no:cacheprovider \
  > "$OUT/pytest.log" 2>&1
echo "tests rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/times.txt"; tail -3 "$OUT/pytest.log"
grep -E "^(FAILED|ERROR)" "$OUT/pytest.log" | head -20
timeout -s KILL 60 python3 bench/radix_sort.py --gen .gen/h200 --quick --out-md "$OUT/radix.md" \
  --cache "$PWD/.muh-cache/bench" > "$OUT/bench.log" 2>&1
echo "bench rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/times.txt"; tail -12 "$OUT/bench.log"
