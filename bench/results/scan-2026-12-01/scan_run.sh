#!/usr/bin/env bash
# Issue 17 (scan at memory speed) on the lab H200, one device call per mode:
#   lab:   the design lab (bench/scan_lab/lab.cu: variants of muh/codegen/kernels/static/scan_tile.cuh vs
#          the spec kernel, CUB 3.0.1 and a device copy; correctness first), SASS of the main kernels,
#          ncu on CUB / spec / candidates at 2^28 float32
#   final: GPU tests (native, emulated 16/64/128), compute-sanitizer, bench/kernels.py table, ncu
# Run from the repository root (or a copy of it): bash bench/results/scan-2026-12-01/scan_run.sh lab|final  (results under $OUT)
#   prebuild (on the CPU machine, before a call): the lab binary and .devcache.tgz (the C-interface
#          libraries of every GPU-test variant and the CUB harness, content-hashed) for final2 / ring
#   ring:  (issue 17, calls 6-7) the lab, then final2's table, tests, sanitizer and ncu in one call
set -o pipefail
mode=${1:-lab}
if [[ $mode == prebuild ]]; then  # CPU only: nvcc, no GPU, no torch needed
  PY=${PY:-.venv/bin/python}; mkdir -p /tmp/lab bench/scan_lab/bin
  (lab_inc=/tmp/lab/include; rm -rf $lab_inc; mkdir -p $lab_inc && cp -r generated/h200/include/muh $lab_inc/ \
     && cp muh/codegen/kernels/static/scan_tile.cuh $lab_inc/muh/ \
     && nvcc -O3 -std=c++17 -arch=sm_90 -I$lab_inc -c bench/scan_lab/lab.cu -o /tmp/lab/lab.o \
     && nvcc -O3 -std=c++17 -arch=sm_90 -Igenerated/h200/include -c generated/h200/kernels/scan.cu -o /tmp/lab/s.o \
     && nvcc -O3 -std=c++17 -arch=sm_90 -Igenerated/h200/include -c generated/h200/kernels/common.cu -o /tmp/lab/c.o \
     && nvcc -arch=sm_90 -o bench/scan_lab/bin/lab /tmp/lab/lab.o /tmp/lab/s.o /tmp/lab/c.o) || exit 4
  MUH_CACHE_DIR=$PWD/.devcache PYTHONPATH=$PWD:$PWD/tests/gpu:$PWD/bench $PY -c "
from pathlib import Path
from gpu_helpers import variant_configs
from muh.codegen.kernels import emitter
from muh.runtime import build
import kernels as kb
for name, cfg in variant_configs().items():
    emitter.write(cfg, Path('/tmp/gen') / name)
    print(name, build.build_capi(Path('/tmp/gen') / name, arch='sm_90', jobs=2), flush=True)
kb.build_cub(Path('.devcache/bench'))" || exit 5
  tar czf .devcache.tgz .devcache && ls -la .devcache.tgz
  exit 0
