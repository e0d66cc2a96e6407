"""transform: element-wise map out[i] = op(in[i]) (scale, relu, silu; CUB DeviceTransform)."""

from __future__ import annotations

from dataclasses import dataclass

from muh.families import cub
from muh.families import tensors as T
from muh.families.base import Harness, cfuncs, param, record, vec_of
from muh.runtime import dtypes as DT

# CUB 3.0.1's minimum bytes in flight per SM on sm_90 (cub/device/dispatch/tuning/tuning_transform.cuh):
# the default when a spec's transform policy gives none.
DEFAULT_BYTES_IN_FLIGHT = 48 * 1024
DEFAULT_THREADS = 256  # CUB's transform block

# DeviceTransform's hub: the selected chain policy holds the values itself.
CUB = cub.CubTable(
    "DeviceTransform::Transform (one contiguous input)",
    "tuning_transform.cuh",
    hub="typename cub::detail::transform::policy_hub<false, ::cuda::std::tuple<T*>>::max_policy",
    agent=None,
    types=cub.PROBED,
    members=cub.members(
        ("threads", "algo_policy::block_threads"),
        ("items", None),
        ("vec", None),
        ("bytes_in_flight", "min_bif"),
        ("algorithm", "algorithm"),
    ),
    any_type=True,
)


@dataclass(frozen=True)
class Policy:
    threads: int = DEFAULT_THREADS
    bytes_in_flight: int = DEFAULT_BYTES_IN_FLIGHT  # per SM


def read(get) -> Policy:
    return Policy(int(get("threads", DEFAULT_THREADS)), int(get("bytes_in_flight", DEFAULT_BYTES_IN_FLIGHT)))


def items(cfg, dtype: str, pol: Policy) -> tuple[int, int]:
    """(items per thread, vector width): enough bytes in flight per SM for the policy.

    bytes_in_flight is per SM (CUB's meaning); resident threads per SM are assumed to be
    ``max_threads_per_sm`` (full occupancy, which these register-light kernels reach).
    """
    size = DT.SIZE[dtype]
    vec = vec_of(dtype)
    per_thread = -(-pol.bytes_in_flight // (cfg.max_threads_per_sm * size))
    return max(vec, -(-per_thread // vec) * vec), vec


def params(cfg, dtype: str, pol: Policy):
    n, vec = items(cfg, dtype, pol)
    return [
        param("kThreads", pol.threads, "policy threads"),
        param(
            "kItems",
            n,
            "ceil(bytes_in_flight / (resident threads per SM x size)), rounded up to kVec",
            bytes_in_flight=pol.bytes_in_flight,
            resident_threads_per_sm=cfg.max_threads_per_sm,
            element_size=DT.SIZE[dtype],
        ),
        param("kVec", vec, "16 B / element size", element_size=DT.SIZE[dtype]),
    ]


DTYPES = ("float32", "float64", "float16", "bfloat16")
OPERATORS = {
    "scale": 0,
    "relu": 1,
    "silu": 2,
}  # `enum muh_transform_op` (MUH_<NAME>) and the Python entry point's op names


def transform(x, op: str = "scale", alpha: float = 1.0, *, out=None, kernels=None):
    """Element-wise ``op`` (scale: alpha*x, relu, silu) into a new tensor (or ``out``)."""
    torch = T.torch()
    name = T.check_tensor(x, "transform", DTYPES)
    if op not in OPERATORS:
        raise ValueError(f"{T.API}.transform: unknown op `{op}` (one of {', '.join(OPERATORS)})")
    k = T.kernels(kernels)
    out = torch.empty_like(x) if out is None else out
    T.check_out(out, x, x.numel(), "transform")
    with torch.cuda.device(x.device):
        k.call(
            "muh_transform",
            OPERATORS[op],
            DT.CODE[name],
            x.data_ptr(),
            out.data_ptr(),
            x.numel(),
            float(alpha),
            T.stream(x),
        )
    return out


RECORD = record(
    __name__,
    doc="element-wise map: scale, relu, silu (DeviceTransform)",
    tunable=("threads", "bytes_in_flight"),
    api=cfuncs("""
int muh_transform(int op, int dtype, const void* in, void* out, long long n, float alpha, void* stream);
"""),
    warp_bound=False,
    op=None,
    static=("transform.cuh",),
    harness=Harness(),
    python_ops={"transform": transform},
)
