"""CUB 3.5's own kernels on muh's CCCL 3.5 policy selectors, run on a GPU (bench/cub_selectors.py's programs).

Each convenience entry ``muh::cub::tune::…`` (selectors generated from specs/nvidia.muh and specs/h200.muh with
``cccl = "3.5"``) against CUB 3.5's public entry on its own selector, on the same input: every case line must say
"same as CUB" (the h200 tree's values are muh's, not CUB's: another policy, the same results). The programs are
generated and compiled here unless $MUH_CUB_SEL_GEN names a folder where `bench/cub_selectors.py gen` +
`build.sh` already put them (the lab GPU's call: compiled on its cores)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_helpers import NO_CUDA, same_as_cub_rows

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(NO_CUDA is not None, reason=f"GPU test: {NO_CUDA}")]


@pytest.fixture(scope="module")
def programs(tmp_path_factory, request) -> Path:
    given = os.environ.get("MUH_CUB_SEL_GEN")
    if given:
        return Path(given)
    nvcc = request.getfixturevalue("nvcc")
    cccl = request.getfixturevalue("cccl35")
    out = tmp_path_factory.mktemp("cub_sel")
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cub_selectors.py"), "gen", str(out), "--cccl", str(cccl)],
        check=True,
        cwd=ROOT,
    )
    env = dict(os.environ, PATH=f"{Path(nvcc).parent}:{os.environ.get('PATH', '')}")
    subprocess.run(["bash", str(out / "build.sh")], check=True, env=env)
    return out


@pytest.mark.parametrize("program", ["sel_nvidia", "sel_h200"])
def test_selector_entries_give_cub_s_results(programs, program):
    rows = same_as_cub_rows(programs, program)
    verdicts = [r for r in rows if "status" in r]
    families = {r["case"].split()[0] for r in verdicts}
    assert {"reduce", "histogram"} <= families, families
    if program == "sel_h200":
        assert [r for r in rows if "race" in r], "the h200 tree's program times its cases against CUB's own"
