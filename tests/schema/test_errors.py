"""Every bad-input example gets exit 2, its expected first diagnostic line, and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_card import hardware, line_col

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
    card = hardware("x", smem_per_block="48")  # a size without its unit
    assert "  warp_size = " in card
    src.write_text(
        "muh 1\n"
        + card.replace("  warp_size = ", "  warp_sise = ")  # a misspelt key
        + "algorithm sacn on x { policy default { threads = 64 } }\n"
    )
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2
    assert "did you mean `warp_size`?" in err
    assert "write e.g. `48 KiB`" in err
    assert "did you mean `scan`?" in err
    assert err.strip().endswith("4 errors")


def test_hardware_checks_report_alongside_structural_errors(cli, tmp_path):
    """A typo in the deploy block does not hide a warp-size error in an algorithm (one run, both)."""
    src = tmp_path / "mix.muh"
    src.write_text(
        "muh 1\n"
        + hardware("h", warp_size="64", vendor="iluvatar")
        + "algorithm reduce on h { policy default { threads = 96  items = 16 } }\n"
        'deploy d on h {\n  base_image = 5\n  engine = vllm "0.6.3.post1"\n}\n'
    )
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


def test_an_unknown_unit_lists_the_units(cli):
    """Issue 11 item 16: the error is at the unit, with the list of units (not "unexpected `=`" a line later)."""
    code, _, err = cli("build", "unit_lowercase.muh", "-o", "/nonexistent/never", cwd=ERRORS)
    assert code == 2
    hint = next(line for line in err.splitlines() if "hint:" in line)
    assert hint.startswith("  hint: did you mean `KiB`? units: ")
    from muh.schema.units import DIMENSION_OF_UNIT

    assert set(hint.split("units: ")[1].split(", ")) == set(DIMENSION_OF_UNIT)
    assert err.strip().endswith("1 error")


def test_a_homoglyph_names_its_code_point_and_the_letter_it_imitates(cli):
    code, _, err = cli("build", "homoglyph.muh", "-o", "/nonexistent/never", cwd=ERRORS)
    assert code == 2 and "hint: `а` is U+0430 CYRILLIC SMALL LETTER A, not the ASCII `a`: retype it" in err
    assert "must be the first line" not in err


def _baseline_with(tmp_path, old, new):
    text = (Path(__file__).resolve().parents[2] / "specs" / "baseline.muh").read_text()
    assert old in text
    src = tmp_path / "b.muh"
    src.write_text(text.replace(old, new, 1))
    return src


def test_a_device_name_that_cannot_name_the_moe_file_is_refused_at_its_line(cli, tmp_path):
    """Item 16: before, "set `device_name`" although it was set."""
    src = _baseline_with(tmp_path, 'device_name = "Iluvatar BI-V100"', 'device_name = "Iluvatar/BI-V100"')
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2
    first = next(line for line in err.splitlines() if ": error: " in line)  # the spec's warnings may come first
    assert first.startswith(
        f"{src}:15:17: error: device_name 'Iluvatar/BI-V100' cannot be part of vLLM's MoE config file name"
    )
    assert "it contains `/`" in first and "set `device_name" not in err


def test_a_bad_emulate_warp_names_the_option(cli, tmp_path):
    """Item 16: not one giant error at the hardware block with "change the policy"."""
    code, _, err = cli(
        "build",
        str(Path(__file__).resolve().parents[2] / "specs" / "baseline.muh"),
        "-o",
        str(tmp_path / "o"),
        "--emulate-warp",
        "48",
    )
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # the spec's own warnings may come first
    assert errors[0].startswith("error: --emulate-warp 48: warp sizes must be powers of two")
    assert "change the policy" not in err and "hint: a logical warp is a power of two" in err
    assert not (tmp_path / "o").exists()


def test_independent_errors_are_all_reported(cli, tmp_path):
    """Issue 11 item 17: a bad `cxx` hid a `threads = 96` warp error; a dangling `on bi200` hid a
    typo in the same block. One run reports all four."""
    src = tmp_path / "four.muh"
    text = (
        "muh 1\n"
        + hardware("bi100", warp_size="64", vendor="iluvatar", toolchain={"cxx": "15"})
        + "algorithm reduce on bi100 {\n  policy default { threads = 96  items = 16 }\n}\n"
        "algorithm scan on bi200 {\n  policy default { threads = 128  load = warp_transposd }\n}\n"
    )
    src.write_text(text)
    code, _, err = cli("build", str(src), "-o", str(tmp_path / "o"))
    assert code == 2
    firsts = [line for line in err.splitlines() if ": error: " in line]
    places = [
        line_col(text, "cxx = 15", len("cxx = ")),
        line_col(text, "threads = 96", len("threads = ")),
        line_col(text, "bi200"),
        line_col(text, "warp_transposd"),
    ]
    assert [f.split(": error: ")[0].removeprefix(str(src) + ":") for f in firsts] == ["%d:%d" % p for p in places], err
    assert "`15` is not a valid `cxx`" in firsts[0] and "E-WARP" in firsts[1]
    assert "no hardware named `bi200`" in firsts[2] and "`warp_transposd` is not a valid `load`" in firsts[3]
    assert err.strip().endswith("4 errors")


@pytest.mark.parametrize("width", ["0", "-4", "512"])
def test_every_bad_emulate_warp_is_a_clean_option_error(cli, tmp_path, width):
    code, _, err = cli(
        "build",
        str(Path(__file__).resolve().parents[2] / "specs" / "baseline.muh"),
        "-o",
        str(tmp_path / "o"),
        "--emulate-warp",
        width,
    )
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # the spec's own warnings may come first
    assert code == 2 and errors and errors[0].startswith(f"error: --emulate-warp {width}: "), err
