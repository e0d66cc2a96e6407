"""Compile units: muh's generated kernels rendered per variant, several variants per translation unit.

A variant's kernel source is exactly what `muh build` generates (muh.codegen.kernels) for a config
whose policy of the tuned type is the variant's effective policy. To put several variants into one
translation unit, each variant's files are inlined (quote includes expanded once, in include order)
under ``#define muh muh_v<i>`` and ``#define muh_<fn> muh_v<i>_<fn>`` for every function of the C
interface, so each variant lives in its own namespace with its own C symbols. The harness
(templates/harness.cu.j2) then drives them through the C interface, index 0 being the base.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from muh import families
from muh.runtime import dtypes as DT
from muh.schema.models import Hardware
from muh.tune.harness import UnitError, harness_source, inline
from muh.tune.space import Effective

TOPK_COLS, TOPK_K = families.get("topk").harness.shape  # the top-k problem unless --topk-shape says
SPIN_CYCLES = 100_000  # ~50 µs at 2 GHz: longer than the host's launch overhead


def kernel_config(eff: Effective, hw: Hardware):
    """The kernels' config with only ``eff``'s family and type set: derive's hardware config and the
    family record's policy read from the candidate's values (what `muh build` does for a spec)."""
    from muh.derive.kernels import hardware_config, read_policy

    if _is_ops(eff.family):  # the ops' numbers live in their own files (ops_target); the common layer only
        return hardware_config(hw)
    if eff.family not in families.NAMES:
        raise UnitError(f"no kernels for `{eff.family}`")
    pol = read_policy(eff.family, eff.get, f"{eff.family}.{eff.dtype}", eff.subs)
    return hardware_config(hw).with_policies(eff.family, {eff.dtype: pol})


def _is_ops(family: str) -> bool:
    return family in families.OPS


def ops_target(eff: Effective, hw: Hardware):
    """The LLM ops of ``eff``'s element type with the candidate's numbers (muh/derive/ops.py): what
    `muh build` renders into kernels/ops.cu for a spec holding this policy."""
    from muh.derive.ops import tune_target

    return tune_target(hw, eff.family, eff.dtype, dict(eff.values))


def emitter_reasons(eff: Effective, hw: Hardware) -> list[str]:
    """The kernel emitter's own reasons to refuse this variant (static filter, no compiler)."""
    from muh.families.registry import validate

    if eff.implementation == "cub":  # CUB's kernels on the candidate's hub
        from muh.tune import cub

        return cub.emitter_reasons(eff, hw)
    if eff.dtype not in families.get(eff.family).dtypes:
        return [f"the {eff.family} kernels are not generated for {eff.dtype}"]
    try:
        if _is_ops(eff.family):
            from muh.derive.kernels import hardware_config, read_policy

            rec = families.get(eff.family)
            pol = read_policy(eff.family, eff.get, f"{eff.family}.{eff.dtype}", eff.subs)
            return rec.checks(hardware_config(hw), eff.dtype, pol) + ops_target(eff, hw).errors()
        return validate(kernel_config(eff, hw))
    except (TypeError, ValueError, KeyError) as err:
        return [str(err)]


def render_files(eff: Effective, hw: Hardware, tag: str = "") -> dict[str, str]:
    from muh.codegen.kernels import generate

    cfg = kernel_config(eff, hw)
    header = lambda prefix: f"{prefix} muh tune: {eff.family} {eff.dtype} {tag}".rstrip()  # noqa: E731
    try:
        files = generate(cfg, header)
        if _is_ops(eff.family):  # the ops files of this one element type, over the common layer
            from muh.codegen import ops

            files = files + ops.generate(ops_target(eff, hw), header)
    except ValueError as err:
        raise UnitError(str(err)) from None
    return dict(files)


def source_hash(eff: Effective, hw: Hardware) -> str:
    """Hash of exactly what the variant compiles from: its inlined kernel code, the harness, the family's
    harness fragment (and the templates it includes), the element type's row of the dtype table (the
    harness's storage type and conversions) and the nvcc flags — which carry the no-spill rule's (muh.runtime.ptxas),
    so a trial
    timed before the rule, perhaps of a kernel that spills, is never taken from the database.

    Only the files the unit includes count, so a change to another family's template does not
    invalidate this family's measurements."""
    from importlib.resources import files as res

    if eff.implementation == "cub":
        from muh.tune import cub

        return cub.source_hash(eff, hw, nvcc_args(hw))
    h = hashlib.sha256()
    h.update(variant_code(0, eff, hw, "").encode())
    h.update(res("muh.tune").joinpath("templates/harness.cu.j2").read_bytes())
    h.update(repr(DT.TABLE[eff.dtype]).encode())  # the harness's storage type and conversions come from this row
    for text in fragment_sources(eff.family):
        h.update(text)
    h.update("\0".join(nvcc_args(hw)).encode())
    return h.hexdigest()[:16]


_J2_INCLUDE = re.compile(r'\{%-?\s*include\s+"([^"]+)"')


