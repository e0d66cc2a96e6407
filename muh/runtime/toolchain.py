"""How muh invokes a CUDA compiler: the one owner of every compiler flag muh passes.

Two compiler classes exist: ``nvcc`` (NVIDIA's driver) and ``clang`` (clang in CUDA mode,
``-x cuda``: the BI-V100's CoreX SDK clang++, and upstream clang for the ``clang_cuda`` check). A
:class:`Toolchain` is one hardware's choice of class, C++ level (the spec's ``toolchain { cxx }``),
target architecture and warp size (:meth:`Toolchain.of` reads them from a spec's hardware block);
each method names a purpose and returns the arguments for it:

====================  ===================================================================
``shared_library``    the LLM ops' ``libmuh_ops.so`` (muh_kernels --build in the image, the lab's ``llm.build``)
``objects``/``link``  the kernels' C-interface library, one object per source (``build.build_capi``)
``program``           a whole CUDA program for the card (the probe; its build script adds the arch)
``tune_unit``         a ``muh tune`` unit (nvcc; ptxas's report read for the no-spill rule)
``syntax_check``      one unit's device or host pass to assembly (the ``clang_cuda`` check)
``header_object``     a translation unit of headers to an object (the ``tuning_headers`` check)
``host_program``      a host program (CUB's ground truth) and its header list (``dependencies``)
====================  ===================================================================

Where the compiler is: :func:`find_nvcc` in the lab (the runtime's builds, ``muh tune``, the checks),
:data:`IMAGE_COMPILERS` in the serving image (``muh_kernels --build`` and the probe's ``build.sh``
render them). ``{sdk}`` in an argument is the toolchain's root (the folder above the compiler's ``bin/``), filled
in where the compiler is found. Standard library only: the runtime stands alone, and this module
ships inside the serving image's ``muh_kernels`` package.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Literal

Compiler = Literal["nvcc", "clang"]
COMPILERS: tuple[Compiler, ...] = ("nvcc", "clang")

# CCCL's headers, and muh's tuning headers after them, declare themselves system headers (no warnings shown)
# unless this is defined (CCCL tests with it: github.com/NVIDIA/cccl,
# libcudacxx/include/cuda/std/__cccl/system_header.h)
NO_SYSTEM_HEADER = "_CCCL_NO_SYSTEM_HEADER"
PTXAS_VERBOSE = ("-Xptxas", "-v")  # ptxas reports each function's spill stores and loads (muh.runtime.ptxas)
WARP_DEFINE = "MUH_WARP_SIZE"  # the macro the generated warp layer and build_info.cu compare with their own
TUNE_MIN_CXX = 14  # the tune harness is C++14 (a C++11 spec still tunes at 14)
LAB_CXX = 17  # the lab's default level (the runtime's builds on NVIDIA GPUs)
SDK = "{sdk}"  # placeholder for the toolchain's root
CLANG_PASSES = ("--cuda-device-only", "--cuda-host-only")  # clang's device and host sides, one at a time

# torch.utils.cpp_extension builds: the kernels' extension (host and CUDA cflags) and the ops' binding,
# which keeps PyTorch's own C++ level (another one than its headers were released for is an ABI mismatch)
TORCH_KERNELS_CFLAGS = ("-O3", f"-std=c++{LAB_CXX}")
TORCH_BINDING_CFLAGS = ("-O2",)


# Where the serving image looks for each class's compiler after $MUH_CUDA_COMPILER (muh_kernels --build, the
# probe's build.sh): a bare name on PATH, "$VAR/..." only where VAR is set; clang: the CUDA SDK's own clang++
IMAGE_COMPILERS: dict[str, tuple[str, ...]] = {
    "nvcc": ("nvcc", "$CUDA_HOME/bin/nvcc", "$CUDA_PATH/bin/nvcc", "/usr/local/cuda/bin/nvcc"),
    "clang": (
        "$COREX_HOME/bin/clang++",
        "$CUDA_PATH/bin/clang++",
        "$CUDA_HOME/bin/clang++",
        "/usr/local/corex/bin/clang++",
    ),
}
NVCC_ENV = ("MUH_NVCC", "CUDACXX")  # the lab's nvcc, named explicitly (before PATH and /usr/local/cuda/bin)


def find_nvcc() -> str | None:
    """The lab's nvcc (the runtime's builds, `muh tune`, the checks): ``$MUH_NVCC``, ``$CUDACXX``, ``nvcc`` on
    PATH, then ``/usr/local/cuda/bin/nvcc``; None when there is none."""
    for env in NVCC_ENV:
        found = shutil.which(os.environ[env]) if os.environ.get(env) else None
        if found:
            return found
    return shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")


# __cplusplus for each C++ level `toolchain { cxx }` names (what a compile at -std=c++N reports)
CPLUSPLUS = {11: 201103, 14: 201402, 17: 201703, 20: 202002}


def cplusplus_range(cxx: int) -> tuple[int, int]:
    """[lo, hi) of ``__cplusplus`` under ``-std=c++<cxx>`` (hi: the next level's value)."""
    later = [CPLUSPLUS[c] for c in sorted(CPLUSPLUS) if c > cxx]
    return CPLUSPLUS[cxx], (later[0] if later else 999999)


@dataclass(frozen=True)
class Command:
    """A compiler's arguments for one purpose: ``flags`` before ``-I … -o OUT SOURCES``, ``link`` after."""

    flags: tuple[str, ...]
    link: tuple[str, ...] = ()


@dataclass(frozen=True)
class Toolchain:
    compiler: Compiler = "nvcc"
    cxx: int = LAB_CXX  # the C++ level (``toolchain { cxx }``)
    arch: str | None = None  # the target architecture (sm_90, ivcore10); None: the compiler's default
    warp_size: int | None = None  # defined as WARP_DEFINE where set

    def __post_init__(self) -> None:
        if self.compiler not in COMPILERS:
            raise ValueError(f"unknown CUDA compiler class {self.compiler!r} (one of {', '.join(COMPILERS)})")

    @classmethod
    def of(cls, hw) -> Toolchain:
        """A spec's hardware block's toolchain: its ``toolchain { compiler, cxx, arch }`` and warp size;
        the arch is ``toolchain { arch }``, else ``sm_<compute_capability>``, else none."""
        tc = hw.toolchain
        arch = tc.arch or (f"sm_{hw.compute_capability}" if hw.compute_capability else None)
        return cls(tc.compiler, tc.cxx, arch, hw.warp_size)

    @classmethod
    def lab(cls, arch: str | None, std: str = f"c++{LAB_CXX}") -> Toolchain:
        """nvcc for a lab GPU (the runtime's own builds), ``std`` spelled as ``-std=`` takes it ("c++17")."""
        return cls("nvcc", int(std.removeprefix("c++")), arch)

    # ---- the parts ------------------------------------------------------------------------------
    @property
    def std(self) -> str:
        return f"-std=c++{self.cxx}"

    @property
    def arch_prefix(self) -> str:
        """How this class spells the target architecture (the argument is the prefix + the name)."""
        return "--cuda-gpu-arch=" if self.compiler == "clang" else "-arch="

    def arch_flags(self) -> tuple[str, ...]:
        return (self.arch_prefix + self.arch,) if self.arch else ()

    @property
    def language(self) -> tuple[str, ...]:
        """Treat the sources as CUDA whatever their names."""
        return ("-x", "cuda") if self.compiler == "clang" else ("-x", "cu")

    @property
    def pic(self) -> tuple[str, ...]:
        """Position-independent host code (nvcc hands it to the host compiler)."""
        return ("-fPIC",) if self.compiler == "clang" else ("-Xcompiler", "-fPIC")

    warp_flag = f"-D{WARP_DEFINE}"  # the define's spelling (messages name it)

    def warp_define(self) -> tuple[str, ...]:
        return (f"{self.warp_flag}={self.warp_size}",) if self.warp_size is not None else ()

    def _cuda_path(self, root: str = SDK) -> tuple[str, ...]:
        return (f"--cuda-path={root}",) if self.compiler == "clang" else ()

    @property
    def candidates(self) -> tuple[str, ...]:
        """Where the serving image looks for this class's compiler (:data:`IMAGE_COMPILERS`)."""
        return IMAGE_COMPILERS[self.compiler]

    def runtime_link(self) -> tuple[str, ...]:
        """After the sources: the CUDA runtime (nvcc links it itself; clang needs the SDK's)."""
        return (f"-L{SDK}/lib64", "-lcudart", f"-Wl,-rpath,{SDK}/lib64") if self.compiler == "clang" else ()

    # ---- the purposes ---------------------------------------------------------------------------
    def objects(self) -> tuple[str, ...]:
        """One source to one object of a shared library (with ``-c``), optimised, with line info on nvcc."""
        if self.compiler == "clang":
            return (*self.language, *self._cuda_path(), *self.arch_flags(), "-O3", self.std, *self.pic)
        return ("-O3", self.std, *self.arch_flags(), *self.pic, "-lineinfo")

    def link(self) -> tuple[str, ...]:
        """The objects of :meth:`objects` into one shared library (before ``-o OUT OBJECTS``)."""
        return (*self.arch_flags(), "-shared")

    def shared_library(self) -> Command:
        """Sources straight to one shared library (the LLM ops' ``libmuh_ops.so``)."""
        return Command((*self.objects(), "-shared", *self.warp_define()), self.runtime_link())

    def program(self) -> Command:
        """A whole program for the card without its arch (the probe's build script adds
        :attr:`arch_prefix` + the arch it is given), linked with the CUDA runtime."""
        flags = (*self.language, *self._cuda_path()) if self.compiler == "clang" else ()
        return Command((*flags, "-O3", self.std, *self.warp_define()), self.runtime_link())

    def tune_unit(self) -> tuple[str, ...]:
        """A tune unit for an NVIDIA GPU (nvcc; at least C++14, warnings off, ptxas's report on; an arch
        other than ``sm_*`` is left to nvcc's default)."""
        args = ("-O3", f"-std=c++{max(TUNE_MIN_CXX, self.cxx)}", "-lineinfo", "-w", *PTXAS_VERBOSE)
        return (*args, f"-arch={self.arch}") if self.arch and self.arch.startswith("sm_") else args

    def syntax_check(self, cuda_root: str) -> tuple[str, ...]:
        """One unit to assembly with every warning (``-S``; add one of :data:`CLANG_PASSES`): clang in
        CUDA mode against the CUDA headers under ``cuda_root``."""
        if self.compiler != "clang":
            raise ValueError("syntax_check is clang's (-x cuda) pass")
        return (
            *self.language,
            *self.arch_flags(),
            "-Wno-unknown-cuda-version",
            "-Wall",
            "-Wextra",
            "-S",
            self.std,
            *self._cuda_path(cuda_root),
            *self.warp_define(),
        )

    def header_object(self) -> tuple[str, ...]:
        """A translation unit of headers to an object (with ``-o``): does it compile at this C++ level, without
        a warning (an overflowing literal is a warning, not an error, to C++ compilers: it must fail here)?"""
        return (self.std, *self.language, *self.werror, f"-D{NO_SYSTEM_HEADER}", "-c")

    @property
    def werror(self) -> tuple[str, ...]:
        """Every warning an error: nvcc's own and its front end's (``-Werror all-warnings``) and the host compiler's."""
        return ("-Werror",) if self.compiler == "clang" else ("-Werror", "all-warnings", "-Xcompiler", "-Werror")

    def host_program(self) -> tuple[str, ...]:
        """A host program (before ``SOURCE -o EXE``) at this level."""
        return (self.std, *self.language)

    def dependencies(self) -> tuple[str, ...]:
        """The headers a source includes, as this compiler resolves them (before ``SOURCE``)."""
        return (*self.host_program(), "-M")


HOST = Toolchain("nvcc", LAB_CXX)  # nvcc's host programs and header lists (CUB's ground truth)
