"""How long `muh build specs/baseline.muh` takes, interpreter start and imports included (target:
< 0.5 s median on a 2-core machine).

Runs the real command in a fresh interpreter several times and prints the median wall time and the
median CPU time (user + system of the child) next to the same two for `python -c pass`, measured in
the same run. On an idle machine wall ≈ CPU; when other work shares the cores the wall time grows
and the CPU time is the figure that says what muh itself costs (the load average is printed).
The first run warms the caches (file cache, muh's grammar and template caches) and is not counted.
Usage: python bench/build_speed.py [--runs 9]
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


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    import os

    with tempfile.TemporaryDirectory() as tmp:
        build = [sys.executable, "-m", "muh.cli", "build", "specs/baseline.muh", "-o", f"{tmp}/out"]
        timed(build)  # warm the file cache and muh's caches
        builds = [timed(build) for _ in range(args.runs)]
        bare = [timed([sys.executable, "-c", "pass"]) for _ in range(args.runs)]
    wall, cpu = (statistics.median(x[i] for x in builds) for i in (0, 1))
    pwall, pcpu = (statistics.median(x[i] for x in bare) for i in (0, 1))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"muh build specs/baseline.muh over {args.runs} runs: median wall {wall * 1000:.0f} ms, median CPU "
          f"{cpu * 1000:.0f} ms (python -c pass: wall {pwall * 1000:.0f} ms, CPU {pcpu * 1000:.0f} ms); "
          f"{os.cpu_count()} cores, load average {load:.1f}; target < 500 ms: "
          f"{'met' if wall < 0.5 else ('MISSED (wall); CPU ' + ('met' if cpu < 0.5 else 'MISSED'))}")


if __name__ == "__main__":
    main()
