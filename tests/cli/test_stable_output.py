"""Issue 42: one edit must not rewrite every generated file. A file names what it was made from (muh's
version, the spec's file name) and nothing that changes when its content does not; only manifest.json
carries the spec's hash and path. Two specs of one name in different folders do not share
generated/<name>/ silently."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def changed(a: dict[str, bytes], b: dict[str, bytes]) -> set[str]:
    return {p for p in set(a) | set(b) if a.get(p) != b.get(p)}


def build(cli, spec: Path, out: Path) -> dict[str, bytes]:
    code, _, err = cli("build", spec, "-o", out)
    assert code == 0, err
    return tree(out)


def test_a_comment_fmt_or_a_move_changes_no_file_but_the_manifest(cli, tmp_path):
    text = BASELINE.read_text()
    before = build(cli, BASELINE, tmp_path / "ref")
    # comment lines above everything and inside a block: every line number below moves
    commented = tmp_path / "c" / "baseline.muh"
    commented.parent.mkdir()
    commented.write_text("# a note\n# another\n" + text.replace("  serve {", "  # why these flags\n  serve {", 1))
    assert changed(before, build(cli, commented, tmp_path / "o1")) == {"manifest.json"}
    # a messy layout, then `muh fmt`
    messy = tmp_path / "f" / "baseline.muh"
    messy.parent.mkdir()
    messy.write_text(re.sub(r"(?m)^  (\w)", r"      \1", text))
    assert cli("fmt", messy)[0] == 0
    assert changed(before, build(cli, messy, tmp_path / "o2")) == {"manifest.json"}
    # the same spec in another folder (moved)
    moved = tmp_path / "elsewhere" / "deeper" / "baseline.muh"
    moved.parent.mkdir(parents=True)
    shutil.copy(BASELINE, moved)
    assert changed(before, build(cli, moved, tmp_path / "o3")) == {"manifest.json"}
    manifest = json.loads(before["manifest.json"])
    assert manifest["spec_sha256"] == __import__("hashlib").sha256(BASELINE.read_bytes()).hexdigest()
    for name, data in before.items():
        if name != "manifest.json":
            assert manifest["spec_sha256"][:12].encode() not in data, f"{name} carries the spec's hash"
            assert b"baseline.muh:" not in data, f"{name} carries a spec line number"


def test_one_serve_flag_changes_only_the_run_files_and_what_reads_it(cli, tmp_path):
    before = build(cli, BASELINE, tmp_path / "ref")
    edited = tmp_path / "s" / "baseline.muh"
    edited.parent.mkdir()
    text = BASELINE.read_text()
    assert "max_num_seqs = 2 " in text
    edited.write_text(text.replace("max_num_seqs = 2 ", "max_num_seqs = 3 ", 1))
    after = build(cli, edited, tmp_path / "new")
    # the run command (Dockerfile CMD, the platform's run file), the record of tuned values, the request
    # hook's data that bounds `n` by max_num_seqs, the start self-test's cases (the decode batch is
    # max_num_seqs tokens), and the manifest; no kernel, header or probe file
    assert changed(before, after) == {
        "Dockerfile",
        "computility-run.yaml",
        "vllm/deploy.json",
        "vllm/plugin/muh_vllm_plugin/compat.json",
        "muh_kernels/selftest_cases.json",
        "manifest.json",
    }
    command = yaml.safe_load(after["computility-run.yaml"])["command"]
    assert command[command.index("--max-num-seqs") + 1] == "3"


def test_two_specs_of_one_name_do_not_share_the_default_folder(cli, tmp_path):
    (tmp_path / ".git").mkdir()  # a repository's root: the manifest names a spec by its path there
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(BASELINE, tmp_path / d / "x.muh")
    code, _, err = cli("build", "a/x.muh", cwd=tmp_path)
    assert code == 0, err
    first = tree(tmp_path / "generated" / "x")
    code, _, err = cli("build", "b/x.muh", cwd=tmp_path)
    assert code == 2
    assert "generated/x holds the build of a/x.muh, another spec named `x.muh`" in err and "[E-OUTPUT]" in err
    assert "-o DIR" in err and "Traceback" not in err
    assert tree(tmp_path / "generated" / "x") == first
    # building the first one again is fine; so is -o, which names the folder on purpose
    assert cli("build", "a/x.muh", cwd=tmp_path)[0] == 0
    assert cli("build", "b/x.muh", "-o", "generated/x-b", cwd=tmp_path)[0] == 0
    # a spec that moved takes its folder with it: the old path is gone
    (tmp_path / "a" / "x.muh").unlink()
    code, _, err = cli("build", "b/x.muh", cwd=tmp_path)
    assert code == 0, err
    assert json.loads((tmp_path / "generated" / "x" / "manifest.json").read_text())["source"] == "b/x.muh"


def test_a_build_into_another_folder_is_byte_identical(cli, tmp_path):
    """`muh build specs/x.muh -o DIR` equals generated/x/ file for file, manifest included: the manifest names the
    spec by its path in its repository, not from the output folder (which made every other folder 'stale')."""
    for out in ("one", "deep/er/two"):
        code, _, err = cli("build", BASELINE, "-o", tmp_path / out)
        assert code == 0, err
    assert tree(tmp_path / "one") == tree(tmp_path / "deep" / "er" / "two")
    assert json.loads((tmp_path / "one" / "manifest.json").read_text())["source"] == "specs/baseline.muh"
