"""How long `muh build specs/baseline.muh` takes, import time included (target: < 1 s).

Runs the real command in a fresh interpreter several times and prints the median wall time, next to
the median of `python -c pass` measured in the same run (the interpreter's own start-up).
Usage: python bench/build_speed.py [--runs 7]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build = [sys.executable, "-m", "muh.cli", "build", "specs/baseline.muh", "-o", f"{tmp}/out"]
        timed(build)  # warm the file cache
        builds = [timed(build) for _ in range(args.runs)]
        bare = [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)]
    b, p = statistics.median(builds), statistics.median(bare)
    print(f"muh build specs/baseline.muh: median {b * 1000:.0f} ms over {args.runs} runs "
          f"(python start-up alone {p * 1000:.0f} ms); target < 1000 ms: {'met' if b < 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
