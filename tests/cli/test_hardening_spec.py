"""Issue 42, the language and spec half: values no device or deployment can have, line endings, read-only
compares, option checks, messages in muh's words. Spec-level cases with one first line are tests/errors
pairs; these need a whole spec, a command line or the file's bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

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


API = "  api {  #"
# the opt-in allocator setting turned on and kept knowingly (the baseline leaves it off: it never ran on this stack)
KEPT = '  untested {\n    env.PYTORCH_CUDA_ALLOC_CONF = "the team proposed it for the fragmentation OOM"\n  }\n' + API
FETCH = '    VLLM_IMAGE_FETCH_TIMEOUT = "10"\n'


def baseline_kept(tmp_path: Path, kept: str, name: str = "spec.muh") -> Path:
    """The baseline with PYTORCH_CUDA_ALLOC_CONF set in its env and ``kept`` before its api block."""
    p = baseline_with(tmp_path, API, kept, name)
    p.write_text(p.read_text().replace(FETCH, FETCH + '    PYTORCH_CUDA_ALLOC_CONF = "expandable_segments:True"\n'))
    return p


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_an_untested_entry_for_a_value_the_block_does_not_set_is_an_error(cli, tmp_path):
    """It keeps nothing knowingly: a typo (or a value since removed) would silently keep the warning it
    was written against."""
    spec = baseline_kept(tmp_path, KEPT.replace("env.PYTORCH_CUDA_ALLOC", "env.PYTORCH_CUDA_ALOC"))
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o").exists()
    (line,) = errors_of(err)
    assert "untested `env.PYTORCH_CUDA_ALOC_CONF` names no value of this deploy block [E-DEPLOY-UNTESTED]" in line
    assert line.startswith(f"{spec}:{_line_of(spec, 'env.PYTORCH_CUDA_ALOC_CONF')}:5:"), err
    assert "did you mean `env.PYTORCH_CUDA_ALLOC_CONF`?" in err
    other = baseline_kept(
        tmp_path, KEPT.replace("  untested {\n", '  untested {\n    moe.experts = "x"\n'), "other.muh"
    )
    code, _, err = cli("build", other, "-o", tmp_path / "o")
    assert code == 2 and "untested `moe.experts` names no value" in err and "`serve.<flag>`, `env.<NAME>`" in err
    # a serve flag the spec leaves at the engine's default has run records: acknowledging it is meaningful
    ok = baseline_kept(
        tmp_path, KEPT.replace("  untested {\n", '  untested {\n    serve.enable_prefix_caching = "x"\n'), "ok.muh"
    )
    code, _, err = cli("build", ok, "-o", tmp_path / "ok")
    assert code == 0, err


# -- line endings ------------------------------------------------------------------------------------


def _with_endings(tmp_path: Path, name: str, ending: str, text: str | None = None) -> Path:
    p = tmp_path / name
    p.write_bytes((text if text is not None else BASELINE.read_text()).replace("\n", ending).encode())
    return p


def _built(out: Path) -> dict:
    """The files of a build, the manifest without the spec's path from the output folder (``source``)."""
    import json

    files = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    manifest = json.loads(files.pop(Path("manifest.json")))
    manifest.pop("source", None)
    return {**files, Path("manifest.json"): manifest}


def test_cr_and_crlf_end_lines(cli, tmp_path):
    """A CR-only spec read as one comment line: an empty build, exit 0 (issue 42). CR and CRLF end a line,
    the build is the LF spec's (same content hash), and a place is the editor's line and column."""
    lf = tmp_path / "lf" / "s.muh"
    lf.parent.mkdir()
    lf.write_text(BASELINE.read_text())
    assert cli("build", lf, "-o", tmp_path / "out_lf")[0] == 0
    want = _built(tmp_path / "out_lf")
    for ending, folder in (("\r", "cr"), ("\r\n", "crlf")):
        (tmp_path / folder).mkdir()
        spec = _with_endings(tmp_path / folder, "s.muh", ending)
        code, _, err = cli("build", spec, "-o", tmp_path / f"out_{folder}")
        assert code == 0, err
        assert _built(tmp_path / f"out_{folder}") == want, folder
        bad = _with_endings(
            tmp_path / folder, "bad.muh", ending, BASELINE.read_text().replace("sm_count = 16", "sm_count = 0")
        )
        code, _, err = cli("build", bad, "-o", tmp_path / f"bad_{folder}")
        assert code == 2 and f"{bad}:7:14: error: " in err, err


