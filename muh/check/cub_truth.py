"""Ground truth from the installed CUB: compile one host program, run it, cache its JSON.

The program (``cub_truth.cu.j2``) instantiates CUB's own templates — ``MemBoundScaling``,
``RegBoundScaling``, ``Nominal4BItemsToItems``, ``Nominal8BItemsToItems`` and the ``policy_hub``
chains of every algorithm family CCCL 3.0 tunes (``TABLES``: each family's CUB table, muh/families/cub.py,
held by its folder or the catalogue) — and prints the values CUB computes. Nothing is hand-typed: the
case list comes from a seeded generator and the tables, the probe's rows from the tables, the answers
from the compiler. One translation unit costs a few seconds, so every query is batched into
it, and the result is cached under ``$MUH_CACHE_DIR`` (default ``~/.cache/muh``) keyed by the CUB
version and a hash of the program text, the nvcc and host compiler versions, and the content of
every header the program includes (``toolchain_digest``); ``use_cache=False`` (``--no-cache``)
compiles afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from muh.diagnostics import Diagnostic, MuhError
from muh.families import cub
from muh.runtime import dtypes as DT
from muh.runtime.toolchain import HOST
from muh.runtime.toolchain import find_nvcc as find_nvcc_or_none
from muh.schema import catalog

#: Architectures (compute capability x 10, CUB's policy numbering) and element types compared.
ARCHES = (800, 860, 900, 1000)
#: Element types probed, as C++ types.
TYPES = {n: DT.TABLE[n].std for n in cub.PROBED}
#: Every family CUB tunes, with its CUB table (muh/families/cub.py), in the catalogue's order: the
#: case list, the probe's rows and the compared members are read from these tables only.
TABLES: dict[str, cub.CubTable] = {name: fam.cub for name, fam in catalog.FAMILIES.items() if fam.cub is not None}
#: Algorithm family -> the element types its probes cover.
ALGORITHMS = {name: table.types for name, table in TABLES.items()}

#: User-defined element types CUB's case list holds for every family that accepts them (a table's
#: ``any_type``: a user operator, comparator or predicate; not the radix sorts' arithmetic keys or the
#: histogram's samples): (size, alignment) in bytes, probed as ``struct alignas(A) structSaA { char
#: bytes[S]; }`` — a 12-byte record, a 16-byte pair, a 64-byte record. A spec's own ``type`` blocks add
#: their shapes where its algorithms list them.
STRUCT_SHAPES = ((12, 4), (16, 8), (64, 16))
_STRUCT = re.compile(r"struct(\d+)a(\d+)")


def struct_name(size: int, align: int) -> str:
    """The case word of a user-defined type of ``size`` bytes aligned to ``align``: ``struct12a4``."""
    return f"struct{size}a{align}"


def shape_of(name: str) -> tuple[int, int] | None:
    """(size, alignment) of a ``struct<S>a<A>`` case word; None for a catalogue type."""
    match = _STRUCT.fullmatch(name)
    return (int(match.group(1)), int(match.group(2))) if match else None


#: Operators as C++ function objects (the ones CUB's hubs classify: plus / min / max are "basic"
#: binary operators, min and max "min_or_max"; the others fall into CUB's "unknown" class).
OPERATORS = {
    "plus": "::cuda::std::plus<>",
    "max": "::cuda::maximum<>",
    "min": "::cuda::minimum<>",
    "mul": "::cuda::std::multiplies<>",
    "bit_and": "::cuda::std::bit_and<>",
    "bit_or": "::cuda::std::bit_or<>",
    "bit_xor": "::cuda::std::bit_xor<>",
}
BITWISE = ("bit_and", "bit_or", "bit_xor")
#: Offset widths (bits) -> the unsigned offset type CUB's entry points choose for them
#: (``choose_offset_t``: ``int`` num_items -> uint32, ``int64_t`` -> uint64).
OFFSET_TYPES = {32: "std::uint32_t", 64: "std::uint64_t"}


def operators_for(family: str, dtype: str) -> tuple[str, ...]:
    """The operators a family's hub is probed with for ``dtype`` (a table's ``takes_op``: every operator,
    bitwise ones for integers only; else plus)."""
    if not TABLES[family].takes_op:
        return ("plus",)
    return tuple(o for o in OPERATORS if o not in BITWISE or dtype.startswith(("int", "uint")))


def offsets_for(family: str) -> tuple[int, ...]:
    return tuple(OFFSET_TYPES) if TABLES[family].takes_offset else (32,)


STANDARD_SIZES = (1, 2, 4, 8, 16)
ODD_SIZES = (3, 5, 6, 7, 9, 12, 20, 24, 32, 33, 48, 64, 100, 128, 256, 1000, 1024)
#: Worked examples of CUB's MemBoundScaling / RegBoundScaling (cub/util_arch.cuh, https://github.com/NVIDIA/cccl):
#: rule, T4, I4, element size.
ANCHORS = (
    ("mem_bound", 512, 16, 8),
    ("reg_bound", 384, 22, 8),
    ("mem_bound", 256, 500, 1),
    ("mem_bound", 256, 10000, 1024),
    ("reg_bound", 256, 500, 1),
)
DEFAULT_SEED = 20260301
DEFAULT_COUNT = 600  # random cases per run, on top of the anchors

_MACRO = {"mem_bound": "MEM", "reg_bound": "REG", "nominal_4b_items": "N4B", "nominal_8b_items": "N8B"}


@dataclass(frozen=True, order=True)
class ScalingCase:
    rule: str  # mem_bound | reg_bound | nominal_4b_items | nominal_8b_items
    threads: int  # nominal 4-byte threads per block (T4)
    items: int  # nominal 4-byte items per thread (I4)
    size: int  # element size in bytes

    @property
    def macro(self) -> str:
        return _MACRO[self.rule]

    @property
    def key(self) -> str:
        return f"{self.rule}({self.threads},{self.items},{self.size}B)"


@dataclass(frozen=True, order=True)
class PolicyProbe:
    """One question to CUB: the policy a family's hub selects for (arch, type, operator, offset width)."""

    algorithm: str
    cc: int
    type: str
    op: str = "plus"
    offset: int = 32
    value: str = ""  # by-key families: the values' type, where it differs from the keys' ("": the same)

    @property
    def fn(self) -> str:
        return f"{self.algorithm}_row"

    @staticmethod
    def _cxx(name: str) -> str:
        return TYPES[name] if name in TYPES else f"muh_probe::{name}"

    @property
    def cxx_type(self) -> str:
        """The probe's element type: the key type, or ``kv<Key, Value>`` where the values differ."""
        return f"muh_probe::kv<{self._cxx(self.type)}, {self._cxx(self.value)}>" if self.value else self._cxx(self.type)

    @property
    def cxx_op(self) -> str:
        return OPERATORS[self.op]

    @property
    def cxx_offset(self) -> str:
        return OFFSET_TYPES[self.offset]

    @property
    def key(self) -> tuple[str, int, str, str, int, str]:
        return (self.algorithm, self.cc, self.type, self.op, self.offset, self.value)

    @property
    def json_key(self) -> str:
        """The case's key as a C string holding a JSON fragment (the probe prints it verbatim)."""
        frag = json.dumps({"type": self.type, "op": self.op, "offset": self.offset, "value": self.value})[1:-1]
        return '"' + frag.replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Truth:
    cub_version: int
    scaling: dict[ScalingCase, tuple[int, int]]  # case -> (threads, items); threads 0 for nominal_*_items
    policies: dict[tuple[str, int, str, str, int, str], dict]  # PolicyProbe.key -> CUB's selected values


