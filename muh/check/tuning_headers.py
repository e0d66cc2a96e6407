"""The `tuning_headers` check: the generated tuning headers compile, and equal CUB where they should.

1. One translation unit includes every generated ``tuning_<family>.cuh`` and is compiled with nvcc
   at each C++ level the spec's toolchains name (``-std=c++14`` for the BI-V100): the headers'
   static_asserts (warp multiples, block limit, tile ≤ shared memory) hold or the build fails.
2. For NVIDIA hardware with ``cub_parity = true``, a second unit (``cub_equal.cu.j2``) includes
   CUB's tuning headers and static_asserts ``generated == cub`` for every policy of a probed family.

Compilations run in parallel (each costs seconds); failures come back as the compiler's lines.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from muh.check import cub_truth, parity
from muh.check.base import CheckResult, register
from muh.codegen.base import BuildContext, GeneratedFile
from muh.codegen.cxx import tuning
from muh.diagnostics import MuhError
from muh.families import cub
from muh.runtime.toolchain import HOST, Toolchain
from muh.schema import catalog


def cub_expr(member: cub.Member) -> str:
    """How a muh policy field reads from CUB's agent policy ``P`` (its member, as the catalogue's kind of
    the dimension compares: enumerations through cub_equal.cu.j2's ``to_muh``)."""
    path, kind = f"P::{member.cub}", catalog.DIMS[member.dim].kind
    if kind == "enum":
        return f"to_muh({path})"
    if kind == "bool":
        return f"{path} != 0"
    if kind == "delay":
        d = f"delay<typename {path}>"
        return f"mt::delay_policy{{static_cast<mt::delay_kind>({d}::id), {d}::ns, {d}::l2w}}"
    return path


def _init(family: str, algorithms) -> tuple[list[str], list[str]] | None:
    """(C++ initialisers of a muh policy from CUB's policy ``P``, member names), or None if the shapes
    differ (the family's CUB table, cub_truth.TABLES, says which members CUB has)."""
    table = cub_truth.TABLES[family]
    theirs = {m.dim: m for m in table.cub_members}
    fields = [f.name for f in tuning.fields_of(family, algorithms)]
    if set(fields) != set(theirs):
        return None  # the header's struct is not CUB's shape (a dimension unset): parity cannot hold
    init, members = [cub_expr(theirs[f]) for f in fields], list(fields)
    subs = {s.name: s for s in table.subs}
    for sp in tuning.subs_of(family, algorithms):
        held = {m.dim: m for m in subs[sp.name].members} if sp.name in subs else {}
        if not held or any(f.name not in held for f in sp.fields):
            return None
        init.append("{" + ", ".join(cub_expr(held[f.name]) for f in sp.fields) + "}")
        members.append(sp.name)
    return init, members


#: muh enumeration -> (CUB enumeration type, (muh enumerator, CUB enumerator)): the one table, muh/families/cub.py.
CUB_ENUMS = cub.cub_enums()


@dataclass(frozen=True)
class Unit:
    name: str
    source: str
    std: int
    files: tuple[GeneratedFile, ...] | None = None  # headers of its own (default: the shared ones)


def header_files(ctx: BuildContext) -> list[GeneratedFile]:
    return [f for f in tuning.emit(ctx) if f.path.endswith(".cuh")]


def _tuning_names(files: list[GeneratedFile]) -> list[str]:
    return sorted(Path(f.path).name for f in files if Path(f.path).name.startswith("tuning_"))


def include_all_source(files: list[GeneratedFile]) -> str:
    lines = [f'#include "muh/tuning/{n}"' for n in _tuning_names(files)]
    return (
        "// Every generated tuning header, compiled together (their static_asserts must hold).\n"
        + "\n".join(lines)
        + "\n"
    )


@dataclass(frozen=True)
class Equality:
    """The static_assert(generated == cub) unit and what it covers."""

    source: str | None
    asserts: int  # static_asserts comparing whole policies (one per CUB case)
    gaps: tuple[str, ...]  # CUB cases the unit cannot compare, with why


