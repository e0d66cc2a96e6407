"""What every kernel family record is made of, and the hardware half of a kernel build.

A *family record* (``RECORD`` in ``muh/families/<name>/__init__.py``, a ``Family`` made by ``record``)
is the one place that knows a family: its element types, its policy (the tunable numbers a kernel is
instantiated with) and how the policy is read from a derived spec, its checks, the launch numbers
derived from it (each a ``Param``: value, rule, inputs), its C interface (``CFunc``s, muh/runtime/c_api.py; an LLM ops
family names the ops' entry
points of c_api.OPS_API) and its kernel source. Derive,
codegen (kernels, headers, C API, torch bindings), tune, the runtime's ctypes table and the docs all
read the records. (A family's correspondence with CUB is its ``CUB`` table beside the record:
muh/families/cub.py.)

Pure Python (no pydantic or lark): muh.families.calls runs the kernels on GPU machines from here.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Optional

from muh.families import limits
from muh.runtime import dtypes as DT
from muh.runtime.c_api import COMMON_API, CFunc, wrap  # noqa: F401 - the records' C interface types

MAX_NAMED_BARRIERS = 16  # PTX: barrier ids 0..15; id 0 is __syncthreads
RESIDENT_THREADS_PER_SM = 2048  # every CUDA-class SM since sm_30 (CUDA C++ Programming Guide, table 21)
MAX_LOAD_BYTES = 16  # the widest vector load instruction (ld.global.v4.b32)
MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y (rows of a 2-D launch)


@dataclass(frozen=True)
class BucketSize:
    """A problem size a size bucket may test: what it is, and the element type the launch code holds it in
    (the C interface's argument: reduce's ``long long n``, the ops' rows × hidden, topk's ``int k``), which
    bounds what a bucket may name."""

    doc: str
    dtype: str  # muh's name of the integer type (muh/runtime/dtypes.py)

    @property
    def ctype(self) -> str:
        return DT.TABLE[self.dtype].storage

    @property
    def max_exp(self) -> int:
        """The largest value the type holds is ``2^max_exp - 1``."""
        return 8 * DT.TABLE[self.dtype].size - (1 if DT.TABLE[self.dtype].kind == "int" else 0)

    @property
    def max(self) -> int:
        return 2**self.max_exp - 1


# The problem sizes a size bucket (`when <size> … { … }`) may test; a family record names the ones its
# launch code picks a bucket by (``Family.buckets_by``).
BUCKET_SIZES = {
    "elements": BucketSize("the input's element count (an op's rows × hidden count as its elements)", "int64"),
    "k": BucketSize("the number of values kept per row (top-k)", "int32"),
}


class KernelConfigError(ValueError):
    """A config the kernels cannot be generated for (message says which value and why)."""


@dataclass(frozen=True)
class Param:
    """One number a kernel is instantiated with, and where it came from."""

    cname: str  # constexpr name in params.cuh
    value: int
    rule: str  # the rule (or `policy` for a value taken as the spec resolved it)
    inputs: tuple[tuple[str, object], ...] = ()

    def why(self) -> str:
        ins = ", ".join(f"{k}={v}" for k, v in self.inputs)
        return f"{self.rule}" + (f" ({ins})" if ins else "")


def param(cname: str, value, rule: str, **inputs) -> Param:
    return Param(cname, int(value), rule, tuple(inputs.items()))


def cfuncs(text: str) -> tuple[CFunc, ...]:
    """C declarations, one a line (``ret name(type arg, …);  // doc``), as CFuncs."""
    out = []
    for line in text.strip().splitlines():
        decl, _, doc = line.partition("//")
        head, _, rest = decl.strip().rstrip(";").partition("(")
        ret, name = head.rsplit(" ", 1)
        args = []
        for a in rest.rstrip(")").split(","):
            a = a.strip()
            if a and a != "void":
                t, n = a.rsplit(" ", 1)
                while n.startswith("*"):
                    t, n = t + "*", n[1:]
                args.append((t.strip(), n))
        if name.startswith("*"):
            ret, name = ret + "*", name[1:]
        out.append(CFunc(name, ret.strip(), tuple(args), doc.strip()))
    return tuple(out)


@dataclass(frozen=True)
class KernelConfig:
    """The typed input of the kernel emitter: one hardware profile plus one policy per family and dtype.

    Warp widths: ``warp_size`` is the *logical* warp the kernels are written for (the spec's
    hardware); ``physical_warp`` is the width of the GPU that runs them. They differ only in an
    emulation build (``emulate_warp``): a logical 64-lane warp on a 32-lane H200, or 16 / 128.
    ``policies`` maps a family name to {dtype: that family's Policy}; ``cfg.of(<family>)`` reads it.
    """

    name: str  # spec / hardware label, printed in errors
    warp_size: int  # logical warp of the kernels (the spec's hardware)
    physical_warp: Optional[int] = None  # None: native (== warp_size)
    smem_per_block: int = 48 * 1024
    smem_per_block_optin: Optional[int] = None  # dynamic shared memory a kernel may opt into (None: as above)
    smem_banks: int = 32
    max_threads_per_sm: int = RESIDENT_THREADS_PER_SM
    cxx: int = 17
    cuda: str = "13.0"
    has_nanosleep: bool = True
    # PTX memory-model accesses (ld/st.relaxed.gpu, vector forms single-copy in practice, as CUB
    # relies on) and .cs cache hints: NVIDIA sm_70+. Without: volatile accesses, 8-byte scan values
    # published through a flag and a fence.
    has_ptx_memory_model: bool = True
    # The bulk copy engine (cp.async.bulk global -> shared completing on an mbarrier): NVIDIA sm_90+.
    # Without: a scan policy with stage = ublkcp is refused (the register-staged kernel is the portable path).
    has_bulk_copy: bool = False
    clock_ghz: float = 1.5  # busy-wait pacing without __nanosleep; from the spec's hardware when it says
    clock_from: str = "default: 1.5 GHz (no clock in the spec)"
    policies: dict = field(default_factory=dict)  # family -> {dtype -> Policy}
    # family -> {dtype -> ((lo, hi, Policy), …)}: a dtype's size buckets, ascending and covering every
    # element count (hi None: unbounded); bucket 0's policy is ``policies[family][dtype]``.
    buckets: dict = field(default_factory=dict)
    # family -> {dtype -> size}: what a dtype's buckets test where it is not `elements` (topk: `k`)
    bucket_keys: dict = field(default_factory=dict)

    def of(self, family: str) -> dict:
        return self.policies.get(family, {})

    def with_policies(
        self, family: str, table: dict, buckets: dict | None = None, keys: dict | None = None
    ) -> "KernelConfig":
        """The same config with ``family``'s policies replaced by ``table`` ({dtype: Policy}) and its
        size buckets by ``buckets`` ({dtype: ((lo, hi, Policy), …)}; none: one policy for every size),
        bucketed by ``keys`` ({dtype: size}; a dtype not named: `elements`)."""
        table = dict(table)
        for d, bs in (buckets or {}).items():
            table[d] = bs[0][2]
        others = {f: b for f, b in self.buckets.items() if f != family}
        keyed = {f: k for f, k in self.bucket_keys.items() if f != family}
        keys = {d: k for d, k in (keys or {}).items() if k != "elements" and d in (buckets or {})}
        return replace(
            self,
            policies={**self.policies, family: table},
            buckets={**others, family: dict(buckets)} if buckets else others,
            bucket_keys={**keyed, family: keys} if keys else keyed,
        )

    def buckets_of(self, family: str, dtype: str) -> tuple:
        """``((lo, hi, Policy), …)``: the dtype's size buckets, or its one policy for every size."""
        got = self.buckets.get(family, {}).get(dtype)
        return tuple(got) if got else ((0, None, self.policies[family][dtype]),)

    def bucket_key(self, family: str, dtype: str) -> str:
        """The problem size the dtype's buckets test (`elements` unless the family's record allows another)."""
        return self.bucket_keys.get(family, {}).get(dtype, "elements")

    @property
    def physical(self) -> int:
        return self.physical_warp or self.warp_size

    @property
    def emulate_warp(self) -> Optional[int]:
        return self.warp_size if self.physical_warp and self.physical_warp != self.warp_size else None

    def emulated(self, logical: int, physical: int = 32) -> "KernelConfig":
        """The same kernels (same policies, tiles) with a ``logical``-lane warp on a ``physical``-lane GPU."""
        return replace(self, warp_size=logical, physical_warp=physical, name=f"{self.name}-emu{logical}")

    def digest(self) -> str:
        data = asdict(self)
        for name in ("buckets", "bucket_keys"):
            if not data[name]:
                del data[name]  # a config without buckets hashes as it did before they existed
        blob = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


def max_threads(cfg: KernelConfig) -> int:
    ts = [p.threads for t in cfg.policies.values() for p in t.values()]
    ts += [p.threads for t in cfg.buckets.values() for bs in t.values() for _, _, p in bs]
    return max(ts or [cfg.physical])


def xchg_bytes(cfg: KernelConfig) -> int:
    """Shared memory the warp emulation's exchange buffer takes (one 8-byte slot per thread)."""
    if cfg.warp_size <= cfg.physical:
        return 0
    return 8 * max_threads(cfg)


def warp_checks(cfg: KernelConfig, where: str, threads: int) -> list[str]:
    """A block of ``threads`` on this warp (logical and physical), and in emulation its barriers."""
    w, p = cfg.warp_size, cfg.physical
    errs = []
    if not limits.whole_warps(threads, w):
        errs.append(f"{where}: threads={threads} is not a multiple of the warp size {w}")
    if not limits.whole_warps(threads, p):
        errs.append(f"{where}: threads={threads} is not a multiple of the physical warp {p}")
    if w > p and threads // w + 1 > MAX_NAMED_BARRIERS:
        errs.append(
            f"{where}: {threads // w} logical warps need more than {MAX_NAMED_BARRIERS - 1} named barriers in emulation"
        )
    return errs


def vec_of(dtype: str) -> int:
    """Elements per widest vector load."""
    return MAX_LOAD_BYTES // DT.SIZE[dtype]


def load_vec(dtype: str, items: int, nominal: int | None = None) -> tuple[int, str]:
    """(elements per vector load, rule): ``nominal`` (or as many as fit) capped at 16-byte loads, and
    1 when ``items`` is not a multiple of it (CUB likewise loads without vectors then: AgentReduce's
    ATTEMPT_VECTORIZATION). One rule for every family, used by build and tune alike."""
    cap = vec_of(dtype)
    v = max(1, min(nominal, cap)) if nominal is not None else cap
    if items % v:
        return 1, f"items {items} is not a multiple of vec {v}: scalar loads (CUB's ATTEMPT_VECTORIZATION)"
    return v, "min(vec, 16 B / element size)" if nominal is not None else "16 B / element size"


@dataclass(frozen=True)
class Harness:
    """What `muh tune`'s measurement harness (muh/tune/templates/harness.cu.j2) needs of a family.

    ``template``: the family's C++ fragment in its folder, ``muh/families/<family>/harness.cu.j2``
    (it may include the shared fragments of ``muh/families/templates/``): it
    defines ``kHasIndices``, ``workspace_bytes(api, max_n)``, ``run_variant(api, ctx, v, n)`` (one call
    through the variant's C interface), ``out_count(n)`` and ``check_output(ctx, in, out, n, why)``
    (the host reference). ``shape``: the family's problem shape beyond the element count (topk: row
    length and k), the default of ``muh tune``'s shape option, its parts named by ``shape_keys`` (a
    bucket that tests one, e.g. `k`, is measured at that part's values); ``variables(shape)`` renders the
    fragment with it; ``check_sizes(shape)``: the two odd sizes of the correctness gate.
    """

    template: str = "harness.cu.j2"  # the fragment's file in the family's folder
    shape: tuple = ()
    shape_keys: tuple[str, ...] = ()  # the name of each part of ``shape``; a bucket testing one is measured at it
    variables: Callable = lambda shape: {}
    check_sizes: Callable = lambda shape: ((1 << 20) + 17, 1000 + 3)


@dataclass(frozen=True)
class Family:
    """The record of one kernel family (see the module docstring)."""

    name: str
    doc: str  # one line for the docs' family table
    dtypes: tuple[str, ...]  # element types the kernels are generated for
    policy: type  # the frozen dataclass of the tunable numbers
    tunable: tuple[str, ...]  # spec dimensions `muh tune` may vary
    api: tuple[CFunc, ...]  # the family's C interface
    read: Callable  # (get(dim, default)) -> policy: the policy from resolved (or candidate) values
    params: Callable  # (cfg, dtype, policy) -> list[Param]: every number its kernel is instantiated with
    checks: Callable = lambda cfg, dtype, pol: []  # (cfg, dtype, policy) -> reasons it cannot be generated
    warp_bound: bool = True  # threads must be a multiple of the warp (block collectives)
    op: Optional[str] = "plus"  # the policy key's operator the kernels use (None: the dtype's policy)
    globals: Callable = lambda cfg: []  # (cfg) -> [Param]: numbers shared by all dtypes (namespace params)
    static: tuple[str, ...] = ()  # static CUDA headers of the family (include/muh/kernels/<file>)
    headers: tuple[str, ...] = ()  # static CUDA headers of the family installed as include/muh/<file>
    template_vars: Callable = lambda cfg: {}  # (cfg) -> extra variables of the family's .cu.j2
    python_ops: dict = field(default_factory=dict)  # name -> function exported by muh.families.calls
    operators: dict = field(default_factory=dict)  # name -> code of `enum muh_<family>_op` (MUH_<NAME>)
    size_buckets: bool = True  # its launch code picks a policy's size bucket by element count (Policy<T, B>)
    # The problem sizes its buckets may test, when more than `elements` (topk: also `k`); the launch
    # code picks the bucket by the one a policy's buckets test.
    bucket_keys: tuple[str, ...] = ()
    harness: Optional[Harness] = None  # how `muh tune` measures it (required when ``tunable``)
    # An LLM ops family is one listed in registry.OPS: its numbers go into the ops' Policy<T, B>
    # (muh/derive/ops.py, muh/codegen/ops), not into a kernels/<name>.cu of its own; ``api`` names the
    # ops' entry points its tune harness calls (declared once, in muh/runtime/c_api.py OPS_API).

    @property
    def buckets_by(self) -> tuple[str, ...]:
        """What a `when` of this family's policies may test (empty: its policies hold no buckets)."""
        return self.bucket_keys or (("elements",) if self.size_buckets else ())

    @property
    def source(self) -> str:
        return f"kernels/{self.name}.cu"

    @property
    def package(self) -> str:
        """The family's folder as a package: its record, kernel sources and harness fragment."""
        return f"muh.families.{self.name}"

    @property
    def template(self) -> str:
        return f"{self.name}.cu.j2"

    def validate(self, cfg: KernelConfig) -> list[str]:
        errs = []
        for dtype in sorted(cfg.of(self.name)):
            key = cfg.bucket_key(self.name, dtype)
            for i, (lo, hi, pol) in enumerate(cfg.buckets_of(self.name, dtype)):
                where = f"{self.name}.{dtype}" + (f" ({key} {lo}..{'' if hi is None else hi})" if i or hi else "")
                if self.warp_bound:
                    errs += warp_checks(cfg, where, pol.threads)
                errs += [e.replace(f"{self.name}.{dtype}:", f"{where}:", 1) for e in self.checks(cfg, dtype, pol)]
        if cfg.buckets.get(self.name) and not self.buckets_by:
            errs.append(f"{self.name}: the kernels do not dispatch by size; its policies cannot hold size buckets")
        for dtype, key in sorted(cfg.bucket_keys.get(self.name, {}).items()):
            if key not in self.buckets_by:
                errs.append(
                    f"{self.name}.{dtype}: the kernels do not pick a bucket by `{key}` "
                    f"(they do by: {', '.join(self.buckets_by) or 'nothing'})"
                )
        return errs


# The parts every record has, read from its module by these names (``record``): module name -> field.
RECORD_PARTS = {"DTYPES": "dtypes", "Policy": "policy", "read": "read", "params": "params"}
# ... and the ones a record has where its module defines them.
RECORD_OPTIONAL = {"checks": "checks", "OPERATORS": "operators", "globals_": "globals"}


def record(module: str, **fields) -> Family:
    """The record of the family whose module is ``module`` (pass ``__name__``; the family is named after
    its folder): the parts every record has are the module's ``DTYPES``, ``Policy``, ``read`` and
    ``params``, with its ``checks``, ``OPERATORS`` and ``globals_`` where it defines them
    (``RECORD_PARTS``, ``RECORD_OPTIONAL``; a part given in ``fields`` is taken from there); ``fields``
    are the rest of the record."""
    names = vars(sys.modules[module])
    parts = {field: names[name] for name, field in RECORD_PARTS.items() if field not in fields}
    parts.update(
        {field: names[name] for name, field in RECORD_OPTIONAL.items() if name in names and field not in fields}
    )
    return Family(name=module.rpartition(".")[2], **parts, **fields)


def pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0