def scaling_cases(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT) -> list[ScalingCase]:
    """A deterministic, property-based-in-spirit case list: anchors plus ``count`` random cases.

    Threads cover warp multiples and odd counts; items cover the tuned range (1..32) and the large
    values that make the shared-memory cap bite; sizes cover 1..16 bytes and odd ``char[N]`` sizes.
    """
    rng = random.Random(seed)
    rules = ("mem_bound", "reg_bound", "nominal_4b_items", "nominal_8b_items")
    cases = {ScalingCase(*a) for a in ANCHORS}
    while len(cases) < count + len(ANCHORS):
        threads = rng.choice((rng.randrange(32, 1025, 32), rng.randrange(1, 1025)))
        items = rng.choice((rng.randint(1, 32), rng.randint(1, 32), rng.randint(33, 2000)))
        size = rng.choice(STANDARD_SIZES + STANDARD_SIZES + ODD_SIZES)
        cases.add(ScalingCase(rng.choice(rules), threads, items, size))
    return sorted(cases)


def types_for(family: str, extra: dict[str, tuple[tuple[int, int], ...]] | None = None) -> tuple[str, ...]:
    """The element types of a family's cases: the catalogue's it accepts, then user-defined shapes
    (STRUCT_SHAPES and the family's ``extra`` ones)."""
    types = TABLES[family].types
    if TABLES[family].any_type:
        shapes = STRUCT_SHAPES + tuple((extra or {}).get(family, ()))
        types += tuple(dict.fromkeys(struct_name(*s) for s in shapes))
    return types