fi
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > "$OUT/env.txt"
t0=$SECONDS
lab_build() {  # $1: output binary
  local inc=/tmp/lab/include; rm -rf $inc
  mkdir -p $inc && cp -r generated/h200/include/muh $inc/ && cp muh/codegen/kernels/static/scan_tile.cuh $inc/muh/
  nvcc -O3 -std=c++17 -arch=sm_90 -I$inc -c bench/scan_lab/lab.cu -o /tmp/lab/lab.o &
  nvcc -O3 -std=c++17 -arch=sm_90 -Igenerated/h200/include -c generated/h200/kernels/scan.cu -o /tmp/lab/s.o &
  nvcc -O3 -std=c++17 -arch=sm_90 -Igenerated/h200/include -c generated/h200/kernels/common.cu -o /tmp/lab/c.o &
  wait
  nvcc -arch=sm_90 -o "$1" /tmp/lab/lab.o /tmp/lab/s.o /tmp/lab/c.o
}
NCU="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats --metrics lts__t_sector_hit_rate.pct,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum"
if [[ $mode == lab ]]; then
  mkdir -p /tmp/lab
  LAB=bench/scan_lab/bin/lab
  if ! $LAB --ncu f32 CUB 16 > /dev/null 2>&1; then
    echo "prebuilt lab binary does not run here: building"; LAB=/tmp/lab/lab; lab_build $LAB 2>&1 | tail -5
  fi
  echo "build $((SECONDS-t0)) s"
  timeout -s KILL 240 $LAB > "$OUT/lab.txt" 2> "$OUT/lab.err" 3> "$OUT/lab.tsv"; echo "lab rc $? $((SECONDS-t0)) s"
  cat "$OUT/lab.err" | head -20
  ncu_variants=("bulk 128x8x8 (32K)")  # names in bench/scan_lab/lab.cu
  for v in "${ncu_variants[@]}"; do
    echo "=== $v" >> "$OUT/ncu.txt"
    timeout -s KILL 60 $NCU -k "regex:DeviceScanKernel|lab_kernel|scan_kernel" -c 1 $LAB --ncu f32 "$v" 28 >> "$OUT/ncu.txt" 2>&1
  done
  echo "ncu $((SECONDS-t0)) s"
  for tool in memcheck racecheck; do  # the staged (bulk copy) kernel, 2^16 and 2^20 float32
    for lg in 16 20; do
      timeout -s KILL 60 compute-sanitizer --tool $tool --error-exitcode 9 $LAB --ncu f32 "bulk 128x8x8 (32K)" $lg > /tmp/san.txt 2>&1
      echo "sanitizer $tool 2^$lg rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt)"
      { echo "=== $tool 2^$lg"; head -c 20000 /tmp/san.txt; } >> "$OUT/sanitizer.txt"
    done
  done
  (cuobjdump --dump-sass $LAB | grep -E "Function|LDG|STG|SHFL|BAR|NANOSLEEP|ATOM|LDS|STS|MEMBAR|UBLKCP|SYNCS" | \
     awk '/Function/{f=$0} !/Function/{gsub(/\/\*[0-9a-f]*\*\//,""); split($0,a," "); k=a[1]; if (k ~ /^@/) k=a[2]; c[f" "k]++} END{for (x in c) print c[x], x}' | sort -k2 > "$OUT/sass-summary.txt") 2>&1 | tail -3
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|lts__t_sector_hit_rate.pct|op_read_hit|op_write_hit|dram__bytes|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Stall|===" "$OUT/ncu.txt" | head -120
  cat "$OUT/lab.txt"
  exit 0
fi
if [[ $mode == final ]]; then
  # wheels (pydantic, lark …) carried in ../../.whl (run from .dev/scan) or .whl
  W=.whl; [[ -d $W ]] || W=../../.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $W/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
  export MUH_CACHE_DIR=/tmp/muh-cache MAX_JOBS=16 MUH_SANITIZER_LOG_DIR=$OUT/sanitizer
  python3 -c "import torch; print('torch', torch.__version__)" >> "$OUT/env.txt"
  mkdir -p /tmp/lab
  # 1. every library the tests and the bench use, in parallel (CPU only)
  python3 -c "from gpu_helpers import prebuild; prebuild('/tmp/gen')" > "$OUT/build.log" 2>&1 &
  python3 -c "
