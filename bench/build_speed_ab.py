"""`muh build specs/baseline.muh` of this checkout against another one (e.g. /work/main), interleaved
A B A B … in the same run, so load from other work hits both alike. Prints median wall and CPU
(user + system of the child) per checkout. ``--cold``: every run with an empty muh cache (grammar,
templates, formatted C++ all rebuilt); default: warm caches (one unmeasured run first).
Usage: python bench/build_speed_ab.py OTHER_CHECKOUT [--runs 9] [--cold]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(cwd: Path, out: str, env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "muh.cli", "build", "specs/baseline.muh", "-o", out], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t0, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("other", type=Path)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args()
    sides = {"other": args.other.resolve(), "this": ROOT}
    res: dict[str, list] = {k: [] for k in sides}
    with tempfile.TemporaryDirectory() as tmp:
        def env() -> dict:
            return {**os.environ, "MUH_CACHE_DIR": tempfile.mkdtemp(dir=tmp)} if args.cold else dict(os.environ)
        if not args.cold:
            for name, cwd in sides.items():
                timed(cwd, f"{tmp}/{name}-warm", env())
        for i in range(args.runs):
            for name, cwd in sides.items():
                res[name].append(timed(cwd, f"{tmp}/{name}{i}", env()))
    for name, r in res.items():
        print(f"{name} ({sides[name]}): {'cold' if args.cold else 'warm'} median wall "
              f"{statistics.median(x[0] for x in r) * 1000:.0f} ms, median CPU "
              f"{statistics.median(x[1] for x in r) * 1000:.0f} ms over {len(r)} runs")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{os.cpu_count()} cores, load average {load:.1f}")


if __name__ == "__main__":
    main()