def policy_probes(arches=ARCHES, extra: dict[str, tuple[tuple[int, int], ...]] | None = None) -> list[PolicyProbe]:
    """CUB's case list: every family x arch x type x operator x offset width its hub distinguishes, and
    for a by-key family every value type of a class its hub distinguishes (a table's ``values``)
    (``extra``: family -> more user-defined (size, alignment) shapes to probe)."""
    same = [
        PolicyProbe(a, cc, t, op, off)
        for a in TABLES
        for cc in arches
        for t in types_for(a, extra)
        for op in operators_for(a, t)
        for off in offsets_for(a)
    ]
    pairs = [
        PolicyProbe(a, cc, t, op, off, v)
        for a, table in TABLES.items()
        for cc in arches
        for t in types_for(a, extra)
        for v in table.values
        if v != t
        for op in operators_for(a, v)
        for off in offsets_for(a)
    ]
    return same + pairs


def struct_shapes(probes) -> list[tuple[str, int, int]]:
    """(C++ name, size, alignment) of every user-defined type among ``probes`` (their definitions)."""
    shapes = {t: shape_of(t) for p in probes for t in (p.type, p.value) if t and shape_of(t)}
    return [(n, *shapes[n]) for n in sorted(shapes, key=shapes.get)]


def _json_fields(members) -> tuple[list[str], list[str]]:
    """A JSON object's fields (printf format) and arguments for ``members`` read from CUB's policy ``P``,
    each printed as the catalogue's kind of its dimension says (``name()``: muh's spelling of an enum)."""
    parts, args = [], []
    for m in members:
        path, kind = f"P::{m.cub}", catalog.DIMS[m.dim].kind
        if kind == "enum":
            parts.append(f'"{m.dim}": "%s"')
            args.append(f"name({path})")
        elif kind == "bool":
            parts.append(f'"{m.dim}": %s')
            args.append(f'({path} ? "true" : "false")')
        elif kind == "delay":
            parts.append(f'"{m.dim}": {{"kind": "%s", "ns": %d, "l2_write_latency": %d}}')
            args += [f"delay<typename {path}>::{x}" for x in ("kind", "ns", "l2w")]
        else:
            parts.append(f'"{m.dim}": %d')
            args.append(f"int({path})")
    return parts, args


def probe_rows() -> list[dict]:
    """Per family CUB tunes: its hub (the probes' aliases) and its row (the printf of the values CUB
    selects, sub-policies as nested objects), from its table."""
    out = []
    for name, table in TABLES.items():
        parts, args = _json_fields(table.cub_members)
        for sub in table.subs:
            inner, more = _json_fields(sub.members)
            parts.append(f'"{sub.name}": {{' + ", ".join(inner) + "}")
            args += more
        out.append(
            dict(
                name=name,
                entry=table.entry,
                hub=table.hub,
                agent=table.agent,
                fmt=json.dumps(", ".join(parts) + "}"),
                args=args,
            )
        )
    return out


def probe_headers() -> list[str]:
    """The CUB tuning headers the probes include (every table's)."""
    return sorted({t.header for t in TABLES.values()})