import sys; sys.path.insert(0, 'bench'); from pathlib import Path; import kernels as kb
kb.build_cub(Path('.muh-cache/bench'))" >> "$OUT/build.log" 2>&1 &
  LAB=bench/scan_lab/bin/lab
  $LAB --ncu f32 CUB 16 > /dev/null 2>&1 || { LAB=/tmp/lab/lab; lab_build $LAB >> "$OUT/build.log" 2>&1; }
  wait; echo "build $((SECONDS-t0)) s"; tail -3 "$OUT/build.log"
  # 4. the table: muh vs CUB 3.0.1 vs torch.cumsum vs a copy of the same bytes
  timeout -s KILL ${BENCH_S:-200} python3 bench/kernels.py --only scan --scan-dtypes float32,int32,float64 \
    --scan-sizes 16,20,24,28,30 --scan-exclusive --out-json "$OUT/scan-h200.json" --out-md "$OUT/scan-h200.md" \
    > "$OUT/bench.log" 2>&1
  echo "bench rc $? $((SECONDS-t0)) s"; tail -3 "$OUT/bench.log"
  # 2. GPU tests: native and emulated 16/64/128 lanes, the negative control
  timeout -s KILL ${TESTS_S:-200} python3 -m pytest tests/gpu/test_kernels_gpu.py tests/gpu/test_negative_control.py \
    -m gpu -rfE -n 6 -p no:cacheprovider -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
  echo "tests rc $? $((SECONDS-t0)) s: $(grep -cE ' PASSED' "$OUT/pytest.log") passed"; grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -3 "$OUT/pytest.log"
  # 3. compute-sanitizer: memcheck (native, emulated 64), racecheck (native; emulated scan vs the probe)
  timeout -s KILL ${SAN_S:-150} python3 -m pytest tests/gpu/test_sanitizer.py -rfEx -n 6 -p no:cacheprovider -v \
    > "$OUT/sanitizer.log" 2>&1
  echo "sanitizer rc $? $((SECONDS-t0)) s"; grep -E "PASSED|FAILED|XFAIL|ERROR" "$OUT/sanitizer.log" | head -12
  # 5. cross-check in one process (the generated kernel through the C API, policy-value changes, CUB,
  #    copy) and ncu on the generated kernel and CUB at 2^28 float32
  timeout -s KILL 60 $LAB > "$OUT/lab.txt" 2> "$OUT/lab.err" 3> "$OUT/lab.tsv"; echo "lab rc $? $((SECONDS-t0)) s"
  for v in "spec (generated, C API)" "CUB"; do
    echo "=== $v" >> "$OUT/ncu.txt"
    timeout -s KILL 60 $NCU -k "regex:DeviceScanKernel|lab_kernel|scan_kernel" -c 1 $LAB --ncu f32 "$v" 28 >> "$OUT/ncu.txt" 2>&1
  done
  echo "ncu $((SECONDS-t0)) s"
  grep -E "===|Duration|DRAM Throughput|L2 Cache Throughput|lts__t_sector_op_read_hit|Achieved Occupancy|Registers Per|spends" "$OUT/ncu.txt"
  cat "$OUT/lab.txt"; cat "$OUT/scan-h200.md"
  exit 0
