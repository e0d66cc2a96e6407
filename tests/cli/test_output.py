"""The build folder is muh's alone: nothing of the user's is deleted, nothing is half-written (issue 11,
items 1, 2 and 7)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from muh import output

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def test_a_foreign_manifest_does_not_make_a_folder_muhs(cli, tmp_path):
    """Item 1: `{}` in manifest.json is not proof of ownership; app.js survives."""
    w = tmp_path / "w"
    (w / "src").mkdir(parents=True)
    (w / "manifest.json").write_text("{}")
    (w / "src" / "app.js").write_text("x\n")
    code, _, err = cli("build", BASELINE, "-o", w)
    assert code == 2 and "not a manifest written by muh" in err, err
    assert (w / "src" / "app.js").read_text() == "x\n"
    assert (w / "manifest.json").read_text() == "{}"


def test_files_the_manifest_does_not_list_are_kept(cli, tmp_path):
    """Item 1: a rebuild replaces muh's files and keeps the user's, byte for byte, at their path."""
    w = tmp_path / "w"
    assert cli("build", BASELINE, "-o", w)[0] == 0
    (w / "notes").mkdir()
    (w / "notes" / "mine.txt").write_text("precious\n")
    (w / "vllm" / "extra.py").write_text("# mine\n")
    (w / "empty").mkdir()
    (w / ".gitignore").write_text("*.log\n")  # the user's own, where muh's temporaries keep their marker
    code, _, err = cli("build", BASELINE, "-o", w)
    assert code == 0, err
    assert (w / "notes" / "mine.txt").read_text() == "precious\n"
    assert (w / "vllm" / "extra.py").read_text() == "# mine\n"
    assert (w / "empty").is_dir() and (w / ".gitignore").read_text() == "*.log\n"
    listed = json.loads((w / "manifest.json").read_text())["files"]
    assert "notes/mine.txt" not in listed and "vllm/extra.py" in [p for p in output._listing(w)[0]]


def test_an_edited_muh_file_is_refused_and_kept(cli, tmp_path):
    w = tmp_path / "w"
    assert cli("build", BASELINE, "-o", w)[0] == 0
    (w / "Dockerfile").write_text("FROM mine\n")
    code, _, err = cli("build", BASELINE, "-o", w)
    assert code == 2 and "Dockerfile was changed since muh wrote it" in err, err
    assert (w / "Dockerfile").read_text() == "FROM mine\n"


def test_a_foreign_file_where_muh_writes_is_refused(cli, tmp_path):
    w = tmp_path / "w"
    assert cli("build", BASELINE, "-o", w)[0] == 0
    manifest = json.loads((w / "manifest.json").read_text())
    del manifest["files"]["Dockerfile"]  # a folder muh wrote without this file; the user then added one
    (w / "manifest.json").write_text(json.dumps(manifest))
    (w / "Dockerfile").write_text("FROM mine\n")
    code, _, err = cli("build", BASELINE, "-o", w)
    assert code == 2 and "was not written by muh, and muh now writes a file there" in err, err
    assert (w / "Dockerfile").read_text() == "FROM mine\n"


def test_the_manifest_says_it_is_muhs():
    text = output.manifest_text({"spec": "x"}, {"a": "b"})
    data = json.loads(text)
    assert data["format"] == output.MANIFEST_FORMAT and data["files"] == {"a": output.sha256(b"b")}


@pytest.mark.parametrize("name", ["..muh", ".muh", "a b.muh"])
def test_a_spec_name_that_is_no_folder_name_is_refused(cli, tmp_path, name):
    """Item 2: `..muh` would build into generated/ itself and wipe every other spec's output."""
    (tmp_path / "generated" / "other").mkdir(parents=True)
    (tmp_path / "generated" / "other" / "keep.h").write_text("// other spec\n")
    (tmp_path / name).write_text(BASELINE.read_text())
    code, _, err = cli("build", name, cwd=tmp_path)
    assert code == 2 and "cannot name an output folder after the spec" in err and "-o DIR" in err, err
    assert (tmp_path / "generated" / "other" / "keep.h").read_text() == "// other spec\n"
    assert sorted(p.name for p in (tmp_path / "generated").iterdir()) == ["other"]


def test_the_folder_keeps_its_mode_and_a_new_one_follows_the_umask(cli, tmp_path):
    """Item 7: not mkdtemp's 0700."""
    w = tmp_path / "w"
    old = os.umask(0o022)
    try:
        assert cli("build", BASELINE, "-o", w)[0] == 0
        assert stat.S_IMODE(w.stat().st_mode) == 0o755
        w.chmod(0o750)
        assert cli("build", BASELINE, "-o", w)[0] == 0
        assert stat.S_IMODE(w.stat().st_mode) == 0o750
    finally:
        os.umask(old)