def render_program(cases: list[ScalingCase], probes: list[PolicyProbe]) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template("cub_truth.cu.j2").render(
        scaling=cases,
        policies=probes,
        structs=struct_shapes(probes),
        hubs=probe_rows(),
        cub_headers=probe_headers(),
        command=" ".join(("nvcc", *HOST.host_program())),
    )


# ---- toolchain ---------------------------------------------------------------------------------


def find_nvcc() -> str:
    """The nvcc to use (muh.runtime.toolchain.find_nvcc: ``$MUH_NVCC``, ``$CUDACXX``, PATH, then
    ``/usr/local/cuda/bin``)."""
    found = find_nvcc_or_none()
    if not found:
        raise MuhError(
            [
                Diagnostic(
                    "E-NVCC",
                    "nvcc (the CUDA compiler) was not found; CUB ground truth needs it",
                    hint="install the CUDA toolkit, put nvcc on PATH, or set $MUH_NVCC to its path",
                )
            ]
        )
    return found


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as err:
        raise MuhError(
            [
                Diagnostic(
                    "E-NVCC",
                    f"{nvcc} --version failed: {err}",
                    hint="check the CUDA toolkit installation or set $MUH_NVCC",
                )
            ]
        ) from None
    match = re.search(r"release [0-9.]+, V[0-9.]+", out)
    return match.group(0) if match else (out.strip() or "unknown")


