"""The no-spill rule: which functions of a compile spill registers to local memory, read from ptxas's report.

A kernel that spills is refused for the H200 build (tests/codegen/test_kernels_nvcc.py) and by
`muh tune` (the variant is rejected before it is timed), both through :data:`FLAGS` and :func:`spills`.
``-Xptxas -v`` prints every function's ``N bytes spill stores, M bytes spill loads`` — also under
nvcc's ``-w``, which silences ``-Xptxas -warn-spills``'s warnings — so both forms are read.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .toolchain import PTXAS_VERBOSE

FLAGS = PTXAS_VERBOSE  # ptxas reports each function's spill stores and loads (the toolchain spells it)

_PROPS = re.compile(r"^ptxas info\s*:\s*Function properties for (\S+)\s*$")
_COUNTS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_WARN = re.compile(
    r"Registers are spilled to local memory in function '([^']+)', (\d+) bytes spill stores, "
    r"(\d+) bytes spill loads"
)


@dataclass(frozen=True)
class Spill:
    function: str  # the mangled name ptxas reports
    stores: int  # bytes
    loads: int  # bytes
    name: str = ""  # the demangled name, where known

    def describe(self) -> str:
        return f"{self.name or self.function}: {self.stores} bytes spill stores, {self.loads} bytes spill loads"


def spills(log: str) -> list[Spill]:
    """Every function of ``log`` (nvcc's output with :data:`FLAGS` or ``-Xptxas -warn-spills``) that spills,
    once each (the largest report where a function is compiled more than once)."""
    found: dict[str, Spill] = {}
    fn = None
    for line in log.splitlines():
        m = _PROPS.match(line.strip())
        if m:
            fn = m.group(1)
            continue
        w = _WARN.search(line)
        if w:
            fn, stores, loads = w.group(1), int(w.group(2)), int(w.group(3))
        else:
            c = _COUNTS.search(line)
            if c is None:
                continue
            fn = fn or "?"  # a count without its function's line still breaks the rule
            stores, loads = int(c.group(1)), int(c.group(2))
        if stores or loads:
            old = found.get(fn)
            if old is None or stores + loads > old.stores + old.loads:
                found[fn] = Spill(fn, stores, loads)
        fn = None
    return list(found.values())


def quiet(log: str) -> str:
    """``log`` without ptxas's per-function report (what is left: the compiler's diagnostics)."""
    out, skip = [], False
    for line in log.splitlines():
        if line.startswith("ptxas info"):
            skip = "Function properties for" in line
            continue
        if skip and _COUNTS.search(line):
            skip = False
            continue
        skip = False
        out.append(line)
    return "\n".join(out)


def demangle(names: list[str], nvcc: str = "nvcc") -> dict[str, str]:
    """{mangled: readable} through the toolkit's cu++filt (or c++filt); a name stays as it is without one."""
    beside = Path(shutil.which(nvcc) or nvcc).parent / "cu++filt"
    tool = str(beside) if beside.exists() else shutil.which("cu++filt") or shutil.which("c++filt")
    if not names or tool is None:
        return {n: n for n in names}
    try:
        res = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=30)
        lines = res.stdout.splitlines() if res.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        lines = []
    if len(lines) != len(names):
        return {n: n for n in names}
    return dict(zip(names, lines))
