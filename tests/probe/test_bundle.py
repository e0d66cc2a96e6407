"""The probe bundle: written atomically by `muh probe SPEC -o DIR`, built with the spec's toolchain.

nvcc: the H200 bundle through its own build.sh (C++17, sm_90), the BI-V100 bundle's probe.cu with
``-std=c++14`` at the lowest arch this nvcc has (its warp-64 native layer; the real card builds it with
CoreX clang), and the BI-V100 bundle in warp-64 emulation through its build.sh — three compiles in
parallel. The clang build is checked by running build.sh with a stand-in compiler that records argv.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

SPECS = Path(__file__).resolve().parents[2] / "specs"

FILES = {
    "probe/README.md",
    "probe/include/muh/warp.cuh",
    "probe/probe.cu",
    "probe/probe_config.h",
    "probe/nanosleep_test.cu",
    "probe/build.sh",
    "probe/run.sh",
    "probe/engine_probe.py",
    "probe/engine_probe.json",
}


def lowest_arch(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    archs = [int(m) for m in re.findall(r"compute_(\d+)", out)]
    return f"sm_{min(archs)}"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """{name: folder} written by the CLI: h200, bi100 (native warp 64, clang), emu64 (baseline emulated)."""
    from typer.testing import CliRunner

    import muh.cli as cli_mod

    cli_mod._register_optional_commands()
    base = tmp_path_factory.mktemp("bundles")
    out = {}
    for name, spec, extra in (
        ("h200", "h200.muh", []),
        ("bi100", "baseline.muh", []),
        ("emu64", "baseline.muh", ["--emulate-warp", "64"]),
    ):
        res = CliRunner().invoke(
            cli_mod.app, ["probe", str(SPECS / spec), "-o", str(base / name), *extra], catch_exceptions=False
        )
        assert res.exit_code == 0, res.stderr
        out[name] = base / name
    return out


def test_bundle_files_manifest_and_modes(bundles):
    for name, d in bundles.items():
        written = {str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()}
        assert written == FILES | {"manifest.json"}, name
        man = json.loads((d / "manifest.json").read_text())
        assert set(man["files"]) == FILES
        for script in ("probe/build.sh", "probe/run.sh", "probe/engine_probe.py"):
            assert (d / script).stat().st_mode & stat.S_IXUSR, script
    warp = {n: (d / "probe/include/muh/warp.cuh").read_text() for n, d in bundles.items()}
    assert "constexpr int kSize = 32;" in warp["h200"] and "mode: native" in warp["h200"]
    assert "constexpr int kSize = 64;" in warp["bi100"] and "mode: native" in warp["bi100"]
    assert "constexpr int kSize = 64;" in warp["emu64"] and "mode: emulated" in warp["emu64"]
    # the probe's kernels go through the layer: no raw shuffle/ballot/syncwarp outside warp.cuh
    for d in bundles.values():
        src = (d / "probe/probe.cu").read_text()
        assert not re.search(r"__(shfl\w*|ballot\w*|syncwarp|any_sync|all_sync|activemask)\s*\(", src)
        assert "muh::warp::count(true)" in src and "muh::warp::barrier()" in src
    # the clang profile has no inline PTX (%smid) and the BI-V100 C++ level: its config turns the PTX parts off,
    # and every inline PTX of probe.cu stands inside `#if MUH_PROBE_PTX … #endif`
    assert "#define MUH_PROBE_PTX 0" in (bundles["bi100"] / "probe/probe_config.h").read_text()
    assert "#define MUH_PROBE_PTX 1" in (bundles["h200"] / "probe/probe_config.h").read_text()
    src = (bundles["h200"] / "probe/probe.cu").read_text()
    bi100 = (bundles["bi100"] / "probe/probe.cu").read_text()
    assert "%%smid" in src and src.partition("\n")[2] == bi100.partition("\n")[2]  # one source, after the header
    outside = re.sub(r"#if MUH_PROBE_PTX\n.*?#(else|endif)\n", "", src, flags=re.S)
    assert "asm" not in outside and "%%" not in outside


def test_bundle_is_atomic_and_refuses_foreign_folders(bundles, cli, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, _, err = cli("probe", SPECS / "h200.muh", "-o", foreign)
    assert code == 2 and "not written by muh" in err
    assert (foreign / "notes.txt").read_text() == "keep me"
    code, _, err = cli("probe", SPECS / "h200.muh", "-o", tmp_path / "x", "--emulate-warp", "48")
    assert code == 2 and "power of two" in err
    code, _, err = cli("probe", SPECS / "nvidia.muh", "-o", tmp_path / "y")
    assert code == 2 and "one hardware block" in err


def test_clang_profile_build_uses_the_specs_toolchain(bundles, tmp_path):
    """The BI-V100 bundle's build.sh runs the CoreX clang++ with the spec's flags (a stand-in records them)."""
    sdk = tmp_path / "corex"
    (sdk / "bin").mkdir(parents=True)
    log = tmp_path / "argv.txt"
    fake = sdk / "bin" / "clang++"
    fake.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nfor a; do case $prev in -o) : > "$a";; esac; prev=$a; done\nexit 0\n'
    )
    fake.chmod(0o755)
    env = {**os.environ, "COREX_HOME": str(sdk)}
    env.pop("MUH_CUDA_COMPILER", None)
    r = subprocess.run(
        ["bash", str(bundles["bi100"] / "probe/build.sh"), str(tmp_path / "build")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    calls = [line.split() for line in log.read_text().splitlines() if "-o" in line.split()]
    assert len(calls) == 2  # nanosleep_test.cu, probe.cu
    probe = next(c for c in calls if any(a.endswith("probe.cu") for a in c))
    for flag in (
        "-x",
        "cuda",
        f"--cuda-path={sdk}",
        "--cuda-gpu-arch=ivcore10",
        "-std=c++14",
        "-DMUH_WARP_SIZE=64",
        f"-L{sdk}/lib64",
        "-lcudart",
        "-ldl",
    ):
        assert flag in probe, (flag, probe)
    assert not any(a.startswith("-std=") and a != "-std=c++14" for a in probe)
    assert "-shared" not in probe and "-fPIC" not in probe


@pytest.mark.nvcc
@pytest.mark.slow
def test_bundles_compile_with_nvcc(bundles, nvcc, tmp_path):
    env = {**os.environ, "MUH_CUDA_COMPILER": nvcc}
    procs = {
        "h200": subprocess.Popen(
            ["bash", str(bundles["h200"] / "probe/build.sh"), str(tmp_path / "h200")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ),
        "emu64": subprocess.Popen(
            ["bash", str(bundles["emu64"] / "probe/build.sh"), str(tmp_path / "emu64")],
            env={**env, "MUH_PROBE_ARCH": "sm_90"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ),
        # the warp-64 native profile, C++14, as the card's clang would build it (nvcc stands in; no %smid)
        "bi100": subprocess.Popen(
            [
                nvcc,
                "-std=c++14",
                f"-arch={lowest_arch(nvcc)}",
                "-O2",
                "-Xcompiler",
                "-Wall,-Wextra",
                "-I",
                str(bundles["bi100"] / "probe/include"),
                str(bundles["bi100"] / "probe/probe.cu"),
                "-o",
                str(tmp_path / "bi100-probe"),
                "-ldl",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ),
    }
    logs = {}
    for name, p in procs.items():
        out, _ = p.communicate(timeout=600)
        logs[name] = out
        assert p.returncode == 0, f"{name}:\n{out[-4000:]}"
    assert (
        (tmp_path / "h200/probe").is_file()
        and (tmp_path / "emu64/probe").is_file()
        and (tmp_path / "bi100-probe").is_file()
    )
    assert "warning" not in logs["bi100"].lower(), logs["bi100"]
    for name in ("h200", "emu64"):
        build_log = (tmp_path / name / "build.log").read_text()
        assert "warning" not in build_log.lower(), build_log
        assert "-DMUH_PROBE_NANOSLEEP=1" in build_log  # sm_90 has __nanosleep
    assert "-std=c++14" in (tmp_path / "emu64/build.log").read_text()
    assert "-std=c++17" in (tmp_path / "h200/build.log").read_text()


def test_run_sh_writes_nothing_when_the_probe_fails(bundles, tmp_path):
    """No GPU (or no compiler): run.sh exits non-zero and leaves no result file behind."""
    env = {**os.environ, "MUH_CUDA_COMPILER": str(tmp_path / "no-such-nvcc")}
    result = tmp_path / "r.json"
    r = subprocess.run(
        ["bash", str(bundles["h200"] / "probe/run.sh"), str(result)], env=env, capture_output=True, text=True
    )
    assert r.returncode != 0 and "muh-probe:" in r.stderr
    assert not result.exists()
