"""How long `muh build specs/baseline.muh` takes, interpreter start and imports included (target:
< 0.5 s median on a 2-core machine), and how much of it is importing.

Runs the real command (`python -m muh.cli build specs/baseline.muh -o DIR`) in a fresh interpreter
several times and prints the median wall time and the median CPU time (user + system of the child)
next to the same two for `python -c pass`, measured in the same run. On an idle machine wall ≈ CPU;
when other work shares the cores the wall time grows and the CPU time is the figure that says what
muh itself costs (the load average is printed: measure on a quiet machine, and say when it was not).

The split: a second kind of child runs the same command twice in one interpreter (`muh.cli.main`);
the first run pays the imports (and the first call of what is cached per process), the second only
the build, so ``imports = first - second`` and ``build = second``; both are CPU times of that process
(``time.process_time``), medians over the runs. The first run of all warms the caches (file cache,
muh's grammar, template and format caches, and Python's bytecode cache) and is not counted.

Bytecode: the children run with Python's default, writing and reading ``__pycache__`` (what a user's
interpreter does); ``PYTHONDONTWRITEBYTECODE`` is removed from their environment. Where it is set (the
shared development machine sets it), a module edited since its bytecode was last written is compiled
from source on every run (in a checkout being worked on, up to ~0.3 s of CPU that is Python's start-up,
not muh's); ``--keep-env`` measures with the environment as it is.
Usage: python bench/build_speed.py [--runs 9] [--keep-env]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# One interpreter, the command twice: CPU seconds of each run, as JSON on the last line of stdout.
SPLIT = """
import json, os, sys, time
t0 = time.process_time()
out = sys.argv[1]
spent = []
for i in range(2):
    sys.argv = ["muh", "build", "specs/baseline.muh", "-o", f"{out}/{i}"]
    start = t0 if i == 0 else time.process_time()
    try:
        from muh.cli import main
        main()
    except SystemExit as e:
        assert not e.code, e.code
    spent.append(time.process_time() - start)
sys.stdout.flush()
os.write(1, ("\\n" + json.dumps(spent) + "\\n").encode())
"""


ENV = dict(os.environ)


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``cmd``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def split(out: str) -> tuple[float, float]:
    """(imports, build) CPU seconds: the first run in one interpreter minus the second, and the second."""
    proc = subprocess.run([sys.executable, "-c", SPLIT, out], check=True, cwd=ROOT, capture_output=True, text=True,
                          env=ENV)
    first, second = json.loads(proc.stdout.strip().splitlines()[-1])
    return first - second, second


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE if it is set")
    args = ap.parse_args()
    was = os.environ.get("PYTHONDONTWRITEBYTECODE")
    if not args.keep_env:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    bytecode = ("bytecode cached (Python's default" + (f"; PYTHONDONTWRITEBYTECODE={was} removed)" if was and not args.keep_env
                                                      else ")")) if "PYTHONDONTWRITEBYTECODE" not in ENV else \
        "PYTHONDONTWRITEBYTECODE set: modules edited since their bytecode was written compile each run"
    with tempfile.TemporaryDirectory() as tmp:
        build = [sys.executable, "-m", "muh.cli", "build", "specs/baseline.muh", "-o", f"{tmp}/out"]
        timed(build)  # warm the file cache and muh's caches
        builds, bare, parts = [], [], []
        for i in range(args.runs):  # interleaved, so load from other work hits all three alike
            builds.append(timed(build))
            bare.append(timed([sys.executable, "-c", "pass"]))
            parts.append(split(f"{tmp}/split{i}"))
    wall, cpu = (statistics.median(x[i] for x in builds) for i in (0, 1))
    pwall, pcpu = (statistics.median(x[i] for x in bare) for i in (0, 1))
    imports, work = (statistics.median(x[i] for x in parts) for i in (0, 1))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"muh build specs/baseline.muh over {args.runs} runs: median wall {wall * 1000:.0f} ms, median CPU "
          f"{cpu * 1000:.0f} ms (python -c pass: wall {pwall * 1000:.0f} ms, CPU {pcpu * 1000:.0f} ms); "
          f"of the CPU in one interpreter: imports {imports * 1000:.0f} ms, build {work * 1000:.0f} ms; "
          f"{bytecode}; {os.cpu_count()} cores, load average {load:.1f}; target < 500 ms: "
          f"{'met' if wall < 0.5 else ('MISSED (wall); CPU ' + ('met' if cpu < 0.5 else 'MISSED'))}")


if __name__ == "__main__":
    main()