def test_a_line_end_inside_a_string_is_said_so(cli, tmp_path):
    """CR, CRLF or LF inside a string: the string is not closed on its line (it said "unexpected character")."""
    for ending in ("\r", "\r\n", "\n"):
        spec = tmp_path / "s.muh"
        spec.write_bytes(BASELINE.read_text().replace('"Iluvatar BI-V100"', f'"Iluvatar{ending}BI-V100"').encode())
        code, _, err = cli("build", spec, "-o", tmp_path / "o")
        assert code == 2 and errors_of(err)[0] == (
            f"{spec}:15:17: error: a line break inside a string: a string ends on the line it starts [E-STRING]"
        ), err


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
        (
            ["--plot", str(tmp_path / "no" / "heat.png")],
            f"error: --plot {tmp_path / 'no' / 'heat.png'}: the folder {tmp_path / 'no'} does not exist [E-FLAG]",
            "mkdir -p",
        ),
        (["--plot", str(tmp_path)], f"error: --plot {tmp_path}: is a folder", "--plot takes the image's file name"),
        (
            ["--against", str(tmp_path / "old.muh")],
            f"error: --against {tmp_path / 'old.muh'}: the spec to time against does not load [E-FLAG]",
            "no such file",
        ),
    ]
    for args, first, also in cases:
        code, out, err = cli("tune", spec, "reduce", "--dry-run", *args)
        assert code == 2 and errors_of(err)[0].startswith(first), (args, err)
        assert also in err and "variants in the space" not in out, args
    code, out, err = cli("tune", spec, "reduce", "--dry-run", "--sizes", "2^16", "--against", BASELINE)
    assert code == 0 and "variants in the space" in out, err


# -- messages in muh's words ---------------------------------------------------------------------------

# Every bounded field of the spec (`Field(ge=…, le=…)` in muh/schema): pydantic said "Input should be greater
# than or equal to 1", without a hint (issue 42: 16 seen). (old, new, the message's tail)
RANGES = [
    ("arch = ivcore10", "arch = ivcore10\n  compute_capability = 5", "`compute_capability` is 10 … 1300"),
    ("arch = ivcore10", "arch = ivcore10\n  reported_capability = 2000", "`reported_capability` is 10 … 1300"),
    ("sm_count = 16", "sm_count = 0", "`sm_count` is 1 … 4096"),
    ("warp_size = 64", "warp_size = 2048", "`warp_size` is 1 … 1024"),
    ("max_threads_per_block = 1024", "max_threads_per_block = 0", "`max_threads_per_block` is 1 … 4096"),
    ("gpu_count = 4", "gpu_count = 2000", "`gpu_count` is 1 … 1024"),
    ("experts = 256", "experts = 0", "`experts` is 1 … 65536"),
    ("intermediate_size = 512", "intermediate_size = 0", "`intermediate_size` is 1 … 2147483647"),
    ("top_k = 8", "top_k = 0", "`top_k` is 1 … 65536"),
    ("top_k = 8", "top_k = 8\n    batch_sizes = [1, 0]", "entries of `batch_sizes` are 1 … 2147483647"),
    ("num_attention_heads = 16", "num_attention_heads = 0", "`num_attention_heads` is at least 1"),
    ("head_dim = 256", "head_dim = -1", "`head_dim` is at least 1"),
    ("form = bash", 'form = bash\n    pre = [step(command = ["true"], timeout_s = 0)]', "`timeout_s` is 1 … 3600"),
    ("max_tokens_cap = 8192", "max_tokens_cap = 0", "`max_tokens_cap` is 1 … 2147483647"),
    ("concurrency = 1", "concurrency = 65", "`concurrency` is 1 … 64"),
    ("    threads = 256\n    items = 16", "    threads = 0\n    items = 16", "`threads` is 1 … 4096"),
]


@pytest.mark.parametrize("old,new,tail", RANGES, ids=[r[2].split("`")[1] for r in RANGES])
def test_a_value_out_of_its_range_says_the_range_and_the_nearest_value(cli, tmp_path, old, new, tail):
    spec = baseline_with(tmp_path, old, new)
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2, err
    first = errors_of(err)[0]
    assert f"is out of range: {tail} [E-VALUE]" in first and "Input should" not in err, err
    assert "  hint: the nearest value in range: " in err


