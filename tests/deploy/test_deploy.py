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
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
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
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file() and ".git" not in p.parts}


def deploy(spec, repo, **kw):
    kw.setdefault("checks", False)
    return D.run(spec, repo, **kw)


def test_plan_then_apply_then_idempotent(spec, repo):
    before = snapshot(repo)
    plan = deploy(spec, repo)
    assert plan.code == 2, plan.lines
    assert snapshot(repo) == before  # a plan writes nothing
    text = "\n".join(plan.lines)
    assert "+ Dockerfile" in text and "+ computility-run.yaml" in text and "+ muh/vllm/patches/0001-paged-attn-v1-threshold.patch" in text
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
    text = text[: text.index("  moe {")] + text[text.index("  tune_vllm {"):]
    spec.write_text(text)
    plan = deploy(spec, repo)
    assert plan.code == 2
    out = "\n".join(plan.lines)
    assert "~ serve.max_num_seqs: 2 (spec at" in out and "→ 4 (spec at" in out
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


def test_checks_run_first_by_default(spec, repo):
    res = D.run(spec, repo)
    assert any(line.startswith("check vllm_deploy: pass") for line in res.lines), res.lines
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
