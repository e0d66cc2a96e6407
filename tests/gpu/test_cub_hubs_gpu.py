"""CUB's own dispatch on muh's generated policy hubs, run on a GPU (bench/cub_hub.py's programs).

Each convenience entry (`muh::cub::<family>::run`, `reduce_sum`, `inclusive_sum`, …; hubs generated from
specs/nvidia.muh) against CUB's public entry point on the same inputs, on CUB's benchmark shapes; and the
hubs generated from specs/h200.muh (the race) against CUB's own policies. Every case line must say
"same as CUB". The programs are generated and compiled here unless $MUH_CUB_HUB_GEN names a folder where
`bench/cub_hub.py gen` + `build.sh` already put them (the lab GPU's call: compiled on its cores)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_helpers import NO_CUDA, same_as_cub_rows

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = (
    "entries_reduce",
    "entries_scan",
    "entries_select",
    "entries_radix",
    "entries_segsort",
    "entries_histogram",
    "entries_more",
    "race",
)
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(NO_CUDA is not None, reason=f"GPU test: {NO_CUDA}")]


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Path:
    given = os.environ.get("MUH_CUB_HUB_GEN")
    if given:
        return Path(given)
    if not shutil.which("nvcc"):
        pytest.skip("nvcc not found")
    out = tmp_path_factory.mktemp("cub_hub")
    subprocess.run([sys.executable, str(ROOT / "bench" / "cub_hub.py"), "gen", str(out)], check=True, cwd=ROOT)
    subprocess.run(["bash", str(out / "build.sh")], check=True)
    return out


@pytest.mark.parametrize("program", ENTRIES)
def test_entry_gives_cub_s_results(programs, program):
    same_as_cub_rows(programs, program)
