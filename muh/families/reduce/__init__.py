"""reduce: one value from n (CUB DeviceReduce::Reduce semantics, the result has the input's type)."""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import cub
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, load_vec, param, record
from muh.runtime import dtypes as DT

# Blocks of the first pass: enough for every SM of a large GPU several times over, few enough that
# the second pass (one block over the partials) stays one tile: 4096 = 16 x 256-thread blocks.
MAX_GRID = 4096

# DeviceReduce's hub (its segmented form, DeviceSegmentedReduce, shares the members: the catalogue).
CUB = cub.CubTable(
    "DeviceReduce::Sum (and Max, Min, Reduce with an operator)",
    "tuning_reduce.cuh",
    hub="typename cub::detail::reduce::policy_hub<T, O, Op>::MaxPolicy",
    agent="ReducePolicy",
    types=cub.SUMS,
    members=cub.members(
        "threads", "items", ("vec", "VECTOR_LOAD_LENGTH"), ("block", "BLOCK_ALGORITHM"), "modifier", ("scaling", None)
    ),
    takes_op=True,
    takes_offset=True,
    any_type=True,
)


@dataclass(frozen=True)
class Policy:
    threads: int
    items: int
    vec: int = 4
    load: str = "ldg"  # ldg | default


def read(get) -> Policy:
    ld = "ldg" if get("modifier", "ldg") == "ldg" else "default"
    return Policy(int(get("threads")), int(get("items")), int(get("vec", 1)), ld)


def params(cfg, dtype: str, pol: Policy):
    v, rule = load_vec(dtype, pol.items, pol.vec)
    return [
        param("kThreads", pol.threads, "policy threads"),
        param("kItems", pol.items, "policy items"),
        param("kVec", v, rule, vec=pol.vec, items=pol.items, element_size=DT.SIZE[dtype]),
        param("kLdg", pol.load == "ldg", "modifier == ldg", modifier=pol.load),
    ]


def globals_(cfg):
    return [param("kReduceMaxGrid", MAX_GRID, "first-pass blocks: 16 x 256-thread blocks, one second-pass tile")]


DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64")
OPERATORS = {"sum": 0, "max": 1, "min": 2}  # `enum muh_reduce_op` (MUH_<NAME>) and the Python entry point's op names


def reduce(x, op: str = "sum", *, out=None, kernels=None):
    """op over all elements of ``x`` (CUB semantics: the result has x's dtype); a 0-dim tensor
    (or ``out``, one element of x's dtype). Empty input gives the op's identity."""
    torch = T.torch()
    name = T.check_tensor(x, "reduce", DTYPES)
    if op not in OPERATORS:
        raise ValueError(f"{T.API}.reduce: unknown op `{op}` (one of {', '.join(OPERATORS)})")
    k = T.kernels(kernels)
    out = torch.empty((), dtype=x.dtype, device=x.device) if out is None else out
    T.check_out(out, x, 1, "reduce")
    nbytes = int(k.raw("muh_reduce_workspace_bytes")())
    ws = T.workspace(k, x, "reduce", nbytes)
    with torch.cuda.device(x.device):
        k.call(
            "muh_reduce",
            OPERATORS[op],
            DT.CODE[name],
            x.data_ptr(),
            x.numel(),
            out.data_ptr(),
            ws[0].data_ptr(),
            ws[0].numel(),
            T.stream(x),
        )
    return out


RECORD = record(
    __name__,
    doc="one value from n: sum, max, min (DeviceReduce::Reduce)",
    tunable=("threads", "items", "vec", "modifier"),
    api=cfuncs("""
size_t muh_reduce_workspace_bytes(void);
int muh_reduce(int op, int dtype, const void* in, long long n, void* out, void* workspace, size_t workspace_bytes, void* stream);
"""),  # noqa: E501 - one C declaration a line (cfuncs)
    static=("reduce.cuh",),
    harness=Harness(),
    python_ops={"reduce": reduce},
)