LEAKS = [
    # an unknown `api { accept }` value: named by its list, not its index (``not a valid `0` ``)
    (
        "accept = [max_completion_tokens,",
        "accept = [bogus, max_completion_tokens,",
        "`bogus` is not a valid entry of `accept` [E-ENUM]",
        "choose one of: max_completion_tokens",
    ),
    # an engine without its version: not "a valid dictionary or instance of Engine"
    (
        'engine = enginex "bi100-v1.2.3"',
        "engine = vllm",
        "`engine` takes a name and its version, not `vllm` [E-VALUE]",
        'write `engine = vllm "<version>"`',
    ),
    # `include`: not "`muh <version>` must be the first line"
    (
        "muh 1\n",
        'muh 1\ninclude "x.muh"\n',
        "`include` is not part of the language: a spec is one file [E-SYNTAX]",
        "copy the blocks you need into this spec",
    ),
]


LEAKS += [
    # a list for one value: not pydantic's lower-cased "input should be a valid integer"
    ("sm_count = 16", "sm_count = [16]", "`sm_count` takes one value, not a list [E-VALUE]", "sm_count = [16]"),
    # a quantity for a plain number: one error, not one per member of the field's union (three before)
    (
        "gpu_memory_utilization = 0.90",
        "gpu_memory_utilization = 0.90 GB",
        "`gpu_memory_utilization` takes a plain value, not a quantity with a unit (0.90 GB)",
        "0.90 GB",
    ),
    # the parser's `@` token: not "expected one of: `at`"
    (
        'device_name = "Iluvatar BI-V100"',
        'device_name = "Iluvatar BI-V100".x',
        "unexpected `.` [E-SYNTAX]",
        "expected one of: `@`,",
    ),
]


@pytest.mark.parametrize("old,new,message,hint", LEAKS, ids=["accept", "engine", "include", "list", "quantity", "at"])
def test_messages_speak_the_language_not_the_implementation(cli, tmp_path, old, new, message, hint):
    spec = baseline_with(tmp_path, old, new)
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2
    (first,) = errors_of(err)
    assert message in first and hint in err, err
    assert "instance of" not in err and "dictionary" not in err


def test_an_env_list_is_one_error_saying_env_is_a_block(cli, tmp_path):
    import re

    text = re.sub(r"  env \{.*?\n  \}\n", '  env = ["VLLM_X=1", "B=2"]\n', BASELINE.read_text(), flags=re.S)
    spec = tmp_path / "spec.muh"
    spec.write_text(text)
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2 and err.strip().endswith("\n1 error"), err
    assert '`env` is a block, not `["VLLM_X=1", "B=2"]` [E-VALUE]' in err and "write `env { key = value … }`" in err
    # a list for one variable: four errors before, one per member of the value's union ("a valid boolean", …)
    spec = baseline_with(
        tmp_path, 'VLLM_IMAGE_FETCH_TIMEOUT = "10"', 'VLLM_IMAGE_FETCH_TIMEOUT = ["10", "20"]', "one.muh"
    )
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2 and err.strip().endswith("\n1 error"), err
    assert "`VLLM_IMAGE_FETCH_TIMEOUT` takes one value, not a list [E-VALUE]" in err


def test_every_error_line_says_error(tmp_path):
    """Messages a command prints itself (not through a diagnostic) start with `error:` too."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    messy = baseline_with(tmp_path, "sm_count = 16", "sm_count   =   16")

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "muh.cli", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            timeout=120,
        )

    for args in (
        ["fmt", "--check", messy],
        ["probe", "--apply", BASELINE],
        ["probe", BASELINE, "--ingest", messy, "-o", tmp_path],
        ["probe", BASELINE, "-o", tmp_path / "b", "--emulate-warp", "3"],
    ):
        r = run(*args)
        assert r.returncode in (1, 2) and r.stderr.startswith("error: "), (args, r.stderr)


# -- acknowledged warnings -----------------------------------------------------------------------------

ACK = (
    '@acknowledged(warning = "W-DEPLOY-PARSER", '
    'reason = "unknown in the image: the run file passes it only when the image build finds it")'
)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "specs").glob("*.muh")))
def test_the_bundled_specs_build_without_a_warning(cli, tmp_path, name):
    """The README's first command printed a five-line `--reasoning-parser` warning the spec already handles."""
    code, out, err = cli("build", ROOT / "specs" / name, "-o", tmp_path / "o")
    assert code == 0 and err == "", err


