"""rms_norm: the policy of the LLM row ops (one block per row): rms_norm, fused_add_rms_norm,
GemmaRMSNorm, the head-wise and the gated norm (``muh_op_norm``), and softmax.

Its numbers become the row half of the ops' ``Policy<T, B>`` (include/muh/ops/ops.cuh, rendered by
muh/codegen/ops); a spec without an ``algorithm rms_norm`` derives them from its reduce policy
(muh/derive/ops.py). Size buckets count an op's rows × hidden (its element count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from muh.families.base import Harness, param, record, vec_of
from muh.runtime import c_api
from muh.runtime import dtypes as DT

# Row values a thread caches in registers before the kernel falls back to re-reading the row: at most
# 32 floats, and at most a quarter of a thread's share of a 64 Ki-register file at the row block.
REGISTER_FLOATS = 32
REGISTER_FILE = 65536  # 32-bit registers per SM (sm_50 .. sm_90)
MAX_BLOCK = 1024  # CUDA's threads per block
HIDDENS = (2048, 4096, 8192)  # the tune harness's row lengths (the served models' hidden sizes)


@dataclass(frozen=True)
class Policy:
    """The policy of an LLM ops family (rms_norm's rows, silu_and_mul's element-wise tiles)."""

    threads: int  # the block (an upper bound: a short row takes fewer)
    items: int = 1  # vectors per thread (rms_norm: before another warp is added)
    vec: Optional[int] = None  # elements per vector load (None: 16 B worth)


def read(get) -> Policy:
    vec = get("vec", None)
    return Policy(int(get("threads")), int(get("items", 1)), None if vec is None else int(vec))


def pow2_floor(n: int) -> int:
    return 1 << (max(1, int(n)).bit_length() - 1)


def load_elems(dtype: str, vec: Optional[int]) -> tuple[int, str]:
    """(elements per vector load, rule): ``vec`` (a power of two) capped at 16-byte loads."""
    cap = vec_of(dtype)
    if vec is None:
        return cap, "16 B / element size"
    return min(pow2_floor(vec), cap), "pow2_floor(vec), ≤ 16 B / element size"


def max_items(threads: int, vec: int) -> tuple[int, str]:
    """(vectors a thread caches in registers, rule) at a row block of ``threads``."""
    cache = min(REGISTER_FLOATS, REGISTER_FILE // (4 * threads))
    return pow2_floor(max(1, cache // vec)), "pow2_floor(min(32, register_file / (4 × row_threads)) / vec)"


def params(cfg, dtype: str, pol: Policy):
    v, vrule = load_elems(dtype, pol.vec)
    m, mrule = max_items(pol.threads, v)
    return [
        param("kRowThreads", pol.threads, "policy threads"),
        param("kVec", v, vrule, **({"vec": pol.vec} if pol.vec else {}), element_size=DT.SIZE[dtype]),
        param("kItemsMin", pol.items, "policy items"),
        param("kMaxItems", m, mrule, register_file=REGISTER_FILE, row_threads=pol.threads, vec=v),
    ]


def policy_checks(family: str, dtype: str, pol, items_max: Optional[int] = None, items_why: str = "") -> list[str]:
    """The checks every ops policy family shares: a block CUDA can launch, a power-of-two vector, items
    at least 1 (and at most ``items_max`` where the family holds them in registers)."""
    errs = []
    if not 1 <= pol.threads <= MAX_BLOCK:
        errs.append(f"{family}.{dtype}: threads={pol.threads} is not 1..{MAX_BLOCK}")
    if pol.vec is not None and (pol.vec < 1 or pol.vec & (pol.vec - 1)):
        errs.append(f"{family}.{dtype}: vec={pol.vec} is not a power of two")
    if items_max is None and pol.items < 1:
        errs.append(f"{family}.{dtype}: items={pol.items} must be at least 1")
    if items_max is not None and not 1 <= pol.items <= items_max:
        errs.append(f"{family}.{dtype}: items={pol.items} is not 1..{items_max}{items_why}")
    return errs


def harness() -> Harness:
    """The tune harness of an ops family: rows of every hidden size in HIDDENS."""
    return Harness(
        shape=HIDDENS,
        variables=lambda shape: {"hiddens": list(shape)},
        check_sizes=lambda shape: (5 * max(shape), min(shape)),
    )


def ops_record(module: str, doc: str, entry: str):
    """The record of an LLM ops policy family (registry.OPS; pass ``__name__``): the ops' element types,
    threads x items x vec tuned through the ops' C function ``entry``, the rows-of-HIDDENS harness."""
    return record(
        module,
        doc=doc,
        dtypes=DT.OPS,
        tunable=("threads", "items", "vec"),
        api=c_api.ops(entry),
        op=None,
        harness=harness(),
    )


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    return policy_checks("rms_norm", dtype, pol)


RECORD = ops_record(
    __name__,
    "LLM row ops, one block per row: rms_norm and its fused, Gemma, head-wise and gated forms, softmax",
    "muh_op_norm",
)
