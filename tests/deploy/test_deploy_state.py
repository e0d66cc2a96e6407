"""Issue 42: deploy state that is corrupt or gone says what is wrong and how to recover (it used to plan
"no changes", and a later deploy blamed "Dockerfile … not written by muh"); a detached HEAD is warned
about before the commit; a submodule where muh deploys is found in the plan, before anything is written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from muh import deploy as D

ROOT = Path(__file__).resolve().parents[2]
SPEC_TEXT = (ROOT / "tests" / "fixtures" / "deploy" / "competition.muh").read_text()
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "protocol.file.allow=always", *args],
        check=True,
        capture_output=True,
        text=True,
        env=ENV,
    ).stdout


def new_repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q")
    (path / "README.md").write_text("# our submission\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture
def spec(tmp_path) -> Path:
    p = tmp_path / "specs" / "competition.muh"
    p.parent.mkdir()
    p.write_text(SPEC_TEXT)
    return p


@pytest.fixture
def deployed(tmp_path, spec) -> Path:
    repo = new_repo(tmp_path / "submission")
    assert D.run(spec, repo, apply=True, checks=False).code == 0
    return repo


def errors(result) -> list[str]:
    return [f"{d.message} | {d.hint}" for d in result.diagnostics if d.is_error]


@pytest.mark.parametrize(
    "how,said",
    [
        ("corrupt", "muh/deploy-state.json is not valid JSON"),
        (
            "deleted",
            "muh/deploy-state.json is missing, but ",  # N of the files muh deploys into its folder are already there
        ),
        ("not muh's", "muh/deploy-state.json is not muh's deploy state"),
    ],
)
def test_a_broken_state_is_named_with_the_way_back(deployed, spec, how, said):
    state = deployed / "muh" / "deploy-state.json"
    good = state.read_text()
    if how == "corrupt":
        state.write_text(good[: len(good) // 2])
    elif how == "deleted":
        state.unlink()
    else:
        state.write_text('{"files": ["Dockerfile"]}\n')
    git(deployed, "add", "-A")
    git(deployed, "commit", "-q", "-m", f"state {how}")
    before = git(deployed, "rev-parse", "HEAD")
    for text in (SPEC_TEXT, SPEC_TEXT.replace("    max_num_seqs = 2", "    max_num_seqs = 4")):
        spec.write_text(text)
        for apply in (False, True):
            result = D.run(spec, deployed, apply=apply, checks=False)
            assert result.code == 1, result.lines
            (msg,) = errors(result)
            assert msg.startswith(said) and "cannot tell its files from hand edits" in msg, msg
            assert "git -C" in msg and "checkout HEAD -- muh/deploy-state.json" in msg and "--force" in msg, msg
            assert "not written by muh" not in msg
            assert "no changes" not in result.lines
    assert git(deployed, "rev-parse", "HEAD") == before
    # restoring it as the hint says is the way back
    git(deployed, "checkout", "HEAD~1", "--", "muh/deploy-state.json")
    git(deployed, "commit", "-q", "-m", "restore", "--allow-empty")
    spec.write_text(SPEC_TEXT)
    assert D.run(spec, deployed, checks=False).code == 0


def test_force_takes_the_files_over_and_writes_the_state_anew(deployed, spec):
    state = deployed / "muh" / "deploy-state.json"
    good = state.read_text()
    state.write_text("{")
    git(deployed, "commit", "-q", "-am", "broken")
    result = D.run(spec, deployed, apply=True, force=True, checks=False)
    assert result.code == 0 and result.commit, errors(result)
    assert state.read_text() == good
    assert D.run(spec, deployed, checks=False).code == 0


def test_a_first_deploy_has_no_state_and_is_no_problem(tmp_path, spec):
    repo = new_repo(tmp_path / "fresh")
    result = D.run(spec, repo, checks=False)
    assert result.code == 2 and not errors(result)


def test_a_detached_head_is_warned_about_before_the_commit(tmp_path, spec):
    repo = new_repo(tmp_path / "detached")
    git(repo, "checkout", "-q", "--detach")
    plan = D.run(spec, repo, checks=False)
    assert plan.code == 2
    assert any(line.startswith("  ! HEAD is detached") for line in plan.lines)
    (warn,) = [d for d in plan.diagnostics if d.code == "W-DEPLOY-DETACHED"]
    assert "will belong to no branch" in warn.message and "git -C" in warn.hint and "switch" in warn.hint
    applied = D.run(spec, repo, apply=True, checks=False)
    assert applied.code == 0 and any(d.code == "W-DEPLOY-DETACHED" for d in applied.diagnostics)
    # on a branch: no warning
    git(repo, "switch", "-q", "-c", "main2")
    spec.write_text(SPEC_TEXT.replace("    max_num_seqs = 2", "    max_num_seqs = 4"))
    assert not any(d.code == "W-DEPLOY-DETACHED" for d in D.run(spec, repo, checks=False).diagnostics)


@pytest.mark.parametrize("kind", ["submodule", "nested repository"])
def test_a_repository_at_the_deploy_folder_is_refused_in_the_plan(tmp_path, spec, kind):
    repo = new_repo(tmp_path / "with-sub")
    if kind == "submodule":
        sub = new_repo(tmp_path / "sub")
        git(repo, "submodule", "add", "-q", str(sub), "muh")
        git(repo, "commit", "-q", "-m", "sub")
    else:
        new_repo(repo / "muh")
    before = {p for p in repo.rglob("*") if ".git" not in p.parts}
    for apply in (False, True):
        result = D.run(spec, repo, apply=apply, checks=False)
        assert result.code == 1
        (msg,) = errors(result)
        what = "a git submodule" if kind == "submodule" else "a git repository of its own"
        assert msg.startswith(f"cannot deploy: muh/ is {what} inside with-sub") and "folder = …" in msg, msg
    assert {p for p in repo.rglob("*") if ".git" not in p.parts} == before
