"""CUB 3.5's own kernels on muh's CCCL 3.5 policy selectors, on the lab GPU: correctness and a race.

    python3 bench/cub_selectors.py gen OUT [--cccl DIR]   # render the programs into OUT (here: muh's spec stack)
    bash OUT/build.sh && bash OUT/run.sh                   # on the GPU machine: compile in parallel, run; JSON out

The selectors (``include/muh/cub/tune/<family>.cuh``, muh/codegen/cxx/cub_tune.py) exist for a spec whose
toolchain says ``cccl = "3.5"``; the bundled specs say 3.0, so this script builds two of them with the line added:

* ``sel_nvidia``: specs/nvidia.muh (CUB 3.0.1's values, which 3.5 keeps for these families): each convenience
  entry ``muh::cub::tune::…`` against CUB 3.5's public entry without a tuning environment (CUB's own selector),
  on the same input — the outputs must be identical (integers and float sums alike: the same policy).
* ``sel_h200``: specs/h200.muh (muh's H200 tunings, other values than CUB's): the same comparisons (float sums
  within a relative 1e-5: another policy sums in another order), and each case timed against CUB's own in the
  same process — the column "CUB 3.5 with muh's selector".

Both compile against the CCCL 3.5.0 headers of NVIDIA's nvidia-cuda-cccl wheel (``-I DIR`` first on the include
path; DIR defaults to the installed wheel's ``include/cccl``, build.sh takes ``$CCCL35`` over it). Every result is
one JSON line; a program's exit status counts the cases that differ from CUB. The helpers (checked calls,
inputs, event timing, verdicts) are bench/cub_hub_prelude.cuh's.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLCHAIN = 'toolchain { cuda = "13.0"'
SPECS = {"nvidia": "specs/nvidia.muh", "h200": "specs/h200.muh"}


def cccl35_include() -> Path | None:
    """The installed nvidia-cuda-cccl wheel's ``include/cccl`` (tests/conftest.py's cccl35 fixture checks its
    version), or None."""
    try:
        files = importlib.metadata.files("nvidia-cuda-cccl") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [f for f in files if str(f).endswith("include/cccl/cuda/std/__cccl/version.h")]
    return Path(found[0].locate()).parents[3] if found else None


def spec35(name: str) -> str:
    """A bundled spec with every toolchain naming CCCL 3.5."""
    text = (ROOT / SPECS[name]).read_text()
    assert TOOLCHAIN in text, f"{SPECS[name]}: no toolchain line to extend"
    return text.replace(TOOLCHAIN, TOOLCHAIN + '  cccl = "3.5"')


def build_tree(name: str, out: Path) -> list[str]:
    """`muh build` of the 3.5 variant of a bundled spec into ``out``; the families it wrote a selector for."""
    tmp = Path(tempfile.mkdtemp(prefix="muh-sel35-"))
    src = tmp / f"{name}_35.muh"
    src.write_text(spec35(name))
    subprocess.run(
        [sys.executable, "-m", "muh.cli", "build", str(src), "-o", str(out)], check=True, cwd=ROOT, capture_output=True
    )
    shutil.rmtree(tmp)
    return sorted(p.stem for p in (out / "include" / "muh" / "cub" / "tune").glob("*.cuh") if p.stem != "common")


def write(out: Path, cccl: Path | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for name in SPECS:
        families = build_tree(name, out / name)
        includes = "".join(f'#include "muh/cub/tune/{f}.cuh"\n' for f in families)
        defines = "".join(f"#define MUH_SEL_{f.upper()} 1\n" for f in families)
        race = "#define MUH_SEL_RACE 1\n" if name == "h200" else ""
        (out / f"sel_{name}.cu").write_text(
            f'#define MUH_SEL_PROGRAM "sel_{name}"\n{defines}{race}{includes}'
            '#include "cub_hub_prelude.cuh"\n#include "cub_selectors_main.cuh"\n'
        )
        names.append(name)
    for f in ("cub_hub_prelude.cuh", "cub_selectors_main.cuh"):
        shutil.copy(Path(__file__).parent / f, out / f)
    default = str(cccl) if cccl else ""
    (out / "build.sh").write_text(
        "#!/usr/bin/env bash\n# compile both programs in parallel against the CCCL 3.5 headers (nvcc -arch=sm_90)\n"
        f'cd "$(dirname "$0")"\nC=${{CCCL35:-{default}}}\n'
        '[ -f "$C/cuda/std/__cccl/version.h" ] || { echo "CCCL 3.5 headers not found: set CCCL35"; exit 2; }\n'
        + "".join(
            f'(nvcc -std=c++17 -O3 -arch=sm_90 -I "$C" -I {n}/include -I . -o sel_{n} sel_{n}.cu '
            f'> sel_{n}.build.log 2>&1 || echo "BUILD FAILED sel_{n}") &\n'
            for n in names
        )
        + "wait\n"
    )
    (out / "run.sh").write_text(
        '#!/usr/bin/env bash\ncd "$(dirname "$0")"\nrc=0\n'
        + "".join(
            f"if [ -x ./sel_{n} ]; then timeout 300 ./sel_{n} || rc=1; "
            f'else echo \'{{"program": "sel_{n}", "status": "did not build"}}\'; rc=1; fi\n'
            for n in names
        )
        + "exit $rc\n"
    )


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "gen" or len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--cccl"):
        print(__doc__)
        return 2
    write(Path(argv[1]), Path(argv[3]) if len(argv) == 4 else cccl35_include())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