def include_dirs(nvcc: str) -> list[Path]:
    """The include folders nvcc passes to the host compiler (read from ``nvcc --dryrun``; no compile)."""
    try:
        out = subprocess.run(
            [nvcc, "--dryrun", *HOST.language, "-c", os.devnull, "-o", os.devnull],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    found = re.findall(r'(?:-I|-isystem" ")"?([^"\s]+)', out.stdout + out.stderr)
    return [Path(p) for p in dict.fromkeys(found)]


def cub_version(nvcc: str) -> int:
    """CUB_VERSION read from the toolkit's headers (no compilation); 0 if they cannot be found."""
    root = Path(nvcc).resolve().parent.parent
    candidates = [d / "cub/version.cuh" for d in include_dirs(nvcc)]
    candidates += [root / "include/cccl/cub/version.cuh", root / "include/cub/version.cuh"]
    for cand in candidates:
        if cand.is_file():
            match = re.search(r"#define\s+CUB_VERSION\s+(\d+)", cand.read_text())
            if match:
                return int(match.group(1))
    return 0  # unknown: the program reports it, and the hash of the nvcc version still keys the cache


def host_compiler_version() -> str:
    """``--version`` of the host compiler nvcc drives (``$NVCC_CCBIN``, else g++ / c++ on PATH)."""
    cxx = os.environ.get("NVCC_CCBIN") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        return "unknown host compiler"
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return f"{cxx}: no version"
    return out.splitlines()[0] if out else cxx


_DEPS: dict[tuple[str, str], tuple[str, ...]] = {}


def included_headers(nvcc: str) -> tuple[str, ...]:
    """Every header the probe programs include, as nvcc resolves them (``nvcc -M``: CUB's, libcu++'s
    and the host standard library's)."""
    probe = render_program([], [])
    key = (nvcc, probe)
    if key in _DEPS:
        return _DEPS[key]
    with tempfile.TemporaryDirectory(prefix="muh-deps-") as tmp:
        src = Path(tmp) / "probe.cu"
        src.write_text(probe)
        try:
            proc = subprocess.run([nvcc, *HOST.dependencies(), str(src)], capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as err:
            raise MuhError(
                [
                    Diagnostic(
                        "E-NVCC",
                        f"{nvcc} -M failed: {err}",
                        hint="check the CUDA toolkit installation or set $MUH_NVCC",
                    )
                ]
            ) from None
    if proc.returncode != 0:
        raise MuhError(
            [
                Diagnostic(
                    "E-NVCC-COMPILE",
                    "nvcc could not list the headers of the CUB probe",
                    hint="is the CUDA toolkit's CCCL complete? the compiler said:\n"
                    + "\n".join(proc.stderr.strip().splitlines()[-15:]),
                )
            ]
        )
    words = proc.stdout.replace("\\\n", " ").split()
    _DEPS[key] = deps = tuple(sorted({w for w in words if not w.endswith(":") and Path(w).name != "probe.cu"}))
    return deps


def toolchain_digest(nvcc: str) -> str:
    """Hash of what the probes' answers depend on besides their own text: nvcc's and the host
    compiler's versions and the *content* of every header the probes include (a patched CUB header
    changes the digest even when CUB_VERSION does not)."""
    h = hashlib.sha256()
    for part in (nvcc_version(nvcc), host_compiler_version()):
        h.update(part.encode() + b"\0")
    deps = included_headers(nvcc)
    for dep in deps:
        path = Path(dep)
        h.update(dep.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"(missing)") + b"\0")
    return f"{len(deps)}:{h.hexdigest()}"


def cache_dir() -> Path:
    if os.environ.get("MUH_CACHE_DIR"):
        return Path(os.environ["MUH_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "muh"


def compile_and_run(source: str, nvcc: str, *, what: str = "CUB ground-truth probe") -> str:
    """Compile ``source`` as a host program with nvcc (muh.runtime.toolchain.HOST), run it, return its stdout."""
    with tempfile.TemporaryDirectory(prefix="muh-truth-") as tmp:
        src, exe = Path(tmp) / "probe.cu", Path(tmp) / "probe"
        src.write_text(source)
        cmd = [nvcc, *HOST.host_program(), str(src), "-o", str(exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise MuhError(
                [
                    Diagnostic(
                        "E-NVCC-COMPILE",
                        f"nvcc could not compile the {what}",
                        hint="is the CUDA toolkit's CCCL complete? the compiler said:\n" + tail,
                    )
                ]
            )
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            raise MuhError(
                [
                    Diagnostic(
                        "E-NVCC-RUN",
                        f"the {what} exited with {run.returncode}",
                        hint=run.stderr.strip()[-2000:] or None,
                    )
                ]
            )
        return run.stdout


def _parse(raw: dict) -> Truth:
    scaling = {
        ScalingCase(r["rule"], r["threads4"], r["items4"], r["size"]): (r["threads"], r["items"])
        for r in raw["scaling"]
    }
    policies = {(p["family"], p["cc"], p["type"], p["op"], p["offset"], p.get("value", "")): p for p in raw["policies"]}
    return Truth(raw["cub_version"], scaling, policies)


def load_truth(
    cases: list[ScalingCase] | None = None, probes: list[PolicyProbe] | None = None, *, use_cache: bool = True
) -> Truth:
    """CUB's answers for ``cases`` and ``probes`` (defaults: the standard suite), cached on disk."""
    cases = scaling_cases() if cases is None else sorted(set(cases))
    probes = policy_probes() if probes is None else sorted(set(probes))
    source = render_program(cases, probes)
    nvcc = find_nvcc()
    version = cub_version(nvcc)
    digest = hashlib.sha256((source + "\0" + toolchain_digest(nvcc)).encode()).hexdigest()[:16]
    path = cache_dir() / f"cub-truth-{version}-{digest}.json"
    if use_cache and path.is_file():
        try:
            cached = _parse(json.loads(path.read_text()))
            if not version or cached.cub_version == version:
                return cached
        except (ValueError, KeyError, TypeError):
            pass  # a damaged or mismatched cache entry is rebuilt below
    try:
        raw = json.loads(compile_and_run(source, nvcc))
    except MuhError as err:
        if version and version // 100 != 3000:
            note = (
                f"the probe reads CCCL 3.0's policy hubs; this toolkit's CUB_VERSION is {version} "
                "(a newer CCCL renamed them): pin the toolkit or port cub_probe.inc.j2"
            )
            raise MuhError(
                [Diagnostic(d.code, d.message, d.span, d.hint, d.severity, d.notes + (note,)) for d in err.diagnostics]
            ) from None
        raise
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(raw, fh, sort_keys=True, indent=1)
        os.replace(tmp, path)
    return _parse(raw)
