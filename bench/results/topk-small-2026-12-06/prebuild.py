"""Build, on a machine without a GPU, every library the device call of run.sh loads (sm_90: H100 and
H200), into $MUH_CACHE_DIR, so the device spends its time on the run (the build cache is keyed by the
generated files' content and the flags, not by where they lie):
the topk-only builds of tests/gpu/test_topk_small_gpu.py, and bench/topk_small_ab.py's two sides.

    MUH_CACHE_DIR=$PWD/.cache python3 bench/results/topk-small-2026-12-06/prebuild.py BEFORE_GEN AFTER_GEN
"""
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "gpu")]

import test_topk_small_gpu as t  # noqa: E402

from bench.topk_small_ab import topk_folder  # noqa: E402
from muh.codegen.kernels import emitter  # noqa: E402
from muh.runtime import build  # noqa: E402

ARCH = "sm_90"
tmp = Path(tempfile.mkdtemp(prefix="topk-small-"))
dirs = []
for name, cfg in t.configs().items():
    emitter.write(cfg, tmp / name)
    dirs.append(tmp / name)
cache = ROOT / ".muh-cache" / "bench"
cache.mkdir(parents=True, exist_ok=True)
dirs += [topk_folder(Path(g), cache) for g in sys.argv[1:3]]
with ThreadPoolExecutor(max_workers=2) as pool:
    for d, lib in zip(dirs, pool.map(lambda d: build.build_capi(d, arch=ARCH, jobs=1), dirs)):
        print(d.name, lib, flush=True)
