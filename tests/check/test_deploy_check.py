"""The `deploy` check (formerly `vllm_deploy`) says what it could not check, counts only problems, and needs no test
extra to run
(issue 11 items 5, 12 and 21)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "fixtures" / "deploy" / "competition.muh"


def _check(cli, name="deploy"):
    code, out, err = cli("check", str(SPEC), "--only", name)
    assert "Traceback" not in out + err
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("deploy "))
    return code, line, out


def test_the_former_name_runs_the_check_once(cli):
    """Scripts that say `--only vllm_deploy` (the name before engines were plug-ins) keep working:
    the check runs once, under its name now; a name that never was a check is still refused."""
    _, _, out = _check(cli, "vllm_deploy")
    code, out_both, _ = cli("check", str(SPEC), "--only", "vllm_deploy", "--only", "deploy")
    assert sum(ln.strip().startswith("deploy ") for ln in out_both.splitlines()) == 1, out_both
    code, out, err = cli("check", str(SPEC), "--only", "vllm_deplo")
    assert code == 2 and "unknown check" in err and "Traceback" not in err, (code, err)


def test_without_yamllint_the_lint_is_skipped_with_its_reason(cli, monkeypatch, tmp_path):
    """Item 5: muh installed without yamllint: no ModuleNotFoundError, a skip that says why; `muh deploy`
    refuses files it could not check unless --force (issue 37.7)."""
    monkeypatch.setitem(sys.modules, "yamllint", None)  # `import yamllint` now raises ImportError
    monkeypatch.setitem(sys.modules, "yamllint.linter", None)
    code, line, out = _check(cli)
    assert " skip " in line and "yamllint: skipped, not installed" in line, out
    import subprocess

    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    code, out, err = cli("deploy", str(SPEC), "--repo", str(repo))
    assert code == 1 and "Traceback" not in err, err
    assert "check deploy: skip — " in out and "yamllint: skipped" in out and "a failure for deploy" in out
    code, out, err = cli("deploy", str(SPEC), "--repo", str(repo), "--force")
    assert code == 2 and "(could not run; --force)" in out, out + err


def test_a_fresh_cache_is_a_skip_not_a_pass(cli, monkeypatch):
    """Item 21: the wheel was never fetched, so the edits were not checked: skip, with the reason."""
    import muh.engines.vllm.wheel as wheel

    monkeypatch.setattr(wheel, "cached", lambda *a, **k: None)
    code, line, out = _check(cli)
    assert " skip " in line and "the wheel is not in muh's cache" in line, out
    assert code == 0


def test_one_problem_is_counted_once(cli, monkeypatch, vllm_wheel):
    """Item 12: "2 problem(s)" for one problem counted the success line of the wheel edits."""
    from muh.platforms.computility import check as platform_check

    monkeypatch.setattr(platform_check, "hadolint", lambda text: ["1: DL3025 warning: use JSON notation"])
    code, line, out = _check(cli)
    assert code == 1 and " fail " in line and "1 problem(s)" in line, out