def harness_search(family: str) -> tuple[tuple[str, str], ...]:
    """Where a family's harness fragment and what it includes are found: its folder, then the shared
    fragments (muh/families/templates/)."""
    return ((families.get(family).package, ""), ("muh.families", "templates"))


def fragment_sources(family: str) -> list[bytes]:
    """A family's harness fragment and every template it includes (transitively), as bytes."""
    from importlib.resources import files as res

    out, todo, seen = [], [harness_of(family).template], set()
    search = harness_search(family)
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        found = [res(p).joinpath(s, name) if s else res(p).joinpath(name) for p, s in search]
        data = next(f for f in found if f.is_file()).read_bytes()
        out.append(data)
        todo += _J2_INCLUDE.findall(data.decode())
    return out


_API_FN = re.compile(r"\b(muh_[a-z0-9_]+)\s*\(")


def variant_code(index: int, eff: Effective, hw: Hardware, label: str) -> str:
    files = render_files(eff, hw, f"v{index} {label}")
    api = files.get("include/muh/kernels/api.h", "") + files.get("include/muh/ops/ops.h", "")
    names = sorted(set(_API_FN.findall(api)))
    sym = f"muh_v{index}"
    head = [f"// ---- variant {index}: {label} ----", f"#define muh {sym}"]
    head += [f"#define {n} {sym}_{n[4:]}" for n in names]
    done: set[str] = set()
    source = "kernels/ops.cu" if _is_ops(eff.family) else families.get(eff.family).source
    body = [inline("kernels/common.cu", files, done), inline(source, files, done)]
    tail = ["#undef muh"] + [f"#undef {n}" for n in names]
    return "\n".join(head + body + tail) + "\n"


@dataclass(frozen=True)
class UnitVariant:
    index: int
    label: str
    eff: Effective


def harness_of(family: str):
    """The family record's harness part (UnitError when `muh tune` has none for it)."""
    if (rec := families.find(family)) is None or rec.harness is None:
        raise UnitError(f"`muh tune` has no measurement harness for `{family}`")
    return rec.harness


def render_unit(
    family: str, dtype: str, hw: Hardware, variants: list[UnitVariant], sizes: list[int], shape: tuple | None = None
) -> str:
    """One translation unit: the base (index 0) and the given variants, plus the harness main().

    The family's part (its C calls, output size, host reference) is the fragment its record names
    (``Harness.template``), rendered with ``shape`` (the family's problem shape beyond the element
    count, e.g. topk's (row length, k); default: the record's)."""
    from muh.codegen.templates import render_from

    if variants and variants[0].eff.implementation == "cub":  # CUB's dispatch on candidate hubs
        from muh.tune import cub

        return cub.render_unit(family, dtype, hw, variants, sizes, SPIN_CYCLES)
    rec, h = families.get(family), harness_of(family)
    shape = tuple(shape or h.shape)
    code = "\n".join(variant_code(v.index, v.eff, hw, v.label) for v in variants)
    check_n, check_small = h.check_sizes(shape)
    size = DT.SIZE[dtype]
    rel_tol = {1: 1e-2, 2: 2e-2}.get(size, 1e-5 if dtype == "float32" else 1e-12)
    if dtype in ("float16", "bfloat16"):
        rel_tol = 2e-2
    family_code = render_from(harness_search(family), h.template, **h.variables(shape))
    return harness_source(
        family, dtype, variants, code, sizes, (check_n, check_small), rel_tol, rec.api, family_code, SPIN_CYCLES
    )


def nvcc_args(hw: Hardware) -> list[str]:
    """The unit's nvcc flags (muh.runtime.toolchain's ``tune_unit``); ptxas reports each function's spills
    (muh.runtime.ptxas: the no-spill rule)."""
    from muh.runtime.toolchain import Toolchain

    return list(Toolchain.of(hw).tune_unit())


_LENGTH_NAME = re.compile(r"(\d+)muh_v")


def variant_of(symbol: str) -> int | None:
    """The unit variant index a compiled function belongs to: its namespace ``muh_v<i>`` in the mangled
    name (Itanium: the identifier's length, then the identifier, e.g. ``_ZN6muh_v36detail…`` is variant 3
    in namespace ``detail``), or a C interface function ``muh_v<i>_…``; None for the harness's own."""
    m = re.match(r"muh_v(\d+)_", symbol)
    if m:
        return int(m.group(1))
    for m in _LENGTH_NAME.finditer(symbol):
        digits, at = m.group(1), m.end(1)
        for j in range(len(digits)):  # the length is a suffix of the digit run
            ident = symbol[at : at + int(digits[j:])]
            if re.fullmatch(r"muh_v\d+", ident):
                return int(ident[len("muh_v") :])
    return None


def spilled_variants(spills) -> dict[int, list]:
    """{variant index: its functions that spill} of a unit's compile (``Compiled.spills``)."""
    out: dict[int, list] = {}
    for s in spills:
        i = variant_of(s.function)
        if i is not None:
            out.setdefault(i, []).append(s)
    return out


def spill_detail(spills) -> str:
    """The reason a variant is rejected: each spilling function and its bytes."""
    return "register spills (the build refuses them): " + "; ".join(s.describe() for s in spills)
