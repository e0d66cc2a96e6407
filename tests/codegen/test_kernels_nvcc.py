"""Every generated kernel, every dtype, compiles with nvcc: the H200 (sm_90, C++17), the BI-V100
profile (warp 64, C++14, the lowest arch this nvcc accepts), and the emulation builds.

One translation unit per build (all kernels #included), the builds run in parallel: a handful of
nvcc invocations for the whole matrix. Explicit instantiation happens through the C interface's
dtype switches, so every (kernel, dtype, op) pair is compiled.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench import presets
from muh.codegen.kernels import emitter
from muh.runtime import ptxas

pytestmark = pytest.mark.nvcc


def lowest_arch(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout.split()
    nums = sorted(int(a.split("_")[1]) for a in out if a.startswith("compute_") and a.split("_")[1].isdigit())
    return f"sm_{nums[0]}"


def _unity(root):
    srcs = sorted((root / "kernels").glob("*.cu"))
    unity = root / "all_kernels.cu"
    unity.write_text("".join(f'#include "{s.relative_to(root).as_posix()}"\n' for s in srcs))
    return unity


def _compile(nvcc, root, std, arch, extra=()):
    unity = _unity(root)
    cmd = [
        nvcc,
        f"-std={std}",
        f"-arch={arch}",
        "-O1",
        "-I",
        str(root / "include"),
        "-I",
        str(root),
        *ptxas.FLAGS,
        *extra,
        "-c",
        str(unity),
        "-o",
        str(root / "all_kernels.o"),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return " ".join(cmd), r.returncode, r.stdout + r.stderr


def test_all_builds_compile(nvcc, tmp_path):
    low = lowest_arch(nvcc)
    builds = {
        "h200-sm90-c++17": (presets.h200(), "c++17", "sm_90"),
        f"bi100-warp64-c++14-{low}": (presets.bi100(), "c++14", low),
        "bi100-emu64-sm90": (presets.bi100().emulated(64), "c++17", "sm_90"),
        "bi100-emu16-sm90": (presets.bi100().emulated(16), "c++17", "sm_90"),
        "bi100-emu128-sm90": (presets.bi100().emulated(128), "c++17", "sm_90"),
    }
    jobs = []
    for name, (cfg, std, arch) in builds.items():
        root = tmp_path / name
        emitter.write(cfg, root)
        jobs.append((name, root, std, arch))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(lambda j: (j[0], *_compile(nvcc, j[1], j[2], j[3])), jobs))
    failed = [f"{name}: {cmd}\n{out[-3000:]}" for name, cmd, rc, out in results if rc]
    assert not failed, "\n\n".join(failed)
    # Spills cost speed, not correctness: only the build that is timed here (the H200's) must have none;
    # the BI-V100 profile's machine code comes from the card's own compiler, not from this nvcc.
    # The rule is muh.runtime.ptxas's, the one `muh tune` rejects variants by.
    warned = [
        f"{name}: " + "; ".join(s.describe() for s in ptxas.spills(out))
        for name, cmd, rc, out in results
        if name.startswith("h200") and ptxas.spills(out)
    ]
    assert not warned, "register spills:\n" + "\n".join(warned)


def _static_sources() -> dict[str, str]:
    """{generated path: package source} of every static CUDA header the kernels and ops emitters copy
    as they are."""
    from importlib.resources import files as res

    from muh import families
    from muh.codegen import ops

    out = {}
    for path, src, _ in emitter.files():
        family, _, file = src.rpartition(":")
        if family and not file.endswith(".j2"):  # a family's static header, from its folder
            out[path] = str(res(families.get(family).package).joinpath(file))
    out.update(
        {path: str(res(ops.PKG).joinpath("templates", src)) for path, src, _ in ops.FILES if src.endswith(".cuh")}
    )
    return out


def test_static_cuda_compiles_standalone_for_both_profiles(nvcc, tmp_path):
    """Every static .cuh (scan_tile.cuh, each family's reduce/transform/topk/histogram.cuh, the LLM ops'
    ops.cuh) is its own translation unit: the package's file, #included alone, compiles against the
    generated common layer (include/muh: warp.cuh, block.cuh, types.cuh, host.cuh, params.cuh,
    ops/ops.h) for the H200 profile (C++17, sm_90) and the BI-V100 profile (warp 64, C++14, the lowest
    arch this nvcc knows). The generated kernels/*.cu that instantiate them compile in
    test_all_builds_compile (ops.cu: test_ops.py)."""
    from importlib.resources import files as res

    from muh.codegen import ops

    statics = _static_sources()
    from muh import families

    dirs = [res("muh.codegen.kernels").joinpath("templates"), res("muh.codegen.ops").joinpath("templates")]
    dirs += [res(r.package) for r in families.records()]
    on_disk = {str(p) for d in dirs for p in d.iterdir() if p.name.endswith(".cuh")}
    assert on_disk == set(statics.values()), "a .cuh in the package that no build copies (or the reverse)"
    assert {"reduce.cuh", "transform.cuh", "topk.cuh", "histogram.cuh", "scan_tile.cuh", "ops.cuh"} <= {
        os.path.basename(p) for p in statics.values()
    }
    jobs = []
    for name, cfg, std, arch in (
        ("h200", presets.h200(), "c++17", "sm_90"),
        ("bi100", presets.bi100(), "c++14", lowest_arch(nvcc)),
    ):
        root = tmp_path / name
        emitter.write(cfg, root)
        ops.write(presets.ops(name), root, lambda prefix: f"{prefix} test")
        for path, src in sorted(statics.items()):
            tu = root / (os.path.basename(src) + ".cu")
            tu.write_text(f'#include "{src}"\n')
            jobs.append(
                [nvcc, f"-std={std}", f"-arch={arch}", "-I", str(root / "include"), "-c", str(tu), "-o", str(tu) + ".o"]
            )
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs))
    failed = [" ".join(c) + "\n" + r.stderr[-2000:] for c, r in zip(jobs, results) if r.returncode]
    assert not failed, "\n".join(failed)


def test_kernels_compile_without_torch_or_cub(tmp_path):
    """Standalone: the kernel sources include only generated headers and the CUDA toolkit's C headers."""
    emitter.write(presets.h200(), tmp_path)
    for src in (tmp_path / "kernels").glob("*.cu"):
        text = src.read_text()
        assert "torch" not in text and "<cub/" not in text and "cccl" not in text, src


def test_libraries_of_different_specs_share_no_host_state(nvcc, tmp_path):
    """Two generated libraries in one process keep their own warp-check verdict, error text and caches.

    Regression (lab run 2026-11-30): host statics lived in inline functions with default visibility,
    which GCC emits as STB_GNU_UNIQUE; the loader merges those across every library of the process
    (RTLD_LOCAL or not), so the BI-V100's native library read the H200 library's "warp size fine"
    verdict and ran 64-lane kernels on a 32-lane GPU. Now nothing is UNIQUE and the library exports
    only its C interface.
    """
    import ctypes

    cfgs = {"h200": presets.h200(), "bi100": presets.bi100()}
    libs = {}

    def build(name):
        root = tmp_path / name
        emitter.write(cfgs[name], root)
        lib = root / "libpart.so"
        srcs = [str(root / "kernels" / f) for f in ("common.cu", "reduce.cu", "histogram.cu")]
        cmd = [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            "-O1",
            "-Xcompiler",
            "-fPIC",
            "-shared",
            "-I",
            str(root / "include"),
            *srcs,
            "-o",
            str(lib),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        return lib

    with ThreadPoolExecutor(max_workers=2) as pool:
        libs = dict(zip(cfgs, pool.map(build, cfgs)))
    for name, lib in libs.items():
        syms = subprocess.run(
            ["readelf", "-sW", "--dyn-syms", str(lib)], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        unique = [s for s in syms if " UNIQUE " in s]
        assert not unique, f"{name}: process-wide merged symbols:\n" + "\n".join(unique)
        exported_muh = [
            s.split()[-1] for s in syms if (" GLOBAL " in s or " WEAK " in s) and " UND " not in s and "_ZN3muh" in s
        ]
        assert not exported_muh, f"{name}: C++ internals exported (interposable across libraries): {exported_muh[:5]}"
    a, b = (ctypes.CDLL(str(libs[n])) for n in ("h200", "bi100"))
    for lib in (a, b):
        lib.muh_last_error.restype = ctypes.c_char_p
    rc = a.muh_check_device()
    if rc:  # no GPU here: the failure text lands in the H200 library's buffer only
        assert a.muh_last_error().startswith(b"muh: ")
    assert b.muh_last_error() == b"", "the two libraries share their error buffer"
