"""muh.runtime.toolchain: the one owner of how muh invokes a CUDA compiler (issue 29).

The spelling of every flag per compiler class, the arch rule of a hardware block, the purposes'
differences; and no other module or template of muh spells a compiler flag in code.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from muh.runtime import ptxas
from muh.runtime.toolchain import HOST, PTXAS_VERBOSE, Toolchain, cplusplus_range

MUH = Path(__file__).resolve().parents[2] / "muh"
OWNER = MUH / "runtime" / "toolchain.py"
# what a compiler flag looks like when code spells it (prose in docstrings and comments may name them)
SPELLINGS = (
    "-std=c++",
    "-arch=",
    "--cuda-gpu-arch",
    "-fPIC",
    "-Xcompiler",
    "-Xptxas",
    "-lineinfo",
    "--cuda-path",
    "-shared",
    "-DMUH_WARP_SIZE",
    "-lcudart",
    "--cuda-device-only",
    "--cuda-host-only",
)


def hw(compiler="nvcc", cxx=17, arch=None, cc=None, warp=32):
    return SimpleNamespace(
        toolchain=SimpleNamespace(compiler=compiler, cxx=cxx, arch=arch), compute_capability=cc, warp_size=warp
    )


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def spelled(path: Path) -> list[str]:
    """The flags ``path`` writes in code: string constants of a module (docstrings left out), any text of a template."""
    if path.suffix == ".j2":
        texts = [path.read_text(encoding="utf-8")]
    else:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        docs = _docstrings(tree)
        texts = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
        ]
    return sorted({s for t in texts for s in SPELLINGS if s in t})


def test_no_module_or_template_but_the_owner_spells_a_compiler_flag():
    found = {
        str(p.relative_to(MUH.parent)): hit
        for p in sorted([*MUH.rglob("*.py"), *MUH.rglob("*.j2")])
        if p != OWNER and (hit := spelled(p))
    }
    assert found == {}, found


def test_the_guard_sees_a_flag_in_code_and_not_in_prose(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('"""Compiled with -std=c++14."""\n# nvcc -arch=sm_90\nFLAGS = ["-O3", f"-std=c++{17}"]\n')
    assert spelled(src) == ["-std=c++"]


def test_each_class_spells_the_arch_the_language_and_pic_its_own_way():
    nv, cl = Toolchain("nvcc", 17, "sm_90", 32), Toolchain("clang", 14, "ivcore10", 64)
    assert nv.arch_flags() == ("-arch=sm_90",) and cl.arch_flags() == ("--cuda-gpu-arch=ivcore10",)
    assert nv.language == ("-x", "cu") and cl.language == ("-x", "cuda")
    assert nv.pic == ("-Xcompiler", "-fPIC") and cl.pic == ("-fPIC",)
    assert nv.std == "-std=c++17" and cl.std == "-std=c++14"
    assert cl.warp_define() == ("-DMUH_WARP_SIZE=64",) and Toolchain("nvcc").warp_define() == ()
    with pytest.raises(ValueError, match="unknown CUDA compiler class 'hipcc'"):
        Toolchain("hipcc")  # type: ignore[arg-type]


def test_a_hardware_blocks_arch_is_its_toolchains_else_its_compute_capability():
    assert Toolchain.of(hw(arch="sm_80a", cc=90)).arch == "sm_80a"
    assert Toolchain.of(hw(cc=90)).arch == "sm_90"
    assert Toolchain.of(hw()).arch is None and Toolchain.of(hw()).arch_flags() == ()
    assert Toolchain.of(hw("clang", 14, "ivcore10", None, 64)) == Toolchain("clang", 14, "ivcore10", 64)


def test_the_ops_library_for_clang_reads_the_sdk_and_links_its_cudart():
    cmd = Toolchain("clang", 14, "ivcore10", 64).shared_library()
    assert cmd.flags == (
        "-x",
        "cuda",
        "--cuda-path={sdk}",
        "--cuda-gpu-arch=ivcore10",
        "-O3",
        "-std=c++14",
        "-fPIC",
        "-shared",
        "-DMUH_WARP_SIZE=64",
    )
    assert cmd.link == ("-L{sdk}/lib64", "-lcudart", "-Wl,-rpath,{sdk}/lib64")
    nv = Toolchain("nvcc", 17, "sm_90", 32).shared_library()
    assert nv.flags == (*Toolchain.lab("sm_90").objects(), "-shared", "-DMUH_WARP_SIZE=32") and nv.link == ()


def test_a_program_is_the_library_without_its_shared_library_flags_and_arch():
    for tc in (Toolchain("clang", 14, "ivcore10", 64), Toolchain("nvcc", 17, "sm_90", 32)):
        lib, prog = tc.shared_library(), tc.program()
        gone = {"-shared", "-fPIC", "-Xcompiler", "-lineinfo", *tc.arch_flags()}
        assert prog.flags == tuple(f for f in lib.flags if f not in gone) and prog.link == lib.link


def test_a_tune_unit_is_at_least_cxx14_reports_spills_and_names_only_an_nvidia_arch():
    assert Toolchain("nvcc", 11, "sm_90").tune_unit() == (
        "-O3",
        "-std=c++14",
        "-lineinfo",
        "-w",
        *PTXAS_VERBOSE,
        "-arch=sm_90",
    )
    assert not any(a.startswith("-arch") for a in Toolchain("clang", 14, "ivcore10").tune_unit())
    assert ptxas.FLAGS == PTXAS_VERBOSE


def test_the_checks_purposes():
    assert Toolchain("clang", 14, "sm_70", 64).syntax_check("/cuda") == (
        "-x",
        "cuda",
        "--cuda-gpu-arch=sm_70",
        "-Wno-unknown-cuda-version",
        "-Wall",
        "-Wextra",
        "-S",
        "-std=c++14",
        "--cuda-path=/cuda",
        "-DMUH_WARP_SIZE=64",
    )
    with pytest.raises(ValueError):
        Toolchain("nvcc").syntax_check("/cuda")
    assert Toolchain("nvcc", 14).header_object() == (
        "-std=c++14",
        "-x",
        "cu",
        "-Werror",
        "all-warnings",
        "-Xcompiler",
        "-Werror",
        "-D_CCCL_NO_SYSTEM_HEADER",
        "-c",
    )
    assert HOST.host_program() == ("-std=c++17", "-x", "cu") and HOST.dependencies()[-1] == "-M"


def test_cplusplus_ranges_follow_the_levels():
    assert cplusplus_range(14) == (201402, 201703) and cplusplus_range(20) == (202002, 999999)


def test_the_labs_nvcc_is_named_by_muh_nvcc_then_cudacxx_then_path(tmp_path, monkeypatch):
    """One finder for the runtime's builds, `muh tune` and the checks (build.nvcc ignored $MUH_NVCC before)."""
    from muh.check import cub_truth
    from muh.runtime import build, toolchain
    from muh.tune import machine

    exes = {}
    for name in ("muh-nvcc", "cudacxx-nvcc", "bin/nvcc"):
        exe = tmp_path / name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
        exes[name] = str(exe)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("MUH_NVCC", exes["muh-nvcc"])
    monkeypatch.setenv("CUDACXX", exes["cudacxx-nvcc"])
    assert toolchain.find_nvcc() == build.nvcc() == cub_truth.find_nvcc() == machine.find_nvcc() == exes["muh-nvcc"]
    monkeypatch.delenv("MUH_NVCC")
    assert build.nvcc() == exes["cudacxx-nvcc"]
    monkeypatch.delenv("CUDACXX")
    assert build.nvcc() == machine.find_nvcc() == exes["bin/nvcc"]