def equality(ctx: BuildContext, files: list[GeneratedFile]) -> Equality:
    """One static_assert per CUB case the spec covers (parity.coverage), each the selector's
    answer for (type, operator, offset width) against the policy CUB's hub selects. Cases whose
    family's header cannot be compared (a dimension the spec leaves unset) are gaps."""
    compared, gaps, _ = parity.coverage(ctx.spec)
    missing = [f"{parity.case_name(p)}: {why}" for p, why in gaps]
    cases, families, shapes = [], {}, {}
    for probe, akey in compared:
        family = probe.algorithm
        if family not in shapes:
            shapes[family] = _init(family, ctx.derived.of(family)) if family in cub_truth.TABLES else None
        shape = shapes[family]
        if shape is None:
            missing.append(
                f"{parity.case_name(probe)}: the generated `{family}::policy` is not CUB's shape "
                "(a dimension CUB has is unset in the spec)"
            )
            continue
        families[family], fields = shape
        hw = ctx.spec.algorithms[akey].on
        cases.append(
            dict(
                family=family,
                cc=probe.cc,
                cxx_type=probe.cxx_type,
                cxx_op=probe.cxx_op,
                cxx_offset=probe.cxx_offset,
                element=tuning.ident(parity.spec_type(ctx.spec, ctx.spec.algorithms[akey], probe.type)),
                value=tuning.ident(parity.spec_value(ctx.spec, ctx.spec.algorithms[akey], probe.value))
                if probe.value
                else None,
                op=tuning.ident(probe.op),
                offset=probe.offset,
                hardware=tuning.ident(hw),
                fields=fields,
                sized=tuning.sized(ctx.derived.of(family)),
                label=parity.case_name(probe),
            )
        )
    if not cases:
        return Equality(None, 0, tuple(missing))
    enums = [dict(muh=m, cub=t, pairs=[(c, tuning.ident(v)) for v, c in pairs]) for m, t, pairs in CUB_ENUMS]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    source = env.get_template("cub_equal.cu.j2").render(
        headers=_tuning_names(files),
        enums=enums,
        families=[dict(name=k, init=v) for k, v in sorted(families.items())],
        cases=cases,
        structs=cub_truth.struct_shapes(p for p, _ in compared),
        hubs=cub_truth.probe_rows(),
        cub_headers=cub_truth.probe_headers(),
    )
    return Equality(source, len(cases), tuple(missing))


def equality_source(ctx: BuildContext, files: list[GeneratedFile]) -> str | None:
    """The static_assert(generated == cub) unit, or None when no hardware asks for CUB parity."""
    return equality(ctx, files).source


def units_for(ctx: BuildContext, files: list[GeneratedFile]) -> list[Unit]:
    levels = sorted({h.toolchain.cxx for h in ctx.spec.hardware.values() if h.toolchain.cxx >= 14} or {17})
    units = [Unit(f"headers_cxx{std}", include_all_source(files), std) for std in levels]
    eq = equality_source(ctx, files)
    if eq is not None:
        units.append(Unit("cub_equal", eq, 17))
    return units


def _pass_marker(nvcc: str, files, unit: Unit) -> Path:
    """Where a unit that compiled is remembered: keyed by everything the compilation read."""
    h = hashlib.sha256()
    for part in (
        cub_truth.toolchain_digest(nvcc),
        str(cub_truth.cub_version(nvcc)),
        unit.name,
        str(unit.std),
        " ".join(Toolchain("nvcc", unit.std).header_object()),
        unit.source,
    ):
        h.update(part.encode() + b"\0")
    for f in sorted(unit.files if unit.files is not None else files, key=lambda f: f.path):
        h.update(f.path.encode() + b"\0" + f.content.encode() + b"\0")
    return cub_truth.cache_dir() / "compiled" / f"{h.hexdigest()[:24]}.ok"