fi
if [[ $mode == final2 ]]; then
  # one call, libraries prebuilt off the device (.devcache.tgz: the C-interface libraries of every test
  # variant and the CUB harness, content-hashed, so a stale one is simply rebuilt here)
  W=.whl; [[ -d $W ]] || W=../../.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $W/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
  [[ -f .devcache.tgz ]] && tar xzf .devcache.tgz && mkdir -p .muh-cache && cp -r .devcache/bench .muh-cache/
  export MUH_CACHE_DIR=$PWD/.devcache MAX_JOBS=16
  python3 -c "import torch; print('torch', torch.__version__)" >> "$OUT/env.txt"
  LAB=bench/scan_lab/bin/lab
  echo "setup $((SECONDS-t0)) s"
  # 1. the table: muh vs CUB 3.0.1 vs torch.cumsum vs a copy of the same bytes
  timeout -s KILL ${BENCH_S:-150} python3 bench/kernels.py --only scan --scan-dtypes float32,int32,float64 \
    --scan-sizes 16,20,24,28,30 --scan-exclusive --out-json "$OUT/scan-h200.json" --out-md "$OUT/scan-h200.md" \
    > "$OUT/bench.log" 2>&1
  echo "bench rc $? $((SECONDS-t0)) s"; tail -2 "$OUT/bench.log"
  # 2. the lab cross-check (generated kernel through the C API vs lab variants, CUB, copy; correctness first)
  timeout -s KILL 60 $LAB > "$OUT/lab.txt" 2>&1 3> /dev/null; echo "lab rc $? $((SECONDS-t0)) s"
  # 3. GPU tests of the scan: native (staged and register paths) and emulated 16/64/128 lanes
  timeout -s KILL ${TESTS_S:-150} python3 -m pytest tests/gpu/test_kernels_gpu.py -m gpu -k "scan or large_native" -rfE \
    -n 4 -p no:cacheprovider -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
  echo "tests rc $? $((SECONDS-t0)) s: $(grep -cE ' PASSED' "$OUT/pytest.log") passed"; grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -2 "$OUT/pytest.log"
  # 4. compute-sanitizer: the staged kernel (lab, the spec's 128x16x4 shape) and the generated kernel (C API)
  for v in "bulk 128x16x4 (32K)" "spec (generated, C API)"; do
    for tool in memcheck racecheck; do
      timeout -s KILL 60 compute-sanitizer --tool $tool --error-exitcode 9 $LAB --ncu f32 "$v" 16 > /tmp/san.txt 2>&1
      echo "sanitizer $tool [$v] 2^16 rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt)"
      { echo "=== $tool $v 2^16"; head -c 20000 /tmp/san.txt; } >> "$OUT/sanitizer.txt"
    done
  done
  echo "sanitizer $((SECONDS-t0)) s"
  # 5. ncu on the generated kernel at 2^28 float32 (the staged path)
  timeout -s KILL 40 $NCU -k "regex:scan_kernel" -c 1 $LAB --ncu f32 "spec (generated, C API)" 28 > "$OUT/ncu.txt" 2>&1
  echo "ncu $((SECONDS-t0)) s"
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|lts__t_sector_op_read_hit|dram__bytes|Achieved Occupancy|Registers Per|Block Limit Shared|spends" "$OUT/ncu.txt"
  cat "$OUT/lab.txt"; cat "$OUT/scan-h200.md"
  exit 0
