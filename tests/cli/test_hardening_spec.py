"""Issue 42, the language and spec half: values no device or deployment can have, line endings, read-only
compares, option checks, messages in muh's words. Spec-level cases with one first line are tests/errors
pairs; these need a whole spec, a command line or the file's bytes.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def baseline_with(tmp_path: Path, old: str, new: str, name: str = "spec.muh") -> Path:
    text = BASELINE.read_text()
    assert old in text, old
    p = tmp_path / name
    p.write_text(text.replace(old, new, 1))
    return p


def errors_of(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": error: " in line or line.startswith("error: ")]


UNTESTED = '    env.PYTORCH_CUDA_ALLOC_CONF = "the team'


def test_an_untested_entry_for_a_value_the_block_does_not_set_is_an_error(cli, tmp_path):
    """It keeps nothing knowingly: a typo (or a value since removed) would silently keep the warning it
    was written against."""
    spec = baseline_with(tmp_path, UNTESTED, UNTESTED.replace("ALLOC", "ALOC"))
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o").exists()
    (line,) = errors_of(err)
    assert "untested `env.PYTORCH_CUDA_ALOC_CONF` names no value of this deploy block [E-DEPLOY-UNTESTED]" in line
    assert line.startswith(f"{spec}:110:5:") and "did you mean `env.PYTORCH_CUDA_ALLOC_CONF`?" in err
    other = baseline_with(tmp_path, UNTESTED, '    moe.experts = "x"\n' + UNTESTED, "other.muh")
    code, _, err = cli("build", other, "-o", tmp_path / "o")
    assert code == 2 and "untested `moe.experts` names no value" in err and "`serve.<flag>` or `env.<NAME>`" in err
    # a serve flag the spec leaves at the engine's default has run records: acknowledging it is meaningful
    ok = baseline_with(tmp_path, UNTESTED, '    serve.enable_prefix_caching = "x"\n' + UNTESTED, "ok.muh")
    code, _, err = cli("build", ok, "-o", tmp_path / "ok")
    assert code == 0, err


# -- line endings ------------------------------------------------------------------------------------

def _with_endings(tmp_path: Path, name: str, ending: str, text: str | None = None) -> Path:
    p = tmp_path / name
    p.write_bytes((text if text is not None else BASELINE.read_text()).replace("\n", ending).encode())
    return p


def test_cr_and_crlf_end_lines(cli, tmp_path):
    """A CR-only spec read as one comment line: an empty build, exit 0 (issue 42). CR and CRLF end a line,
    the build is the LF spec's (same content hash), and a place is the editor's line and column."""
    lf = tmp_path / "lf" / "s.muh"
    lf.parent.mkdir()
    lf.write_text(BASELINE.read_text())
    assert cli("build", lf, "-o", tmp_path / "out_lf")[0] == 0
    want = {p.relative_to(tmp_path / "out_lf"): p.read_bytes() for p in (tmp_path / "out_lf").rglob("*") if p.is_file()}
    for ending, folder in (("\r", "cr"), ("\r\n", "crlf")):
        (tmp_path / folder).mkdir()
        spec = _with_endings(tmp_path / folder, "s.muh", ending)
        code, _, err = cli("build", spec, "-o", tmp_path / f"out_{folder}")
        assert code == 0, err
        got = {p.relative_to(tmp_path / f"out_{folder}"): p.read_bytes()
               for p in (tmp_path / f"out_{folder}").rglob("*") if p.is_file()}
        assert got == want, folder
        bad = _with_endings(tmp_path / folder, "bad.muh", ending, BASELINE.read_text().replace("sm_count = 16", "sm_count = 0"))
        code, _, err = cli("build", bad, "-o", tmp_path / f"bad_{folder}")
        assert code == 2 and f"{bad}:7:14: error: " in err, err


def test_fmt_keeps_the_file_s_own_line_ending(cli, tmp_path):
    messy = BASELINE.read_text().replace("sm_count = 16", "sm_count   =   16")
    for ending in ("\r", "\r\n", "\n"):
        spec = _with_endings(tmp_path, "s.muh", ending, messy)
        assert cli("fmt", "--check", spec)[0] == 1
        code, out, _ = cli("fmt", spec)
        assert code == 0 and "formatted" in out
        data = spec.read_bytes()
        assert data == BASELINE.read_text().replace("\n", ending).encode(), repr(ending)
        assert cli("fmt", "--check", spec)[0] == 0


# -- read-only compares and checked options ---------------------------------------------------------

def test_tune_dry_run_checks_its_options(cli, tmp_path):
    """A dry run is where a user finds out a command line is wrong: it took `--sizes ''` for the default
    sizes, and found a missing --plot folder or --against spec only after the search (issue 42)."""
    spec = baseline_with(tmp_path, "muh 1", "muh 1")
    cases = [
        (["--sizes", ""], "error: --sizes '': write sizes like 2^16,2^20", "leave --sizes out for CCCL's sizes"),
        (["--sizes", " , "], "error: --sizes ' , ': write sizes like", "2^16,2^20,2^24,2^28"),
        (["--plot", str(tmp_path / "no" / "heat.png")], f"error: --plot {tmp_path / 'no' / 'heat.png'}: the folder "
         f"{tmp_path / 'no'} does not exist [E-FLAG]", "mkdir -p"),
        (["--plot", str(tmp_path)], f"error: --plot {tmp_path}: is a folder", "--plot takes the image's file name"),
        (["--against", str(tmp_path / "old.muh")], f"error: --against {tmp_path / 'old.muh'}: the spec to time "
         "against does not load [E-FLAG]", "no such file"),
    ]
    for args, first, also in cases:
        code, out, err = cli("tune", spec, "reduce", "--dry-run", *args)
        assert code == 2 and errors_of(err)[0].startswith(first), (args, err)
        assert also in err and "variants in the space" not in out, args
    code, out, err = cli("tune", spec, "reduce", "--dry-run", "--sizes", "2^16", "--against", BASELINE)
    assert code == 0 and "variants in the space" in out, err