def compile_units(
    files: list[GeneratedFile], units: list[Unit], *, use_cache: bool = True
) -> dict[str, tuple[bool, str]]:
    """Compile every unit against ``files`` in parallel; name -> (ok, compiler output).

    A unit that compiled before with exactly the same inputs (sources, headers, nvcc, CUB) is not
    compiled again; failures are never cached.
    """
    nvcc = cub_truth.find_nvcc()
    out: dict[str, tuple[bool, str]] = {}
    markers = {u.name: _pass_marker(nvcc, files, u) for u in units}
    if use_cache:
        out = {
            u.name: (True, "(cached: compiled before with the same inputs)") for u in units if markers[u.name].is_file()
        }
    todo = [u for u in units if u.name not in out]
    if todo:
        out.update(_compile(nvcc, files, todo))
    for u in todo:
        if use_cache and out[u.name][0]:
            markers[u.name].parent.mkdir(parents=True, exist_ok=True)
            markers[u.name].write_text(u.name + "\n")
    return {u.name: out[u.name] for u in units}


def _compile(nvcc: str, files: list[GeneratedFile], units: list[Unit]) -> dict[str, tuple[bool, str]]:
    with tempfile.TemporaryDirectory(prefix="muh-headers-") as tmp:
        root = Path(tmp)
        _write(root / "shared", files)
        procs = {}
        for u in units:
            inc = root / "shared"
            if u.files is not None:
                inc = root / u.name
                _write(inc, u.files)
            src = root / f"{u.name}.cu"
            src.write_text(u.source, encoding="utf-8")
            cmd = [
                nvcc,
                *Toolchain("nvcc", u.std).header_object(),
                str(src),
                "-o",
                str(root / f"{u.name}.o"),
                "-I",
                str(inc / "include"),
            ]
            procs[u.name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = {}
        for name, proc in procs.items():
            text, _ = proc.communicate(timeout=900)
            out[name] = (proc.returncode == 0, text.replace(tmp, "<tmp>"))
    return out


def _write(root: Path, files) -> None:
    for f in files:
        path = root / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f.content, encoding="utf-8")


@register("tuning_headers")
def check_tuning_headers(ctx: BuildContext) -> CheckResult:
    """`muh check SPEC --only tuning_headers`: compiles, and counts `static_assert(generated == cub)`."""
    files = header_files(ctx)
    if not _tuning_names(files):
        return CheckResult("tuning_headers", "skip", "the spec has no algorithms, so no tuning headers")
    levels = sorted({h.toolchain.cxx for h in ctx.spec.hardware.values() if h.toolchain.cxx >= 14} or {17})
    units = [Unit(f"headers_cxx{std}", include_all_source(files), std) for std in levels]
    eq = equality(ctx, files) if parity.parity_hardware(ctx.spec) else Equality(None, 0, ())
    if eq.source is not None:
        units.append(Unit("cub_equal", eq.source, HOST.cxx))  # CUB's headers: the host level
    try:
        results = compile_units(files, units, use_cache=not ctx.flags.get("no_cache"))
    except MuhError as err:
        return CheckResult("tuning_headers", "fail", err.diagnostics[0].message, [d.render() for d in err.diagnostics])
    lines = []
    for u in units:
        ok, text = results[u.name]
        lines.append(f"{u.name} (nvcc {Toolchain('nvcc', u.std).std}): {'ok' if ok else 'FAILED'}")
        if not ok:
            lines += [f"  {line}" for line in text.strip().splitlines()[:40]]
    lines += [f"GAP {g}" for g in eq.gaps[:40]] + ([f"GAP … {len(eq.gaps) - 40} more"] if len(eq.gaps) > 40 else [])
    failed = [u.name for u in units if not results[u.name][0]]
    counted = (f"; {eq.asserts} static_assert(generated == cub)" if eq.source is not None else "") + (
        f"; {len(eq.gaps)} CUB cases MISSING" if eq.gaps else ""
    )
    detail = (
        f"{len(failed)} of {len(units)} units failed: {', '.join(failed)}{counted}"
        if failed
        else f"{len(_tuning_names(files))} headers compile ({', '.join(u.name for u in units)}){counted}"
    )
    return CheckResult("tuning_headers", "fail" if failed or eq.gaps else "pass", detail, lines)