fi
if [[ $mode == ring ]]; then
  # issue 17 calls 6-7: pipelined rings. Libraries and the lab binary prebuilt off the device
  # (bash bench/results/scan-2026-12-01/scan_run.sh prebuild: .devcache.tgz, bench/scan_lab/bin/lab). Files back (8 at most):
  # lab.txt, scan-h200.json/.md, bench.log, pytest.log, san-ncu.txt, tune.log, h200.tune.muh
  W=.whl; [[ -d $W ]] || W=../../.whl
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $W/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD:$PWD/tests/gpu || exit 3
  [[ -f .devcache.tgz ]] && tar xzf .devcache.tgz && mkdir -p .muh-cache && cp -r .devcache/bench .muh-cache/
  export MUH_CACHE_DIR=$PWD/.devcache MAX_JOBS=16
  LAB=bench/scan_lab/bin/lab
  { cat "$OUT/env.txt"; python3 -c "import torch; print('torch', torch.__version__)"; } > "$OUT/bench.log"; rm "$OUT/env.txt"
  echo "setup $((SECONDS-t0)) s"
  # 1. the lab: every variant checked bit for bit against CUB (6 sizes, partial tiles, incl/excl, twice), then timed
  timeout -s KILL ${LAB_S:-90} $LAB > "$OUT/lab.txt" 2>&1 3> /dev/null; echo "lab rc $? $((SECONDS-t0)) s"
  grep -E "FAIL|correctness" "$OUT/lab.txt" | head -20
  # 2. the table: muh vs CUB 3.0.1 vs torch.cumsum vs a copy of the same bytes (BENCH_S=0: skipped)
  if [[ ${BENCH_S:-120} != 0 ]]; then
    timeout -s KILL ${BENCH_S:-120} python3 bench/kernels.py --only scan --scan-dtypes float32,int32,float64 \
      --scan-sizes 16,20,24,28,30 --scan-exclusive --out-json "$OUT/scan-h200.json" --out-md "$OUT/scan-h200.md" \
      >> "$OUT/bench.log" 2>&1
    echo "bench rc $? $((SECONDS-t0)) s"; tail -2 "$OUT/bench.log"
  fi
  # 3. GPU tests of the scan: native (ring, staged and register paths) and emulated 16/64/128 lanes
  timeout -s KILL ${TESTS_S:-120} python3 -m pytest tests/gpu/test_kernels_gpu.py -m gpu -k "scan or large_native" -rfE \
    -n 4 -p no:cacheprovider -o console_output_style=classic -v > "$OUT/pytest.log" 2>&1
  echo "tests rc $? $((SECONDS-t0)) s: $(grep -cE ' PASSED' "$OUT/pytest.log") passed"; grep -E "FAILED|ERROR" "$OUT/pytest.log" | head -20; tail -2 "$OUT/pytest.log"
  # 4. compute-sanitizer on the ring (lab variants; 2^16 and 2^20: 16 and 256 tiles of 16 KiB)
  IFS=';' read -ra sv <<< "${SAN_VARIANTS:-spec (generated, C API)}"
  for v in "${sv[@]}"; do
    for tool in memcheck racecheck; do
      for lg in ${SAN_SIZES:-16 20}; do
        timeout -s KILL ${SAN_EACH_S:-30} compute-sanitizer --tool $tool --error-exitcode 9 $LAB --ncu f32 "$v" $lg > /tmp/san.txt 2>&1
        echo "sanitizer $tool [$v] 2^$lg rc $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt)" | tee -a "$OUT/san-ncu.txt"
        head -c 6000 /tmp/san.txt >> /tmp/san-all.txt
      done
    done
  done
  echo "sanitizer $((SECONDS-t0)) s"
  # 5. ncu at 2^28 float32: the generated kernel (C API) and other lab variants
  IFS=';' read -ra nv <<< "${NCU_VARIANTS:-spec (generated, C API)}"
  for v in "${nv[@]}"; do
    echo "=== ncu $v" >> "$OUT/san-ncu.txt"
    timeout -s KILL 40 $NCU -k "regex:scan_kernel|lab_kernel" -c 1 $LAB --ncu f32 "$v" 28 >> "$OUT/san-ncu.txt" 2>&1
  done
  echo "ncu $((SECONDS-t0)) s"
  cat /tmp/san-all.txt >> "$OUT/san-ncu.txt" 2>/dev/null
  grep -E "=== ncu|Duration|DRAM Throughput|L2 Cache Throughput|lts__t_sector_op_read_hit|Achieved Occupancy|Registers Per|Block Limit Shared|spends" "$OUT/san-ncu.txt"
  # 6. muh tune over the ring's dimensions (float32; the spec's space narrowed to them), --apply into a copy
  if [[ ${TUNE_S:-0} != 0 ]]; then
    python3 - <<'PY'
s = open("specs/h200.muh").read()
a = s.index("algorithm scan on h200 {"); b = s.index("algorithm transform on h200")
blk = s[a:b]; i = blk.index("  space {"); j = blk.index("  }\n", i)
blk = blk[:i] + "  space {\n    passes = [2, 4]\n    stages = [1, 3, 4]\n    window = [32, 128]\n" + blk[j:]
open("specs/h200.tune.muh", "w").write(s[:a] + blk + s[b:])
PY
    timeout -k 10 -s INT ${TUNE_S} python3 -m muh.cli tune specs/h200.tune.muh scan --types float32 --sizes 2^20,2^24,2^28 \
      --apply --db /tmp/tune.sqlite --batch 12 --runs 10 --confirm-runs 20 --confirm-rounds 3 > "$OUT/tune.log" 2>&1
    echo "tune rc $? $((SECONDS-t0)) s"; tail -25 "$OUT/tune.log"; cp specs/h200.tune.muh "$OUT/"
  fi
  cat "$OUT/lab.txt"; cat "$OUT/scan-h200.md" 2>/dev/null
  exit 0
fi
echo "unknown mode $mode"; exit 2
