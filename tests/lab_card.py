"""The hardware block the tests' small specs share, written once: the lab card, an H200 as CUB's
sm_90 tuning sees it (132 SMs, 32-lane warps, 48 KiB of shared memory per block, CUDA 13.0).

    from lab_card import hardware
    SPEC = "muh 1\\n\\n" + hardware() + "\\nalgorithm reduce on lab { … }\\n"

A test that pins where a diagnostic or a provenance points asks `line_col` for the place in the spec
it composed, so the number follows the card and still fails when the reported place is wrong.

Hardware blocks still written inline in tests are the syntax under test (tests/grammar, `muh fmt`,
the LSP's fuzzed buffers, tests/errors/*.muh) or another card whose facts are the point
(codegen/test_cxx_tuning.py: the BI-V100 with CoreX clang and C++14).

(tests/conftest.py puts tests/ on the import path.)
"""

from __future__ import annotations

KEYS = {
    "vendor": "nvidia",
    "arch": "hopper",
    "compute_capability": "90",
    "sm_count": "132",
    "warp_size": "32",
    "smem_per_block": "48 KiB",
    "max_threads_per_block": "1024",
}
TOOLCHAIN_KEYS = {"cuda": '"13.0"', "cxx": "17", "arch": '"sm_90"'}


def _toolchain(**keys: str) -> str:
    return "toolchain { " + "  ".join(f"{k} = {v}" for k, v in {**TOOLCHAIN_KEYS, **keys}.items()) + " }"


TOOLCHAIN = _toolchain()  # toolchain { cuda = "13.0"  cxx = 17  arch = "sm_90" }


def hardware(name: str = "lab", toolchain: dict[str, str] | None = None, **keys: str) -> str:
    """The lab card as `hardware <name> { … }` (ending in a newline); ``keys`` add or replace keys,
    each its .muh text (``cub_parity="true"``), and ``toolchain`` the toolchain's (``{"cxx": "15"}``)."""
    body = "".join(f"  {k} = {v}\n" for k, v in {**KEYS, **keys}.items())
    return f"hardware {name} {{\n{body}  {_toolchain(**(toolchain or {}))}\n}}\n"


def line_col(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """1-based (line, column) of ``needle`` (+ ``offset`` characters) in ``text``, as muh reports a
    place (file:line:col). ``needle`` must occur exactly once, so the place asked for is not a guess."""
    count = text.count(needle)
    assert count == 1, f"{needle!r} occurs {count} times in the spec; give a longer needle"
    i = text.index(needle) + offset
    return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)
