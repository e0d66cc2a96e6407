"""The `warp_smem` check: no generated kernel of a clang-toolchain hardware orders shared memory by a
warp barrier alone.

Measured on the BI-V100 (the competition team's kernel notes, https://github.com/dylanyunlon/project_6):
``__syncwarp()`` does not make shared-memory writes visible to the warp; with the CoreX clang and ``#pragma unroll``
the reads are hoisted into registers (a tree sum gave 32.0 instead of 128.0); a ``volatile`` pointer fixes it.
muh's kernels exchange data within a warp by shuffles (``muh::warp``), and order shared memory with
block barriers. This check holds them to it, syntactically, over the freshly rendered folder of
every ``toolchain { compiler = clang }`` hardware (headers and kernels, comments stripped):

* every warp-barrier call (``__syncwarp(``, ``warp::barrier(``) is found, with the function it is in;
* in that function, a ``__shared__`` variable declared without ``volatile`` and named again after the
  call is a finding (file:line of the use and of the barrier): read it through a ``volatile`` pointer,
  or exchange the value by shuffles.

What it cannot see: shared memory reached through a pointer the function was given, or through a
non-volatile pointer taken before the barrier. It is a guard against the measured pattern, not a
proof; every call site is listed with ``muh check -v``.
"""

from __future__ import annotations

import re

from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext

NAME = "warp_smem"
BARRIER = re.compile(r"(?<![\w:])(?:__syncwarp|(?:muh::)?warp::barrier)\s*\(")
SHARED = re.compile(r"\b__shared__\b(?P<decl>[^;{}()]*?)\b(?P<name>[A-Za-z_]\w*)\s*(?:\[[^;]*\])?\s*(?:;|=)")
_SCOPE = re.compile(r"\b(namespace|struct|class|union|enum)\b[^;{}()]*$|extern\s+\"C\"\s*$")
_NAME = re.compile(r"([A-Za-z_]\w*)\s*\([^;{}]*\)[^;{}()]*$")


def strip(text: str) -> str:
    """Comments and string / character literals blanked (same length, newlines kept)."""

    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text, flags=re.S)


def functions(code: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every function body: a brace block whose parent is a namespace, a
    class-like scope or the file (not a block inside another function)."""
    out, stack = [], []  # stack entries: (position, kind) with kind "scope" | "body" | "block"
    last = 0
    for m in re.finditer(r"[{};]", code):
        ch, pos = m.group(0), m.start()
        if ch == "{":
            head = code[last:pos]
            inside_body = any(k != "scope" for _, k, _ in stack)
            if inside_body:
                kind, name = "block", ""
            elif _SCOPE.search(head):
                kind, name = "scope", ""
            else:
                found = _NAME.search(head)
                kind, name = "body", found.group(1) if found else "?"
            stack.append((pos, kind, name))
        elif ch == "}" and stack:
            start, kind, name = stack.pop()
            if kind == "body":
                out.append((start, pos, name))
        last = pos + 1
    return out


def findings(path: str, text: str) -> tuple[list[str], list[str]]:
    """(call sites, findings) in one file."""
    code = strip(text)

    def line(pos: int) -> int:
        return code.count("\n", 0, pos) + 1

    sites, bad = [], []
    bodies = functions(code)
    for call in BARRIER.finditer(code):
        body = next(((s, e, n) for s, e, n in bodies if s < call.start() < e), None)
        if body is None:
            continue
        start, end, fname = body
        shared = [m for m in SHARED.finditer(code, start, end) if "volatile" not in m.group("decl")]
        uses = [
            (m.group("name"), u.start())
            for m in shared
            for u in re.finditer(rf"\b{re.escape(m.group('name'))}\b", code[call.end() : end])
        ]
        sites.append(
            f"{path}:{line(call.start())}: warp barrier in `{fname}` "
            f"({len(shared)} non-volatile __shared__ variable(s) in the function)"
        )
        for name, offset in uses:
            bad.append(
                f"{path}:{line(call.end() + offset)}: `{name}` (__shared__, not volatile) is used after the "
                f"warp barrier at line {line(call.start())} in `{fname}`: on the BI-V100 __syncwarp does not "
                "order shared memory (the team's notes, 003:3738-3744); read it through a volatile pointer "
                "or use shuffles"
            )
    return sites, bad


def scan(files: dict[str, str]) -> tuple[list[str], list[str]]:
    sites, bad = [], []
    for path in sorted(files):
        if path.endswith((".cu", ".cuh", ".h")) and BARRIER.search(files[path]):
            s, b = findings(path, files[path])
            sites += s
            bad += b
    return sites, bad


@register(NAME)
def check_warp_smem(ctx: BuildContext) -> CheckResult:
    from muh.check.clang_cuda import folders

    targets = folders(ctx)
    if not targets:
        return CheckResult(NAME, "skip", "no hardware with `toolchain { compiler = clang }` has kernels in this spec")
    sites, bad = [], []
    for prefix, _hw, files in targets:
        s, b = scan({prefix + p: c for p, c in files.items() if p.startswith(("include/", "kernels/"))})
        sites += s
        bad += b
    if bad:
        return CheckResult(NAME, "fail", f"{len(bad)} shared-memory use(s) ordered only by a warp barrier", bad + sites)
    return CheckResult(
        NAME, "pass", f"{len(sites)} warp-barrier call site(s); no shared memory ordered by one alone", sites
    )
