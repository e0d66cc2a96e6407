"""The `clang_cuda` check: the kernels of every clang-toolchain hardware compile with upstream clang.

The BI-V100's compiler is the CoreX SDK's clang 16 in CUDA mode (``--cuda-gpu-arch=ivcore10``,
"SM70-compat", the competition team's notes, https://github.com/dylanyunlon/project_6), which no one here has.
Upstream clang 16 in CUDA mode is the nearest compiler that exists off the card: what it rejects, the CoreX clang will
most likely reject too, and nvcc alone (EDG front end) accepts things clang does not.

For each hardware whose ``toolchain { compiler = clang }``, the freshly rendered folder of that
hardware (what `muh build` writes) is compiled with (muh.runtime.toolchain's ``syntax_check``)

    clang-16 -x cuda --cuda-gpu-arch=sm_70 -std=c++<toolchain cxx> --cuda-path=<CUDA root>
             -DMUH_WARP_SIZE=<warp> -Wall -Wextra -S  (--cuda-device-only, then --cuda-host-only)

one unit per ``kernels/*.cu`` and ``muh_kernels/*.cu`` (the ops' build_info), and one unit that
includes every header under ``include/``; any error or warning fails the check. ``-S`` emits PTX /
host assembly: no ptxas, no CUDA driver, no GPU. The torch binding (``kernels/bindings/*.cpp``)
is host C++ against PyTorch and is not part of it.

clang needs a CUDA installation it supports (clang 16: up to CUDA 11.8, with a warning that 11.8
is "partially supported", silenced here): the runtime headers, the ``crt/`` headers, libdevice and
the three cuRAND headers clang's CUDA wrapper includes. ``python -m muh.check.clang_cuda --fetch``
assembles exactly that from NVIDIA's CUDA 11.8 wheels (``WHEELS``, ~80 MB downloaded once, 5 MB
kept) under muh's cache: ``<cache>/clang-cuda/cuda-11.8``; ``$MUH_CLANG_CUDA`` names another
root, ``$MUH_CLANG`` another clang. A missing clang or root fails with the command that fixes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from muh import cache
from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext
from muh.runtime.toolchain import CLANG_PASSES, Toolchain

NAME = "clang_cuda"
CLANG = "clang-16"  # Debian's package clang-16: the CoreX SDK's clang is clang 16 (the team's notes, 003:2278)
ARCH = "sm_70"  # the CoreX target ivcore10 is "SM70-compat" (the team's notes, 003:4054)
STAND_IN = Toolchain("clang", arch=ARCH)  # how the check's clang is told the target (its C++ level is each hardware's)
CUDA_VERSION = "11.8"
# (wheel, version, {path inside the wheel: path under the CUDA root}): the minimal CUDA root clang 16
# accepts (include/ and bin/ must exist; libdevice under nvvm/libdevice; the version read from cuda.h)
WHEELS = (
    ("nvidia-cuda-runtime-cu11", "11.8.89", {"nvidia/cuda_runtime/include/": "include/"}),
    (
        "nvidia-cuda-nvcc-cu11",
        "11.8.89",
        {
            "nvidia/cuda_nvcc/include/crt/": "include/crt/",
            "nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc": "nvvm/libdevice/libdevice.10.bc",
        },
    ),
    # clang's __clang_cuda_runtime_wrapper.h includes curand_mtgp32_kernel.h, which includes these two
    (
        "nvidia-curand-cu11",
        "10.3.0.86",
        {
            f"nvidia/curand/include/{h}": f"include/{h}"
            for h in ("curand_mtgp32_kernel.h", "curand.h", "curand_mtgp32.h")
        },
    ),
)
PASSES = CLANG_PASSES
FETCH = f"{Path(sys.executable).name} -m muh.check.clang_cuda --fetch"


class Missing(Exception):
    """A tool or the CUDA root is missing; the message names the fix."""


def find_clang() -> str:
    """``$MUH_CLANG``, else ``clang-16`` on PATH."""
    want = os.environ.get("MUH_CLANG") or CLANG
    found = shutil.which(want)
    if not found:
        raise Missing(
            f"{want} not found: install it (Debian/Ubuntu: `apt-get install -y clang-16`) "
            "or set $MUH_CLANG to a clang 16 binary"
        )
    return found


def default_root() -> Path:
    return cache.root() / "clang-cuda" / f"cuda-{CUDA_VERSION}"


def cuda_root() -> Path:
    """The CUDA root for clang: ``$MUH_CLANG_CUDA``, else the one ``--fetch`` assembled."""
    root = Path(os.environ.get("MUH_CLANG_CUDA") or default_root())
    need = [
        root / "include" / "cuda_runtime.h",
        root / "include" / "crt" / "host_defines.h",
        root / "include" / "curand_mtgp32_kernel.h",
        root / "nvvm" / "libdevice" / "libdevice.10.bc",
    ]
    missing = [str(p.relative_to(root)) for p in need if not p.is_file()]
    if missing or not (root / "bin").is_dir():
        raise Missing(
            f"no CUDA {CUDA_VERSION} headers for clang in {root} (missing: "
            f"{', '.join(missing) or 'bin/'}): run `{FETCH}` (downloads NVIDIA's CUDA {CUDA_VERSION} "
            "wheels once) or set $MUH_CLANG_CUDA to a CUDA installation clang 16 supports"
        )
    return root


def fetch(dest: Path | None = None, timeout: int = 900) -> Path:
    """Assemble the CUDA root for clang from ``WHEELS`` (pip download, no install) under ``dest``."""
    dest = Path(dest or default_root())
    with tempfile.TemporaryDirectory(prefix="muh-clang-cuda-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--platform",
            "manylinux2014_x86_64",
            "-d",
            tmp,
            *(f"{w}=={v}" for w, v, _ in WHEELS),
        ]
        subprocess.run(cmd, check=True, timeout=timeout, capture_output=True)
        staged = Path(tmp) / "root"
        provenance = {}
        for wheel, version, members in WHEELS:
            whl = next(Path(tmp).glob(f"{wheel.replace('-', '_')}-{version}-*.whl"))
            provenance[whl.name] = hashlib.sha256(whl.read_bytes()).hexdigest()
            with zipfile.ZipFile(whl) as z:
                for name in z.namelist():
                    for src, dst in members.items():
                        if name == src or (src.endswith("/") and name.startswith(src) and not name.endswith("/")):
                            if name.endswith("__init__.py"):
                                continue
                            target = staged / (dst + name[len(src) :] if src.endswith("/") else dst)
                            target.parent.mkdir(parents=True, exist_ok=True)
                            target.write_bytes(z.read(name))
        (staged / "bin").mkdir(exist_ok=True)  # clang requires the folder; nothing in it is run
        (staged / "muh-clang-cuda.json").write_text(
            json.dumps({"cuda": CUDA_VERSION, "wheels": provenance}, indent=1, sort_keys=True) + "\n"
        )
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staged), str(dest))
    return dest


def clang_version(clang: str) -> str:
    out = subprocess.run([clang, "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.splitlines()[0].strip() if out else "?"


@dataclass(frozen=True)
class Unit:
    name: str  # shown: the source (or "include/*") and the pass
    source: str  # relative to the hardware's folder
    flags: tuple[str, ...]


def sources(files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(translation units, headers) of one hardware's folder (paths relative to it)."""
    units = sorted(p for p in files if p.endswith(".cu") and (p.startswith("kernels/") or p.startswith("muh_kernels/")))
    headers = sorted(p for p in files if p.startswith("include/") and p.endswith((".cuh", ".h")))
    return units, headers


