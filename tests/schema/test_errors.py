"""Every bad-input example gets exit 2, its expected first diagnostic line, and no traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

ERRORS = Path(__file__).resolve().parents[1] / "errors"
CASES = sorted(p.stem for p in ERRORS.glob("*.muh"))


@pytest.mark.parametrize("name", CASES)
def test_error_case(name, cli, tmp_path):
    code, out, err = cli("build", f"{name}.muh", "-o", str(tmp_path / "out"), cwd=ERRORS)
    assert code == 2, (out, err)
    first = err.splitlines()[0]
    assert first == (ERRORS / f"{name}.expected").read_text().strip()
    assert "Traceback" not in err
    # the excerpt and caret follow the message
    assert "|" in err.splitlines()[1] and "^" in err.splitlines()[2]
    assert not (tmp_path / "out").exists(), "a failed build must not write anything"


def test_several_independent_errors_in_one_run(cli, tmp_path):
    src = tmp_path / "many.muh"
    src.write_text("muh 1\nhardware x {\n  sm_count = 16\n  warp_sise = 64\n  smem_per_block = 48\n"
                   "  arch = a\n  toolchain { cuda = \"10.2\" }\n}\nalgorithm sacn on x { policy default { threads = 64 } }\n")
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2
    assert "did you mean `warp_size`?" in err
    assert "write e.g. `48 KiB`" in err
    assert "did you mean `scan`?" in err
    assert err.strip().endswith("4 errors")


def test_hardware_checks_report_alongside_structural_errors(cli, tmp_path):
    """A typo in the deploy block does not hide a warp-size error in an algorithm (one run, both)."""
    src = tmp_path / "mix.muh"
    src.write_text("muh 1\nhardware h {\n  sm_count = 16\n  warp_size = 64\n  smem_per_block = 48 KiB\n  arch = a\n"
                   "  toolchain { cuda = \"10.2\" }\n}\nalgorithm reduce on h { policy default { threads = 96  items = 16 } }\n"
                   "deploy d on h {\n  base_image = 5\n  engine = vllm \"0.6.3.post1\"\n}\n")
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2
    assert "E-WARP" in err and "`base_image`" in err and err.strip().endswith("2 errors")


def test_a_negative_size_is_one_error_at_its_line(cli, tmp_path):
    """Issue 11 item 9: `-48 KiB` gave six nonsense errors (tiles "exceeding" a negative size)."""
    src = tmp_path / "neg.muh"
    base = (Path(__file__).resolve().parents[2] / "specs" / "baseline.muh").read_text()
    src.write_text(base.replace("smem_per_block = 48 KiB", "smem_per_block = -48 KiB"))
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2 and err.strip().endswith("\n1 error"), err
    assert "neg.muh:9:20: error: `smem_per_block`: -48 KiB is out of range" in err
