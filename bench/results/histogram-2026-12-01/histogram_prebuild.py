"""Build, on a machine without a GPU, every library bench/results/histogram-2026-12-01/histogram_run.sh loads on the H200 (sm_90):
the GPU tests' histogram kernels, the bench's, its uint8 policy variants and CUB's harness. They are
cached by content (muh.runtime.build), so the device run finds them and compiles nothing.

    MUH_CACHE_DIR=$PWD/.prebuilt python3 bench/results/histogram-2026-12-01/histogram_prebuild.py
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "gpu")]

import kernels as kb  # noqa: E402
import test_histogram_gpu as gpu_tests  # noqa: E402

from bench import presets  # noqa: E402
from muh.codegen.kernels import emitter  # noqa: E402
from muh.runtime import build  # noqa: E402

ARCH = "sm_90"  # the H200


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name, cfg in gpu_tests.configs().items():
            emitter.write(cfg, Path(tmp) / name)
            print(name, build.build_capi(Path(tmp) / name, arch=ARCH), flush=True)
    c = presets.h200()
    emitter.write(replace(c, policies={"histogram": c.of("histogram")}), "/tmp/genh")  # bench/results/histogram-2026-12-01/histogram_run.sh's --gen
    print("bench", build.build_capi("/tmp/genh", arch=ARCH), flush=True)
    cache = ROOT / ".muh-cache" / "bench"
    for name, lib in kb.build_variants(cache, {"histogram"}).get("histogram", {}).items():
        print("variant", name, lib.path if hasattr(lib, "path") else "", flush=True)
    kb.build_cub(cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