def folders(ctx: BuildContext) -> list[tuple[str, object, dict[str, str]]]:
    """(prefix, Hardware, {path relative to the prefix: content}) of every clang-toolchain hardware."""
    from muh.pipeline import Loaded, render

    clang = [(t.prefix, t.hardware) for t in ctx.derived.kernels.native() if t.hardware.toolchain.compiler == "clang"]
    if not clang:
        return []
    rendered = {
        f.path: f.content
        for f in render(
            Loaded(ctx.spec, ctx.derived, ""), {k: v for k, v in ctx.options.items() if k != "generated_root"}
        )
    }
    return [
        (prefix, hw, {p[len(prefix) :]: c for p, c in rendered.items() if p.startswith(prefix)}) for prefix, hw in clang
    ]


def compile_folder(clang: str, root: Path, files: dict[str, str], cxx: int, warp: int) -> list[tuple[Unit, bool, str]]:
    """Compile one hardware's folder; (unit, ok, compiler output) per unit, in parallel."""
    units, headers = sources(files)
    with tempfile.TemporaryDirectory(prefix="muh-clang-") as tmp:
        work = Path(tmp)
        for rel, text in files.items():
            if rel.startswith(("include/", "kernels/", "muh_kernels/")):
                (work / rel).parent.mkdir(parents=True, exist_ok=True)
                (work / rel).write_text(text, encoding="utf-8")
        (work / "all_headers.cu").write_text(
            "// every generated header, one unit\n" + "".join(f'#include "{h[len("include/") :]}"\n' for h in headers),
            encoding="utf-8",
        )
        todo = [Unit(f"{src} {mode[2:]}", src, (mode,)) for src in [*units, "all_headers.cu"] for mode in PASSES]
        tc = Toolchain("clang", cxx, ARCH, warp)
        base = [clang, *tc.syntax_check(str(root)), "-I", str(work / "include")]
        procs = []
        for i, u in enumerate(todo):
            cmd = [*base, *u.flags, str(work / u.source), "-o", str(work / f"unit{i}.s")]
            procs.append((u, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
        out = []
        for u, p in procs:
            text, _ = p.communicate(timeout=900)
            text = text.replace(tmp + "/", "")
            out.append((u, p.returncode == 0 and not re.search(r"\b(warning|error):", text), text))
    return out


@register(NAME)
def check_clang_cuda(ctx: BuildContext) -> CheckResult:
    """`muh check SPEC --only clang_cuda`."""
    targets = folders(ctx)
    if not targets:
        return CheckResult(NAME, "skip", "no hardware with `toolchain { compiler = clang }` has kernels in this spec")
    try:
        clang, root = find_clang(), cuda_root()
    except Missing as e:  # a tool the target alone needs: said, never a block for deploy (`--strict` fails it)
        return CheckResult(NAME, "skip", f"skipped: not installed: {e}")
    lines, failed, total = [f"{clang_version(clang)}; CUDA headers {root}"], [], 0
    for prefix, hw, files in targets:
        for unit, ok, text in compile_folder(clang, root, files, hw.toolchain.cxx, hw.warp_size):
            total += 1
            label = f"{prefix}{unit.name}"
            lines.append(f"{label}: {'ok' if ok else 'FAILED'}")
            if not ok:
                failed.append(label)
                lines += [f"  {line}" for line in text.strip().splitlines()[:40]]
    names = ", ".join(hw.name for _, hw, _ in targets)
    if failed:
        return CheckResult(
            NAME,
            "fail",
            f"{len(failed)} of {total} units failed with clang ({names}): "
            f"{', '.join(failed[:6])}{' …' if len(failed) > 6 else ''}",
            lines,
        )
    how = " ".join((Path(clang).name, *STAND_IN.language, *STAND_IN.arch_flags()))
    return CheckResult(
        NAME,
        "pass",
        f"{total} units compile with {how} ({names}: kernels, ops, every header; device and host; no warnings)",
        lines,
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m muh.check.clang_cuda", description="the CUDA root the clang_cuda check compiles against"
    )
    ap.add_argument("--fetch", action="store_true", help="assemble it under muh's cache from NVIDIA's CUDA wheels")
    ap.add_argument("--dest", type=Path, default=None, help=f"where (default: {default_root()})")
    args = ap.parse_args(argv)
    if args.fetch:
        try:
            where = fetch(args.dest)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError, StopIteration) as e:
            detail = getattr(e, "stderr", b"") or b""
            print(
                f"error: could not assemble the CUDA root: {e} {detail.decode(errors='replace')[-600:]}",
                file=sys.stderr,
            )
            return 1
        print(where)
        return 0
    try:
        print(cuda_root())
    except Missing as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