def test_an_acknowledged_warning_is_kept_quiet_at_its_line_only(cli, tmp_path):
    assert ACK in BASELINE.read_text()
    quiet = baseline_with(tmp_path, ACK, ACK, "quiet.muh")
    assert cli("build", quiet, "-o", tmp_path / "q")[2] == ""
    loud = baseline_with(tmp_path, " " + ACK, "", "loud.muh")  # without it, the warning is back
    code, _, err = cli("build", loud, "-o", tmp_path / "l")
    assert (
        code == 0
        and f"{loud}:{_line_of(loud, 'reasoning_parser = ')}:5: warning: `--reasoning-parser` may be absent" in err
        and "[W-DEPLOY-PARSER]" in err
    )
    # on another line it keeps nothing: the warning prints, and so does the idle acknowledgment
    moved = loud.read_text().replace("    max_num_seqs = 2 ", f"    max_num_seqs = 2 {ACK} ")
    (tmp_path / "moved.muh").write_text(moved)
    code, _, err = cli("build", tmp_path / "moved.muh", "-o", tmp_path / "m")
    assert code == 0 and "[W-DEPLOY-PARSER]" in err
    assert (
        f"{tmp_path / 'moved.muh'}:{_line_of(tmp_path / 'moved.muh', 'max_num_seqs = 2 ')}:5: warning: "
        '`@acknowledged(warning = "W-DEPLOY-PARSER")`: this line gives '
        "no W-DEPLOY-PARSER warning [W-ACK-UNUSED]" in err
    )


@pytest.mark.parametrize(
    "new,message,hint",
    [
        (
            '@acknowledged(warning = "W-DEPLOY-PARSR", reason = "x")',
            "needs the code of one of muh's warnings, not `W-DEPLOY-PARSR`",
            "did you mean `W-DEPLOY-PARSER`?",
        ),
        (
            '@acknowledged(warning = "E-DEPLOY-VALUE", reason = "x")',
            "needs the code of one of muh's warnings, not `E-DEPLOY-VALUE`",
            "only warnings (W-…) can be kept",
        ),
        (
            '@acknowledged(warning = "W-DEPLOY-PARSER")',
            '`@acknowledged(warning = "W-DEPLOY-PARSER")` needs its reason',
            'add `reason = "…"`',
        ),
        (
            '@acknowledged(warning = "W-DEPLOY-PARSER", reason = "x", until = "2027")',
            "takes `warning` and `reason`, not `until`",
            "write `@acknowledged(",
        ),
        (
            '@acknowleged(warning = "W-DEPLOY-PARSER", reason = "x")',
            "unknown annotation `@acknowleged`",
            "did you mean `acknowledged`?",
        ),
    ],
    ids=["typo", "an-error", "no-reason", "extra", "misspelt"],
)
def test_a_malformed_acknowledgment_is_an_error_at_its_line(cli, tmp_path, new, message, hint):
    spec = baseline_with(tmp_path, ACK, new)
    code, _, err = cli("build", spec, "-o", tmp_path / "o")
    assert code == 2 and not (tmp_path / "o").exists()
    (first,) = errors_of(err)
    at = f"{spec}:{_line_of(spec, 'reasoning_parser = ')}:33: error: "
    assert first.startswith(at) and message in first and "[E-ANNOTATION]" in first, err
    assert hint in err


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["build", BASELINE, "--emulate-warp", "abc"],
            "Invalid value for '--emulate-warp': 'abc' is not a whole number",
        ),
        (
            ["tune", BASELINE, "reduce", "--dry-run", "--batch", "0"],
            "Invalid value for '--batch': 0 is out of range: 1 … 64",
        ),
        (["tune", BASELINE, "reduce", "--dry-run", "--confirm-runs", "x"], "'x' is not a whole number"),
        (["tune", BASELINE, "reduce", "--dry-run", "--variant-timeout", "nan"], "'nan' is not a number"),
    ],
    ids=["emulate-warp", "batch", "confirm-runs", "variant-timeout"],
)
def test_a_bad_number_option_is_said_in_muh_s_words(cli, args, message):
    """typer checks numbers with pydantic: "Input should be a valid integer, unable to parse string as an integer"."""
    code, out, err = cli(*args)
    assert code == 64 and message in out + err and "Input should" not in out + err  # a usage error (EXIT_USAGE)
