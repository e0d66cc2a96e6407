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
