"""Prepare bench/cub_tune/device.sh's one GPU call on a machine without a GPU (nvcc only).

    python3 bench/cub_tune/prebuild.py DEST        # e.g. /work/main/.dev/cubtune
    run(command="cd .dev/cubtune && bash bench/cub_tune/device.sh", carry=[".dev/cubtune", ".whl"], timeout_s=120)

DEST gets this checkout's muh/ and bench/cub_tune/ (so the GPU machine renders exactly the units built
here), ``h200_cub.muh``: bench/cub_tune/h200_cub.muh with the device call's small spaces (``SPACES``: the
call has well under a minute of GPU time), and ``.muh-cache/tune-units/``: every unit the call compiles,
built here — the search units (``muh tune … --compile-only``, the same arguments: tune_args) and, since
the call confirms one candidate (``--confirm-top 1``), a confirmation unit (base, candidate, the base's
twin) for every candidate that could be the one. On the GPU machine they are compile-cache hits
(content-addressed by source, flags and nvcc's version line), so only the measurement runs there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SPEC = HERE / "h200_cub.muh"
#: The device call's spaces (in place of h200_cub.muh's): a base and two candidates for select_if, one for
#: segmented_sort (CUB's shipped sm_90 / sm_86 policy is the base of both).
SPACES = {
    "select_if": ("threads = [256, 384, 400, 512]  items = [12, 17, 22]", "threads = [256, 384, 512]"),
    "segmented_sort": (
        "large.items = [19, 23]\n    large.radix_bits = [5, 6]\n    small.threads_per_segment = [2, 4]\n"
        "    small.threads = [128, 256]",
        "small.threads_per_segment = [2, 4]",
    ),
}
CACHE = ".muh-cache"  # below DEST: the database and, beside it, the compiled units (tune-units/)


def args() -> list[str]:
    return (HERE / "tune_args").read_text().split()


def device_spec() -> str:
    text = SPEC.read_text()
    for old, new in SPACES.values():
        assert old in text, old
        text = text.replace(old, new)
    return text


def copy_tree(dest: Path) -> None:
    for part in ("muh", "bench/cub_tune"):
        if (dest / part).exists():
            shutil.rmtree(dest / part)
        shutil.copytree(ROOT / part, dest / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    (dest / "h200_cub.muh").write_text(device_spec())


def confirm_units(dest: Path) -> None:
    """One confirmation unit per candidate (run inside DEST, with DEST's muh)."""
    from muh.pipeline import load_file
    from muh.tune.cli import eval_pow
    from muh.tune.machine import detect
    from muh.tune.runner import Options, Runner, kernel_id
    from muh.tune.space import build_space, static_filter
    from muh.tune.unit import emitter_reasons

    loaded = load_file(dest / "h200_cub.muh")
    a = args()
    sizes = [eval_pow(s) for s in a[a.index("--sizes") + 1].split(",")]  # as the CLI reads --sizes
    for family in SPACES:
        opts = Options(
            family=family,
            types=["int32"],
            db=dest / CACHE / "tune.sqlite",
            sizes=tuple(sizes),
            implementation="cub",
            compile_only=True,
        )
        run = Runner(loaded.spec, detect(), opts)
        space = build_space(loaded.spec, family, "int32", implementation="cub")
        hw = loaded.spec.hardware[loaded.spec.algorithms[space.akey].on]
        keep, _ = static_filter(space, extra=lambda e: emitter_reasons(e, hw))
        cache: dict = {}
        base = kernel_id(space.base, space, hw, cache)
        units: dict = {}
        for v in keep:
            k = kernel_id(v, space, hw, cache)
            if k != base:
                run._submit(units, space, hw, [(v.label(tuple(space.dims)), k)], twin=True)
        failed = [m for f, m in units.items() if not f.result().ok]
        print(f"{family}: {len(units)} confirmation units built, {len(failed)} failed {failed}")
        run.close()


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--confirm-units":
        confirm_units(Path(argv[1]).resolve())
        return 0
    if len(argv) != 1:
        print(__doc__)
        return 2
    dest = Path(argv[0]).resolve()
    dest.mkdir(parents=True, exist_ok=True)
    copy_tree(dest)
    for family in SPACES:
        cmd = [
            sys.executable,
            "-m",
            "muh.cli",
            "tune",
            "h200_cub.muh",
            family,
            "--implementation",
            "cub",
            "--compile-only",
            *args(),
            "--db",
            f"{CACHE}/tune.sqlite",
        ]
        subprocess.run(cmd, cwd=dest, check=True)
    subprocess.run(
        [sys.executable, "bench/cub_tune/prebuild.py", "--confirm-units", str(dest)],
        cwd=dest,
        check=True,
        env={**__import__("os").environ, "PYTHONPATH": str(dest)},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
