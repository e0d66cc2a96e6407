"""The C++ of a tune unit: muh's harness (templates/harness.cu.j2) around the variants' code, for muh's
kernels (muh/tune/unit.py) and CUB's candidates (muh/tune/cub.py) alike."""

from __future__ import annotations

import posixpath
import re

from muh.runtime import dtypes as DT

#: A local include of generated C++ (``#include "muh/x.cuh"``, a trailing // comment allowed): what a unit inlines.
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*(//.*)?$', re.M)


class UnitError(ValueError):
    """A tune unit cannot be made (no kernels or harness for the family, a header the build did not write)."""


def inline(path: str, files: dict[str, str], done: set[str]) -> str:
    """``files[path]`` (a build's files by relative path) with its quote includes expanded once — each looked up
    beside the including file, then under ``include/``, then as written — and ``#pragma once`` dropped: the
    variant's copy of what `muh build` wrote, for one translation unit."""
    if path in done:
        return ""
    done.add(path)
    out = []
    for line in files[path].splitlines():
        m = INCLUDE.match(line)
        if m:
            name = m.group(1)
            near = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            target = next((p for p in (near, f"include/{name}", name) if p in files), None)
            if target is None:
                raise UnitError(f"{path}: the build wrote no {name}")
            out.append(inline(target, files, done))
        elif line.strip() != "#pragma once":
            out.append(line)
    return "\n".join(out)


def harness_source(
    family: str, dtype: str, variants, code: str, sizes, check: tuple, rel_tol: float, api, family_code: str, spin: int
) -> str:
    """The unit's C++: muh's harness (templates/harness.cu.j2) around the variants' ``code``, driving them
    through the C functions ``api`` with the family's fragment ``family_code``; muh's kernels and CUB's
    candidates (muh/tune/cub.py) alike."""
    from muh.codegen.templates import render

    return render(
        "muh.tune",
        "harness.cu.j2",
        family=family,
        dtype=dtype,
        storage=DT.TABLE[dtype].storage,
        dtype_code=DT.CODE[dtype],
        is_float=DT.TABLE[dtype].is_float,
        is_unsigned=DT.TABLE[dtype].kind == "uint",
        variants=[{"label": v.label, "sym": f"muh_v{v.index}"} for v in variants],
        variant_code=code,
        sizes=sizes,
        check_n=check[0],
        check_small=check[1],
        rel_tol=rel_tol,
        api=[
            {"field": f.name[len("muh_") :], "ret": f.ret, "types": ", ".join(t for t, _ in f.args) or "void"}
            for f in api
        ],
        family_code=family_code,
        spin_cycles=spin,
    )
