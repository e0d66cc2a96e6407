"""`muh tune --implementation cub` end to end on the GPU: a search of two candidates besides the base for
select_if and segmented_sort (CUB's kernels on candidate hubs), every candidate correctness-gated
against the host reference, the database holding the trials under the CUB key, and `--apply` writing
the result (a winner or a kept incumbent, both with `@measured`) into a spec that still loads; CUB's
shipped policy (its public entry point) timed against the base as the reference row.

Not measured this session (no GPU was lent): the first run will say whether it passes."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_helpers import requires_cuda  # noqa: E402

pytestmark = [requires_cuda, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]

SPACES = {
    "select_if": ("threads = [256, 384, 400, 512]  items = [12, 17, 22]", "items = [12, 22]"),
    "segmented_sort": (
        "large.items = [19, 23]\n    large.radix_bits = [5, 6]\n"
        "    small.threads_per_segment = [2, 4]\n    small.threads = [128, 256]",
        "large.items = [19]\n    large.radix_bits = [5, 6]",
    ),
}


@pytest.mark.parametrize("family", sorted(SPACES))
def test_two_candidate_search_end_to_end(family, cli, tmp_path):
    from muh.pipeline import load_file

    old, new = SPACES[family]
    spec = tmp_path / "h200_cub.muh"
    text = (ROOT / "bench" / "cub_tune" / "h200_cub.muh").read_text()
    assert old in text
    spec.write_text(text.replace(old, new))
    db = tmp_path / "t.sqlite"
    args = ["tune", spec, family, "--implementation", "cub", "--strategy", "exhaustive", "--db", db]
    args += ["--sizes", "2^16,2^20", "--runs", "5", "--confirm-rounds", "2", "--confirm-runs", "5", "--apply"]
    code, out, err = cli(*args)
    assert code == 0, out + err
    rows = sqlite3.connect(db).execute("SELECT algorithm, variant, status, detail FROM trials WHERE phase = 'search'")
    rows = rows.fetchall()
    assert {r[0] for r in rows} == {f"{family}@h200[cub]"}
    bad = [r for r in rows if r[2] != "ok"]
    assert not bad, bad  # CUB's kernels on valid hubs: every candidate passes the gate
    assert len(rows) == 2
    ref = sqlite3.connect(db).execute("SELECT status, detail FROM trials WHERE phase = 'reference'").fetchall()
    assert ref and ref[0][0] == "ok", ref  # CUB's shipped policy (its public entry point) passed the gate too
    assert "reference: CUB's shipped policy" in out
    after = load_file(spec).spec
    assert any(k.startswith(f"algorithms.{family}@h200.policies.int32") for k in after.measured), spec.read_text()