def test_stale_temporaries_of_a_killed_build_are_cleaned_and_only_those(cli, tmp_path):
    """Item 7: a SIGKILLed build leaves .w.tmp-*; the next build removes it (name + marker + dead pid),
    and leaves a look-alike without the marker alone."""
    w = tmp_path / "w"
    assert cli("build", BASELINE, "-o", w)[0] == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / ".w.tmp-abc123"
    stale.mkdir()
    (stale / "half.h").write_text("//")
    (stale / output.MARKER).write_text(f"{output._MARK_HEAD} (pid {pid}); safe to delete\n*\n")
    lookalike = tmp_path / ".w.tmp-mine"
    lookalike.mkdir()
    (lookalike / "keep").write_text("mine")
    assert cli("build", BASELINE, "-o", w)[0] == 0
    assert not stale.exists()
    assert (lookalike / "keep").read_text() == "mine"


def test_an_interrupted_swap_is_restored_before_cleaning(tmp_path):
    """Killed between `out → .old-*/x` and `tmp → out`: the next build puts the old folder back."""
    w = tmp_path / "w"
    output.write_folder(
        {"a.txt": ("1\n", False), "manifest.json": (output.manifest_text({}, {"a.txt": "1\n"}), False)}, w
    )
    (w / "user.txt").write_text("mine\n")
    old = tmp_path / ".w.old-zz"
    old.mkdir()
    os.rename(w, old / "x")
    (old / output.MARKER).write_text(f"{output._MARK_HEAD} (pid 999999999); safe to delete\n*\n")
    output.write_folder(
        {"a.txt": ("2\n", False), "manifest.json": (output.manifest_text({}, {"a.txt": "2\n"}), False)}, w
    )
    assert (w / "a.txt").read_text() == "2\n" and (w / "user.txt").read_text() == "mine\n"
    assert not old.exists()


def test_temporaries_are_ignored_by_git(tmp_path):
    tmp = tmp_path / ".w.tmp-x"
    tmp.mkdir()
    output._mark(tmp)
    (tmp / "a.h").write_text("//")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    status = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == ""


_CHILD = "import os, sys, muh; os.write(1, b'r'); from muh.cli import main; os.write(1, b'i'); main()"


@pytest.mark.parametrize("phase", ["imports", "build"])
def test_ctrl_c_prints_one_line_and_exits_130(tmp_path, phase):
    """Item 7: Ctrl-C while muh is still importing and while it builds: one line `interrupted`, exit
    130, no traceback, no temporary left behind. The child says when it is about to import muh.cli (and
    when it is done), so the signal lands in the phase under test."""
    import signal
    import time

    cmd = [sys.executable, "-c", _CHILD, "build", str(BASELINE), "-o", str(tmp_path / "w")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout.read(1) == b"r"
    if phase == "build":  # the imports are done: the signal lands in the command
        assert proc.stdout.read(1) == b"i"
    time.sleep(0.1)  # past the few bytecodes between the child's note and the code under test
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    err = err.decode()
    if proc.returncode == 0:
        pytest.skip("the build finished before the signal arrived")
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted", err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_fmt_formats_the_target_of_a_link_and_keeps_the_link(cli, tmp_path):
    """Item 6: the link stays a link, the file it points to is formatted (mode kept)."""
    real = tmp_path / "real" / "x.muh"
    real.parent.mkdir()
    real.write_text("muh 1\nhardware x{sm_count=1}\n")
    real.chmod(0o640)
    link = tmp_path / "link.muh"
    link.symlink_to(real)
    code, out, err = cli("fmt", link)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "muh 1\n\nhardware x { sm_count = 1 }\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["x.muh"]  # no temporary left


def test_replace_file_never_follows_a_planted_temporary(tmp_path):
    """The class of item 3 for files rewritten in place (fmt, tune --apply): the temporary is
    created O_EXCL|O_NOFOLLOW, so a link planted at a temporary name is never written through."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    spec = tmp_path / "s.muh"
    spec.write_text("muh 1\n")
    for name in (".s.muh.muh-tmp", "s.muh.muh-fmt.tmp", "s.muh.muh-tune.tmp"):
        (tmp_path / name).symlink_to(victim)
    output.replace_file(spec, "muh 1\n# new\n")
    assert spec.read_text() == "muh 1\n# new\n" and victim.read_text() == "precious\n"


def test_replace_file_creates_a_new_file_with_the_umask_mode(tmp_path):
    """`muh tune --plot FILE.png` goes through replace_file too (bytes, maybe a new file)."""
    old = os.umask(0o027)
    try:
        p = output.replace_file(tmp_path / "new.png", b"\x89PNG")
    finally:
        os.umask(old)
    assert p.read_bytes() == b"\x89PNG" and stat.S_IMODE(p.stat().st_mode) == 0o640
    assert sorted(x.name for x in tmp_path.iterdir()) == ["new.png"]
